// Host tools on the chat page (docs/javascript.md, *Host tools*): each call of a page's
// tool is a row where the steps go (name, arguments, what came back and its size), and
// a tool whose policy asks the person gets an Allow / Deny row. The approval is the
// page's own: the buttons answer `reckon.decideTool(id, ...)` with the id the page made.
import { el } from "./render.js";

const ARGS_SHOWN = 160; // characters of the arguments shown in a row

/** @typedef {import("../shared/protocol.js").ToolCallRecord} ToolRecord */
/** @typedef {{id: string, name: string, args: unknown, policy: string, description: string}} ToolRequest */

/** @param {unknown} args */
function shortArgs(args) {
  const text = JSON.stringify(args ?? {}) || "{}";
  return text.length > ARGS_SHOWN ? `${text.slice(0, ARGS_SHOWN - 1)}…` : text;
}

/** @param {number} bytes */
function size(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The row of one finished call. @param {ToolRecord} record */
export function toolRow(record) {
  const row = el("div", "tool-call");
  row.dataset.status = record.status;
  row.append(el("span", "tool-label", "tool"), el("code", "tool-name", `${record.name}(${shortArgs(record.args)})`));
  const outcome = record.status === "ok" ? `${size(record.size)} back, ${record.ms} ms` : `${record.status}: ${record.message || ""}`;
  row.append(el("span", "tool-outcome", outcome));
  return row;
}

/** The Allow / Deny row of a `tool-request` event.
 * @param {ToolRequest} request @param {(action: "allow" | "deny") => unknown} decide */
export function approvalRow(request, decide) {
  const row = el("div", "tool-approval");
  row.dataset.request = request.id;
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", `Allow the tool ${request.name}?`);
  const text = el("div", "tool-ask");
  text.append("The analysis wants to call ", el("code", "tool-name", `${request.name}(${shortArgs(request.args)})`), `: ${request.description}`);
  const allow = el("button", "tool-allow", request.policy === "once" ? "Allow for this conversation" : "Allow");
  const deny = el("button", "tool-deny", "Deny");
  allow.type = deny.type = "button";
  const buttons = el("div", "tool-buttons");
  buttons.append(allow, deny);
  /** @param {"allow" | "deny"} action */
  const choose = (action) => {
    settle(row, action);
    decide(action);
  };
  allow.addEventListener("click", () => choose("allow"));
  deny.addEventListener("click", () => choose("deny"));
  row.append(text, buttons);
  return row;
}

const SETTLED = { allow: "Allowed", deny: "Denied", ended: "Not answered: its cell ended" };

/** The row once answered: its buttons give way to what was decided.
 * @param {HTMLElement} row @param {"allow" | "deny" | "ended"} decision */
function settle(row, decision) {
  if (row.dataset.decision) return;
  row.dataset.decision = decision;
  const buttons = row.querySelector(".tool-buttons");
  if (buttons) buttons.replaceWith(el("span", "tool-decision", SETTLED[decision]));
}

/**
 * Show `reckon`'s tool calls and approval requests; `place(node)` puts a row where the
 * steps of the running turn go.
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon @param {(node: HTMLElement) => void} place
 */
export function followToolCalls(reckon, place) {
  /** @type {Map<string, HTMLElement>} */
  const waiting = new Map();
  reckon.on("tool", /** @param {ToolRecord} record */ (record) => place(toolRow(record)));
  reckon.on("tool-request", /** @param {ToolRequest} request */ (request) => {
    const row = approvalRow(request, (action) => reckon.decideTool(request.id, { action }));
    waiting.set(request.id, row);
    place(row);
    /** @type {HTMLButtonElement | null} */ (row.querySelector(".tool-allow"))?.focus({ preventScroll: true });
  });
  reckon.on("tool-decided", /** @param {{id: string}} detail */ ({ id }) => {
    const row = waiting.get(id);
    waiting.delete(id);
    if (row) settle(row, "ended");
  });
}
