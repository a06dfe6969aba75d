// The person in charge: proposal cards (run / edit / reject), "what was sent" with
// the parts from the user's files marked, the token line, the verification badge
// and the settings controls. Plain DOM builders for the chat UI to place; every
// text goes in as textContent (model and file text is never markup).
// Styles: the .rc-* rules in style.css (the page and the widget's shadow root load it).

/** The shapes read here (PROTOCOL.md §4: the `proposal` event, `decide`, `<usage>`,
 * `verification`, a transcript ask's `sent`, `configure`'s settings).
 * @typedef {{id: string | number, code: string, tool?: string}} Proposal
 * @typedef {{action: "run"} | {action: "edit", code: string} | {action: "reject", reason: string}} Decision
 * @typedef {{prompt_tokens?: number, completion_tokens?: number, total_tokens?: number, estimated?: boolean, calls?: number}} Usage
 * @typedef {{code?: string[], answer?: string}} Computation
 * @typedef {{status: string, recomputed?: Record<string, unknown>, message?: string, original?: Computation, check?: Computation}} Verification
 * @typedef {{message: number, start: number, end: number, source: string, kind: string}} SentPart
 * @typedef {{role: string, content?: unknown, tool_calls?: Array<{function?: {name?: string, arguments?: string}}>}} SentMessage
 * @typedef {{body?: {messages?: SentMessage[]}, parts?: SentPart[], usage?: Usage, offline?: boolean}} SentRecord
 * @typedef {{approval?: string, privacy?: string, allowColumns?: string[], tokenBudget?: number | null, verify?: boolean}} Settings
 * @typedef {{status: string, message?: string}} Reply
 */

/**
 * An element with attributes (`class`, `on<event>` handlers, the rest as attributes)
 * and children (null and undefined are left out).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, string | EventListener>} [attrs]
 * @param {...(Node | string | null | undefined)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
};

/**
 * A card for a `proposal` event ({id, code, tool}): Run, Edit (the code becomes
 * editable; Run edited sends it), Reject (with a reason). `decide(decision)` is
 * e.g. `(d) => reckon.decide(proposal.id, d)`; the card shows what was chosen.
 * @param {Proposal} proposal @param {(decision: Decision) => Promise<Reply | null | undefined>} decide
 */
export function renderProposal(proposal, decide) {
  const code = el("textarea", { class: "rc-code", rows: String(Math.min(18, String(proposal.code).split("\n").length + 1)), spellcheck: "false", "aria-label": "Proposed code" });
  code.value = String(proposal.code);
  code.readOnly = true;
  const reason = el("input", { class: "rc-reason", type: "text", placeholder: "Why not? (sent to the model)", "aria-label": "Reason for rejecting" });
  reason.hidden = true;
  const status = el("div", { class: "rc-status", role: "status" });
  const card = el("div", { class: "rc-proposal", "data-proposal": String(proposal.id) },
    el("div", { class: "rc-title" }, `The model wants to run this (${proposal.tool === "run_sql" ? "SQL" : "Python"}):`), code, reason, status);
  const buttons = el("div", { class: "rc-actions" });
  /** @param {Decision} decision @param {string} label what the card then says */
  const send = async (decision, label) => {
    for (const button of buttons.querySelectorAll("button")) button.disabled = true;
    code.readOnly = true;
    reason.disabled = true;
    const reply = await decide(decision);
    if (reply && reply.status === "error") {
      status.textContent = reply.message || "The decision was not accepted.";
      for (const button of buttons.querySelectorAll("button")) button.disabled = false;
      return;
    }
    card.dataset.decision = decision.action;
    status.textContent = label;
    buttons.remove();
  };
  const run = el("button", { type: "button", class: "rc-run", onclick: () => {
    const edited = code.value !== String(proposal.code);
    if (edited) send({ action: "edit", code: code.value }, "Ran your edited version; the model was told.");
    else send({ action: "run" }, "Approved.");
  } }, "Run");
  const edit = el("button", { type: "button", class: "rc-edit", onclick: () => {
    code.readOnly = false;
    code.focus();
    run.textContent = "Run edited";
  } }, "Edit");
  const reject = el("button", { type: "button", class: "rc-reject", onclick: () => {
    if (reason.hidden) {
      reason.hidden = false;
      reason.focus();
      reject.textContent = "Reject with this reason";
      return;
    }
    send({ action: "reject", reason: reason.value.trim() }, "Rejected; the reason went to the model.");
  } }, "Reject");
  buttons.append(run, edit, reject);
  card.append(buttons);
  return card;
}

/** @param {number | undefined} n */
const count = (n) => Number(n || 0).toLocaleString("en-US");

/** One line: "≈1,234 tokens (1,000 in, 234 out) · session ≈5,678" (≈ when estimated).
 * @param {Usage | null | undefined} usage @param {Usage | null} [sessionUsage] */
