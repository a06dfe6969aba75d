// The chat UI, mountable into any root: the page (document) or a <reckon-chat>
// widget's shadow root. Elements are found by id within that root only, so several
// widgets on one page never touch each other's elements.
import { el, byId, saveFile, showStartup } from "./render.js";
import { attachControl } from "./control-ui.js";
import { zoomFigure } from "./chat-turn.js";
import { renderWelcome, exampleQuestions, questionButtons, welcomeModel } from "./chat-welcome.js";
import { modelPicker } from "./chat-models.js";
import { fileLists } from "./chat-files.js";
import { personalDataFlag } from "./privacy-flag.js";
import { chatMarkup } from "./chat-markup.js";
import { wireTools } from "./chat-tools.js";
import { conversationList } from "./chat-conversations.js";
import { followToolCalls } from "./chat-tool-calls.js";
import { scrolling } from "./chat-scroll.js";
import { Turns, followAgent } from "./chat-live.js";
import { showSaved } from "./chat-restore.js";
import { askForm } from "./chat-ask.js";

export { chatMarkup };

/**
 * @typedef {import("./chat-files.js").FileInfo} FileInfo
 * @typedef {import("./render.js").Find} Find
 */

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
  /** @param {string} text */
  const setStatus = (text) => {
    status.textContent = text;
    status.title = text;
  };

  const { nearEnd, toEnd, reveal } = scrolling(root);

  const refreshFiles = () => files.refresh();
  const showNotice = showStartup(reckon, { $, setStatus, kept: "your files are kept", onReady: refreshFiles, onFilesChanged: refreshFiles });
  /** @param {string} path */
  const save = (path) => saveFile(reckon, path);

  // The first screen while the conversation is empty; example questions after an upload.
  const welcome = renderWelcome({ onAsk: (q) => asking.ask(q), onPick: () => $("upload").click() });
  messages.before(welcome);
  const conversationEmpty = () => !messages.firstElementChild;
  new MutationObserver(() => (welcome.hidden = !conversationEmpty())).observe(messages, { childList: true });
  /** @param {FileInfo} info */
  function suggest(info) {
    const questions = exampleQuestions(info);
    const strip = $("suggestions");
    strip.replaceChildren(el("span", "muted small", `Try, about ${info.name}:`), questionButtons(questions, (q) => asking.ask(q)));
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

  // Approval cards go where the steps go; answers get a usage line, the
  // verification badge and "What was sent".
  const turns = new Turns({ messages, save, footer: (outcome, index) => control.answerFooter(outcome, index) });
  const control = attachControl(reckon, {
    onCard: (card) => {
      const turn = turns.current;
      if (turn) turn.stopWaiting();
      (turn ? turn.steps : messages).appendChild(card);
      card.scrollIntoView({ block: "nearest" });
    },
  });
  // Host tools' calls and approval rows go where the steps go, as the cards do.
  followToolCalls(reckon, (row) => {
    const turn = turns.current;
    (turn ? turn.steps : messages).appendChild(row);
    row.scrollIntoView({ block: "nearest" });
  });
  $("settings").appendChild(control.settingsPanel());
  followAgent(reckon, { turns, $, scroll: { nearEnd, toEnd, reveal }, refresh: refreshFiles, models });
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

  const asking = askForm(reckon, { root, box, $, turns, setStatus, showNotice, toEnd, refresh: refreshFiles });
  const saved = showSaved(reckon, { $, messages, turns, setStatus, reveal, ask: asking.ask, suggest, files });
  $("new-session").addEventListener("click", async () => {
    const reply = await reckon.newConversation(); // its `conversation` event clears the view
    setStatus(reply.status === "ok" ? "new conversation: your files and variables are kept; the last one is in the list" : reply.message || "");
  });
  const conversations = conversationList(reckon, { $, setStatus, busy: asking.busy });
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
  wireTools(reckon, { $, messages, save, setStatus, showNotice, reveal, refresh: refreshFiles, stem, showAsks: saved.showLatest });

  return { root, refreshFiles, showNotice };
}
