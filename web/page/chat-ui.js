// The chat UI, mountable into any root: the page (document) or a <reckon-chat>
// widget's shadow root. Elements are found by id within that root only, so several
// widgets on one page never touch each other's elements.
import { el, byId, errorText, saveFile, showStartup } from "./render.js";
import { attachControl } from "./control-ui.js";
import { Turn, modelLabel, zoomFigure } from "./chat-turn.js";
import { renderWelcome, exampleQuestions, questionButtons, welcomeModel } from "./chat-welcome.js";
import { modelPicker } from "./chat-models.js";
import { fileLists } from "./chat-files.js";
import { personalDataFlag } from "./privacy-flag.js";
import { chatMarkup } from "./chat-markup.js";
import { wireTools, submitOnEnter } from "./chat-tools.js";
import { conversationList } from "./chat-conversations.js";

export { chatMarkup };

/**
 * @typedef {import("./chat-turn.js").Outcome} Outcome
 * @typedef {import("./chat-turn.js").Step} Step
 * @typedef {import("./chat-turn.js").Waiting} Waiting
 * @typedef {import("./chat-files.js").FileInfo} FileInfo
 * @typedef {import("./render.js").Find} Find
 */
/** An ask of a saved conversation, as restore() gives it back (PROTOCOL.md §4, the transcript).
 * @typedef {Outcome & {question: string, model?: string}} SavedAsk */
/** The `restored` event: the saved asks, how many cells the log has, and a question a
 * reload cut off.
 * @typedef {{asks: SavedAsk[], cells: number, interrupted?: {question?: string} | null}} Restored */

/**
 * Wire the chat UI in `root` to a createReckon() object. The markup is added when the
 * root does not have it yet (into <body> for a document, into `container` or a new
 * `div.reckon-chat` for a shadow root).
 * @param {Document | ShadowRoot} root
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{page?: boolean, model?: string | null, container?: HTMLElement,
 *          onToken?: (token: string) => void, fileName?: string}} [options]
 * `model` preselects a model (an id, or a profile name: the first of its models);
 * `onToken` is called with a relay token the person typed (default: keep it for this
 * tab and reload); `fileName` is the stem of exported files.
 */