export function usageText(usage, sessionUsage) {
  if (!usage) return "";
  /** @param {Usage} u */
  const mark = (u) => (u && u.estimated ? "≈" : "");
  let text = `${mark(usage)}${count(usage.total_tokens)} tokens (${count(usage.prompt_tokens)} in, ${count(usage.completion_tokens)} out)`;
  if (sessionUsage) text += ` · session ${mark(sessionUsage)}${count(sessionUsage.total_tokens)}`;
  if (usage.estimated) text += " · estimated";
  return text;
}

/** @param {Usage | null | undefined} usage @param {Usage | null} [sessionUsage] */
export function renderUsage(usage, sessionUsage) {
  return el("div", { class: "rc-usage", title: usage && usage.estimated ? "The upstream did not report usage: counted at about four characters a token." : "As reported by the model server." }, usageText(usage, sessionUsage));
}

/** @type {Record<string, string>} */
const VERDICTS = { confirmed: "Checked: confirmed", disagrees: "Checked: disagrees", unavailable: "Not checked" };

/** A badge for `verification`; disagreements open with both computations.
 * @param {Verification | null | undefined} verification */
export function renderVerification(verification) {
  if (!verification) return null;
  const status = String(verification.status);
  const badge = el("summary", { class: `rc-badge rc-${status}` }, VERDICTS[status] || status);
  const details = el("details", { class: "rc-verification" }, badge);
  if (status === "disagrees") details.open = true;
  /** @param {Record<string, unknown> | undefined} obj */
  const values = (obj) => Object.entries(obj || {}).map(([k, v]) => `${k} = ${v}`).join(", ");
  if (verification.message) details.append(el("p", {}, verification.message));
  if (verification.recomputed) details.append(el("p", {}, `Recomputed: ${values(verification.recomputed) || "nothing"}`));
  /** @type {Array<[string, Computation | undefined]>} */
  const computations = [["The answer's computation", verification.original], ["The check (a different route)", verification.check]];
  for (const [label, part] of computations) {
    if (!part) continue;
    details.append(el("div", { class: "rc-label" }, label));
    for (const code of part.code || []) details.append(el("pre", { class: "rc-pre" }, code));
    if (part.answer) details.append(el("p", { class: "rc-said" }, part.answer));
  }
  return details;
}

/** Message text split into plain and file-derived (<mark>) runs, from `parts` spans.
 * @param {string} text @param {SentPart[]} spans */
function markedContent(text, spans) {
  const box = el("pre", { class: "rc-pre" });
  let at = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    if (span.start < at) continue;
    box.append(text.slice(at, span.start));
    box.append(el("mark", { class: "rc-from-file", "data-kind": span.kind, title: `From your files (${span.kind})` }, text.slice(span.start, span.end)));
    at = span.end;
  }
  box.append(text.slice(at));
  return box;
}

/**
 * "What was sent" for one answer: `records` is an ask's `sent` list (reckon.sent()).
 * Each request shows its messages as they left, file-derived parts marked.
 * @param {SentRecord[] | null | undefined} records
 */
export function renderSent(records) {
  const root = el("div", { class: "rc-sent" });
  if (!records || !records.length) {
    root.append(el("p", {}, "Nothing was sent to a model for this answer."));
    return root;
  }
  records.forEach((record, number) => {
    const messages = (record.body && record.body.messages) || [];
    const fromFiles = (record.parts || []).filter((p) => p.source === "file");
    const title = `Request ${number + 1}: ${messages.length} messages${fromFiles.length ? `, ${fromFiles.length} part(s) from your files` : ""}${record.offline ? " (offline demo model: nothing left the browser)" : ""}`;
    const box = el("details", { class: "rc-request" }, el("summary", {}, title));
    if (record.usage) box.append(renderUsage(record.usage));
    messages.forEach((message, index) => {
      const spans = fromFiles.filter((p) => p.message === index);
      const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? message.tool_calls ?? "");
      const calls = message.tool_calls ? message.tool_calls.map((c) => `${c.function && c.function.name}(${c.function && c.function.arguments})`).join("\n") : "";
      box.append(el("div", { class: "rc-role" }, message.role), markedContent(text || calls, text ? spans : []));
      if (text && calls) box.append(el("pre", { class: "rc-pre" }, calls));
    });
    root.append(box);
  });
  return root;
}

/**
 * Settings controls. `settings` holds {approval, privacy, allowColumns, tokenBudget,
 * verify}; `onChange(next)` gets the whole new object (settings apply to a new session:
 * createReckon({settings})).
 * @param {Settings | null | undefined} settings @param {(next: Settings) => void} onChange
 */
export function renderSettings(settings, onChange) {
  const given = settings || {};
  /** @type {{approval: string, privacy: string, allowColumns: string[], tokenBudget: number | null, verify: boolean}} */
  const current = {
    approval: given.approval === "ask" ? "ask" : "auto",
    privacy: given.privacy === "schema" ? "schema" : "full",
    allowColumns: Array.isArray(given.allowColumns) ? given.allowColumns : [],
    tokenBudget: given.tokenBudget ?? null,
    verify: given.verify === true,
  };
  // Only the settings configure() changes (not timeoutMs and the like).
  const changed = () => onChange({ approval: current.approval, privacy: current.privacy, allowColumns: current.allowColumns, tokenBudget: current.tokenBudget, verify: current.verify });
  /** @param {"approval" | "privacy"} name @param {Array<[string, string]>} options value and text @param {string} label */
  const select = (name, options, label) => {
    const node = el("select", { name }, ...options.map(([value, text]) => el("option", { value }, text)));
    node.addEventListener("change", () => {
      current[name] = node.value;
      changed();
    });
    node.value = current[name];
    return el("label", { class: "rc-setting" }, label, " ", node);
  };
  const columns = el("input", { type: "text", name: "allowColumns", placeholder: "columns whose values may be sent" });
  columns.addEventListener("change", () => {
    current.allowColumns = columns.value.split(",").map((s) => s.trim()).filter(Boolean);
    changed();
  });
  columns.value = current.allowColumns.join(", ");
  const budget = el("input", { type: "number", min: "1", step: "1000", name: "tokenBudget", placeholder: "no limit" });
  budget.addEventListener("change", () => {
    const n = Number(budget.value);
    current.tokenBudget = budget.value && n >= 1 ? Math.floor(n) : null;
    changed();
  });
  if (current.tokenBudget) budget.value = String(current.tokenBudget);
  const verify = el("input", { type: "checkbox", name: "verify" });
  verify.addEventListener("change", () => {
    current.verify = verify.checked;
    changed();
  });
  verify.checked = Boolean(current.verify);
  return el("fieldset", { class: "rc-settings" }, el("legend", {}, "Control"),
    select("approval", [["auto", "Run code automatically"], ["ask", "Ask me before each run"]], "Code:"),
    select("privacy", [["full", "Send outputs as they are"], ["schema", "Schemas and aggregates only"]], "Privacy:"),
    el("label", { class: "rc-setting" }, "Allowed columns: ", columns),
    el("label", { class: "rc-setting" }, "Token budget: ", budget),
    el("label", { class: "rc-setting" }, verify, " Check each answer by a second route"));
}

/**
 * Wire the pieces to a reckon API object: proposal cards go to `onCard(card, proposal)`
 * (default: appended to `container`). Returns builders for an answer's footer and for
 * the settings panel (which applies changes with reckon.configure()).
 */
/** @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{container?: HTMLElement, onCard?: (card: HTMLElement, proposal: Proposal) => void}} [options] */
export function attachControl(reckon, { container, onCard } = {}) {
  reckon.on("proposal", /** @param {Proposal} proposal */ (proposal) => {
    const card = renderProposal(proposal, (decision) => reckon.decide(proposal.id, decision));
    if (onCard) onCard(card, proposal);
    else if (container) container.append(card);
  });
  return {
    /** Usage line + verification badge + a "What was sent" toggle. Call it when the
     * answer arrives (it then belongs to the latest ask) or pass the ask's `index`. */
    /** @param {import("./chat-turn.js").Outcome} outcome @param {number} [index] */
    answerFooter(outcome, index) {
      // Which ask this is must be fixed now (a later ask would be "latest" by the time
      // someone opens the toggle); the bodies themselves are fetched only when opened.
      const which = index !== undefined ? Promise.resolve(index) : reckon.transcript().then((t) => (t.asks || []).length - 1);
      const records = () =>
        Promise.all([which, reckon.sent()]).then(([i, asks]) => (asks[i] ? asks[i].sent : []));
      const sent = el("details", { class: "rc-sent-toggle" }, el("summary", {}, "What was sent"));
      sent.addEventListener("toggle", async () => {
        if (!sent.open || sent.dataset.loaded) return;
        sent.dataset.loaded = "1";
        sent.append(renderSent(await records()));
      });
      return el("div", { class: "rc-footer" }, renderUsage(outcome.usage, outcome.sessionUsage), renderVerification(outcome.verification), sent);
    },
    /** The settings controls, starting from the agent's settings; a refused change is shown. */
    settingsPanel() {
      const note = el("div", { class: "rc-status", role: "status" });
      const panel = renderSettings((reckon.agent && reckon.agent.settings) || {}, async (next) => {
        const reply = await reckon.configure(next);
        note.textContent = reply.status === "ok" ? "Applies from the next question." : (reply.message ?? "");
      });
      panel.append(note);
      return panel;
    },
  };
}