export function mountChat(root, reckon, options = {}) {
  const isDocument = root instanceof Document;
  if (!root.getElementById("messages")) {
    const container = options.container || (isDocument ? root.body : root.appendChild(el("div", "reckon-chat")));
    container.appendChild(chatMarkup({ page: options.page !== false }));
  }
  /** @type {Find} an element of the chat's own template, by id */
  const $ = (id, kind) => byId(root, id, kind);
  const widget = $("messages").closest(".reckon-chat");
  const box = isDocument ? root.body : options.container || (widget instanceof HTMLElement ? widget : $("drop"));
  const dropZone = box;
  const onToken =
    options.onToken ||
    (/** @param {string} token */ (token) => {
      sessionStorage.setItem("reckon-token", token);
      location.reload();
    });
  const status = $("status");
  const messages = $("messages");
  let busy = false;
  /** @param {string} text */
  const setStatus = (text) => {
    status.textContent = text;
    status.title = text;
  };

  // The page scrolls as a whole; the widget scrolls its <main>. Neither there (a
  // document without a body yet): nothing scrolls.
  const scroller = () => (isDocument ? root.scrollingElement : root.querySelector("main"));
  const nearEnd = () => {
    const s = scroller();
    return !s || s.scrollHeight - s.scrollTop - s.clientHeight < 160;
  };
  const toEnd = () => {
    const s = scroller();
    if (s) s.scrollTop = s.scrollHeight;
  };
  /** The newest answer in view: its start when it is taller than the window, else all of it.
   * @param {HTMLElement} node */
  const reveal = (node) => {
    const s = scroller();
    if (s && node.offsetHeight > s.clientHeight * 0.7) node.scrollIntoView({ block: "start" });
    else toEnd();
  };

  const refreshFiles = () => files.refresh();
  const showNotice = showStartup(reckon, { $, setStatus, kept: "your files are kept", onReady: refreshFiles, onFilesChanged: refreshFiles });
  /** @param {string} path */
  const save = (path) => saveFile(reckon, path);


  // The first screen while the conversation is empty; example questions after an upload.
  const welcome = renderWelcome({ onAsk: (q) => ask(q), onPick: () => $("upload").click() });
  messages.before(welcome);
  const conversationEmpty = () => !messages.firstElementChild;
  new MutationObserver(() => (welcome.hidden = !conversationEmpty())).observe(messages, { childList: true });
  /** @param {FileInfo} info */
  function suggest(info) {
    const questions = exampleQuestions(info);
    const strip = $("suggestions");
    strip.replaceChildren(el("span", "muted small", `Try, about ${info.name}:`), questionButtons(questions, (q) => ask(q)));
    strip.hidden = false;
  }
  const flagPersonal = personalDataFlag(reckon, { before: $("suggestions"), settings: $("settings", HTMLDetailsElement) });
  const files = fileLists(reckon, {
    lists: [["/data", $("file-list")], ["/output", $("output-list")]],
    save,
    setStatus,
    onUpload: (info) => {
      suggest(info);
      flagPersonal(info);
    },
    // After a reload into an empty conversation: questions about the newest saved table.
    onFound: (info) => {
      if (!conversationEmpty() || info.kind !== "table") return;
      const shown = $("suggestions").dataset.mtime;
      if (!shown || Number(info.mtime) > Number(shown)) {
        suggest(info);
        $("suggestions").dataset.mtime = String(info.mtime || 0);
      }
    },
  });
  // Someone about to ask (typing, or adding a file to ask about): start the agent's
  // interpreter now, so the first ask does not wait for it. A visit that asks nothing
  // never spends the seconds of CPU it costs (README "Fast starts").
  const warmAgent = () => reckon.agent.ready().catch(() => {}); // an ask reports a failure
  for (const type of ["focus", "input"]) $("question").addEventListener(type, warmAgent, { once: true });
  const picker = $("upload", HTMLInputElement);
  picker.addEventListener("change", () => {
    warmAgent();
    files.upload([...(picker.files || [])]);
    picker.value = "";
  });
  dropZone.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    dropZone.classList.add("dragging");
  });
  dropZone.addEventListener("dragleave", () => dropZone.classList.remove("dragging"));
  dropZone.addEventListener("drop", (ev) => {
    ev.preventDefault();
    dropZone.classList.remove("dragging");
    warmAgent();
    files.upload([...(ev.dataTransfer ? ev.dataTransfer.files : [])]);
  });

  // On a phone the side panel shows the files; the rest opens with this toggle.
  /** @param {boolean} [open] open or close (default: the other way) */
  const toggleTools = (open) => {
    const aside = $("drop");
    const next = open ?? !aside.classList.contains("open");
    aside.classList.toggle("open", next);
    $("tools-toggle").setAttribute("aria-expanded", String(next));
  };
  $("tools-toggle").addEventListener("click", () => toggleTools());

  // A reload: show the saved conversation, and offer to rebuild the variables (a
  // fresh interpreter has none; the saved cells can make them again).
  reckon.on("restored", /** @param {Restored} restored */ ({ asks, cells, interrupted }) => {
    showAsks(asks);
    if (cells > 0) {
      const button = $("rebuild");
      button.textContent = `Rebuild variables (${cells} cell${cells === 1 ? "" : "s"})`;
      button.hidden = false;
    }
    if (interrupted && interrupted.question) showInterrupted(interrupted.question);
    const last = messages.lastElementChild;
    if (last instanceof HTMLElement) requestAnimationFrame(() => reveal(last.querySelector(".answer") || last));
  });
  /** A saved conversation's asks, as they were shown. @param {SavedAsk[]} asks */
  function showAsks(asks) {
    asks.forEach((saved, index) => {
      const shown = startTurn(saved.question, saved.model, { restoring: true });
      for (const step of saved.steps || []) shown.addStep(step);
      showOutcome(saved, index);
    });
  }
  // Another conversation opened (from the list or the JS API; its cells were replayed),
  // or a new one started: show it instead.
  reckon.on("conversation", /** @param {{asks: SavedAsk[]}} shown */ ({ asks }) => {
    if (turn) turn.stopWaiting();
    turn = null;
    typed = null;
    messages.replaceChildren();
    $("rebuild").hidden = true;
    $("suggestions").hidden = true;
    showAsks(asks);
    const last = messages.lastElementChild;
    if (last instanceof HTMLElement) requestAnimationFrame(() => reveal(last.querySelector(".answer") || last));
    else {
      const newest = [...files.infos.values()].filter((i) => i.kind === "table").pop();
      if (newest) suggest(newest);
    }
    files.refresh();
  });
  /** A question that a reload cut off: say so, and offer to ask it again.
   * @param {string} question */
  function showInterrupted(question) {
    const note = el("div", "note interrupted");
    note.appendChild(el("p", "", "This question was still being answered when the page was reloaded:"));
    note.appendChild(el("blockquote", "", question));
    const again = el("button", "primary", "Ask it again");
    again.type = "button";
    const forget = el("button", "", "Forget it");
    forget.type = "button";
    const done = () => {
      note.remove();
      if (reckon.persist && reckon.persist.clearPending) reckon.persist.clearPending();
    };
    again.addEventListener("click", () => {
      done();
      ask(question);
    });
    forget.addEventListener("click", done);
    note.appendChild(el("div", "actions")).append(again, forget);
    messages.appendChild(note);
  }
  $("rebuild").addEventListener("click", async () => {
    const button = $("rebuild", HTMLButtonElement);
    button.disabled = true;
    setStatus("re-running the saved cells…");
    const { replayed, failed } = await reckon.replay();
    setStatus(`${replayed} cell${replayed === 1 ? "" : "s"} replayed${failed ? `, ${failed} failed` : ""}: your variables are back`);
    button.hidden = true;
    button.disabled = false;
    files.refresh();
  });

  // The model: chosen in Settings, named in the header and under each answer.
  const models = modelPicker(reckon, {
    select: $("model", HTMLSelectElement),
    list: $("model-list"),
    note: $("model-note"),
    wanted: options.model || "",
    showNotice,
    onChange: (name) => {
      $("model-name").textContent = name;
      $("demo-note").hidden = name !== "reckon-demo";
      welcomeModel(welcome, name);
    },
  });
  models.ready.then(({ authRequired }) => {
    if (!authRequired) return;
    $("token-form").hidden = false;
    $("token-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      onToken($("token", HTMLInputElement).value.trim());
    });
  });
  $("model-chip").addEventListener("click", () => {
    toggleTools(true);
    $("settings", HTMLDetailsElement).open = true;
    $("model").scrollIntoView({ block: "nearest" });
    $("model").focus();
  });

  // The turn being shown: question, then steps as they finish, then the answer.
  /** @type {Turn | null} */
  let turn = null;
  // Approval cards go where the steps go; answers get a usage line, the
  // verification badge and "What was sent".
  const control = attachControl(reckon, {
    onCard: (card) => {
      if (turn) turn.stopWaiting();
      (turn ? turn.steps : messages).appendChild(card);
      card.scrollIntoView({ block: "nearest" });
    },
  });
  $("settings").appendChild(control.settingsPanel());
  // A question typed here shows at once (the agent may still be starting); the
  // agent's `ask` event then adopts that turn. Asks made through the JS API get
  // their turn from the event.
  /** @type {Turn | null} */
  let typed = null;
  reckon.on("ask", /** @param {{question: string, model?: string}} detail */ ({ question, model }) => {
    if (typed && turn === typed && typed.question === question) {
      typed.model = model || typed.model;
      typed.waitFor("reading the prompt");
    } else startTurn(question, model);
    typed = null;
    $("suggestions").hidden = true;
    toEnd();
  });
  /** @param {string} question @param {string} [model] @param {{restoring?: boolean}} [options] */
  function startTurn(question, model, { restoring = false } = {}) {
    if (turn) turn.stopWaiting();
    const started = new Turn({ question, model, save });
    turn = started;
    messages.appendChild(started.element);
    if (!restoring) started.waitFor("reading the prompt");
    return started;
  }
  // Before each model call the agent says how big the prompt is (agent-client's
  // `waiting` event; reckon.on() does not forward it, so it is taken from the agent).
  if (reckon.agent && typeof reckon.agent.addEventListener === "function") {
    reckon.agent.addEventListener("waiting", (ev) => turn && turn.calling(/** @type {CustomEvent<Waiting | null>} */ (ev).detail || {}));
  }
  /** Add to the turn; a reader at the end stays at the end. @param {(turn: Turn) => void} add */
  const grow = (add) => {
    if (!turn) return;
    const stick = nearEnd();
    add(turn);
    if (stick) toEnd();
  };
  reckon.on("delta", /** @param {{text: string}} detail */ ({ text }) => grow((shown) => shown.delta(text)));
  reckon.on("step", /** @param {{step: Step}} detail */ ({ step }) => {
    if (!turn) return;
    grow((shown) => shown.addStep(step));
    files.refresh();
  });

  // Answers are shown from events, so asks made through the JS API show up too.
  /** @param {Outcome} outcome @param {number} [index] the saved ask's (a restored one) */
  function showOutcome(outcome, index) {
    if (!turn) return null;
    const answer = turn.finish(outcome, control.answerFooter(outcome, index));
    turn = null;
    return answer;
  }
  for (const type of ["answer", "ask-error"]) {
    reckon.on(type, /** @param {Outcome} outcome */ (outcome) => {
      const answer = showOutcome(outcome);
      if (outcome.status === "ok") models.ok(outcome.model);
      else if (!(outcome.steps || []).some((s) => s.kind === "code")) models.failed(outcome.model, outcome.message);
      if (answer) reveal(answer);
      files.refresh();
    });
  }

  // Click (or Enter on) a chart: see it large.
  /** @param {Event} ev @returns {HTMLImageElement | null} the chart the event is on */
  const figureOf = (ev) => (ev.target instanceof Element ? ev.target.closest("img.figure") : null);
  messages.addEventListener("click", (ev) => {
    const img = figureOf(ev);
    if (img) zoomFigure(img, box);
  });
  messages.addEventListener("keydown", (ev) => {
    const img = figureOf(ev);
    if (img && (ev.key === "Enter" || ev.key === " ")) {
      ev.preventDefault();
      zoomFigure(img, box);
    }
  });

  /** @param {string} question */
  async function ask(question) {
    if (busy) return;
    busy = true;
    $("ask", HTMLButtonElement).disabled = true;
    $("stop", HTMLButtonElement).disabled = false;
    const model = $("model", HTMLSelectElement).value;
    setStatus(`asking ${modelLabel(model)}…`);
    typed = startTurn(question, model);
    typed.waitFor("Starting the agent", { model: false });
    $("suggestions").hidden = true;
    toEnd();
    const started = performance.now();
    try {
      const outcome = await reckon.ask(question, { model: model || undefined });
      // Ended before the agent took it (e.g. closed): no events came, so answer here.
      // (The outcome's steps are the steps its events carried: Step, as the page reads them.)
      if (turn && turn === typed) showOutcome(/** @type {Outcome} */ (outcome));
      const took = ((performance.now() - started) / 1000).toFixed(1);
      setStatus(outcome.status === "ok" ? `answered by ${outcome.model || model} in ${took} s` : `${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}`);
    } catch (err) {
      // Not an answer that failed (those are outcomes): the agent itself is not there.
      const why = `Could not ask: ${errorText(err)}`;
      setStatus("could not ask");
      showNotice(why);
      if (turn && turn === typed) showOutcome({ status: "error", answer: "", message: why, steps: [] });
    }
    typed = null;
    busy = false;
    $("ask", HTMLButtonElement).disabled = false;
    $("stop", HTMLButtonElement).disabled = true;
    files.refresh();
  }

  const questionBox = $("question", HTMLTextAreaElement);
  const askForm = $("ask-form", HTMLFormElement);
  askForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const question = questionBox.value.trim();
    if (!question || busy) return;
    questionBox.value = "";
    ask(question);
  });
  submitOnEnter(questionBox, askForm);
  $("stop").addEventListener("click", () => reckon.stop());
  // Esc stops the ask under way (not while a chart is open large: Esc closes that).
  box.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || !busy || root.querySelector("dialog[open]")) return;
    ev.preventDefault();
    reckon.stop();
    setStatus("stopping…");
  });
  $("new-session").addEventListener("click", async () => {
    const reply = await reckon.newConversation(); // its `conversation` event clears the view
    setStatus(reply.status === "ok" ? "new conversation: your files and variables are kept; the last one is in the list" : reply.message || "");
  });
  const conversations = conversationList(reckon, { $, setStatus, busy: () => busy });
  $("delete-all").addEventListener("click", async () => {
    if (!confirm("Delete every file and every conversation from this browser, and restart Python?")) return;
    setStatus("deleting…");
    await reckon.clearAll();
    files.forget();
    messages.replaceChildren();
    $("suggestions").hidden = true;
    $("rebuild").hidden = true;
    setStatus("everything was deleted");
    files.refresh();
    conversations.refresh();
  });

  // Export, import and SQL: the same JS API calls a script would make.
  const stem = options.fileName || "reckon-session";
  wireTools(reckon, { $, messages, save, setStatus, showNotice, reveal, refresh: refreshFiles, stem });

  return { root, refreshFiles, showNotice };
}
