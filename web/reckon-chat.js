// <reckon-chat>: the whole chat as one element, for any page (docs/javascript.md, "Widget").
//
//   <script type="module" src="https://reckon.example/reckon-chat.js"></script>
//   <reckon-chat relay="https://reckon.example/" model="reckon-demo" height="40rem"
//                theme="dark" session="sales"></reckon-chat>
//
// Everything (the sandbox frame, the workers, the runtime, the stylesheet) is found
// relative to this module's URL, never the host page's, so the site may live on
// another origin than the page (it then needs the CORS headers build.py writes).
// Each element has its own sandbox, agent and conversation. With `session`, its
// files and conversation are kept in this browser, in a database of that name only
// (two elements with the same session share them, as two tabs do); without it,
// nothing is kept and nothing is shared.
import { createReckon } from "./reckon.js";
import { checkedTool } from "./tools.js";
import { mountChat } from "./page/chat-ui.js";
import { errorText } from "./page/render.js";
import { Store } from "./shared/store.js";

const BASE = new URL("./", import.meta.url);
// The same data as createReckon().on(type); re-dispatched on the element.
const EVENTS = ["progress", "ready", "error", "ask", "step", "delta", "waiting", "answer", "ask-error", "restarted", "recovered", "restored", "storage-error", "storage-changed", "conversation", "conversations", "tool", "tool-request", "tool-decided"];
// The JS API methods the element offers itself (element.ask(...) is element.reckon.ask(...)).
const METHODS = [
  "ready", "run", "ask", "stop", "upload", "writeFile", "readFile", "listFiles", "inspect", "deleteFile",
  "interrupt", "restart", "reset", "newConversation", "models", "transcript", "replay", "saved", "restored",
  "clearAll", "exportNotebook", "exportScript", "exportReport", "importNotebook", "runSql", "on",
  "conversations", "openConversation", "renameConversation", "deleteConversation", "restoreConversation",
  "registerTool", "unregisterTool", "decideTool",
];

// Methods after which the widget's file lists are refreshed.
const FILE_CHANGES = new Set(["upload", "writeFile", "deleteFile", "clearAll", "importNotebook", "run", "runSql", "openConversation", "deleteConversation", "restoreConversation"]);

/** @type {Promise<CSSStyleSheet> | null} */
let sheet = null;
/** style.css, fetched once per page and adopted by every element's shadow root. */
function styles() {
  if (!sheet) {
    sheet = fetch(new URL("style.css", BASE))
      .then((resp) => {
        if (!resp.ok) throw new Error(`style.css: HTTP ${resp.status}`);
        return resp.text();
      })
      .then((text) => {
        const css = new CSSStyleSheet();
        css.replaceSync(text);
        return css;
      });
  }
  return sheet;
}

/** Where a relay's token is kept for this tab. @param {string | undefined} relay */
const tokenKey = (relay) => `reckon-token:${new URL(relay || ".", BASE).href}`;

export class ReckonChat extends HTMLElement {
  static observedAttributes = ["height", "theme"];

  /** @type {ReturnType<typeof createReckon> | null} */
  #api = null;
  /** @type {string[]} the tools set through `tools` */
  #lent = [];
  /** @type {ReturnType<typeof mountChat> | null} */
  #ui = null;
  /** @type {HTMLDivElement | null} */
  #box = null;
  #sizing = new CSSStyleSheet();
  /** The element's own shadow root (also `shadowRoot`: it is open). */
  #shadow;

  constructor() {
    super();
    this.#shadow = this.attachShadow({ mode: "open" });
    this.#sizing.replaceSync(":host {}");
    this.#shadow.adoptedStyleSheets = [this.#sizing];
  }

  connectedCallback() {
    this.#start();
  }

  // Taken off the page: shut its sandbox and agent down (hundreds of MB). A move within
  // the page (removed and put back in the same task) keeps them.
  disconnectedCallback() {
    queueMicrotask(() => {
      if (!this.isConnected) this.close();
    });
  }

  /** Shut this element's Reckon down now (as removing it does); put back on a page, it
   * starts a new one. What its `session` saved stays saved. Resolves {status: "ok"}. */
  async close() {
    if (!this.#api) return { status: "ok" };
    const api = this.#api;
    this.#api = null;
    this.#ui = null;
    if (this.#box) this.#box.remove();
    this.#box = null;
    return api.close();
  }

  attributeChangedCallback() {
    this.#applyLook();
  }

  /** The host tools this element lends its sandbox (docs/javascript.md, *Host tools*):
   * setting a list registers each (a bad one throws a TypeError) in place of the ones
   * set before; reading gives what is lent now. */
  get tools() {
    return this.reckon.tools();
  }

  set tools(list) {
    if (!Array.isArray(list)) throw new TypeError("<reckon-chat>.tools: set a list of tools ({name, description, parameters, run, policy?})");
    for (const tool of list) checkedTool(tool); // all or nothing: a bad one changes nothing
    const api = this.reckon;
    for (const name of this.#lent) api.unregisterTool(name);
    this.#lent = list.map((tool) => api.registerTool(tool).name);
  }

  /** Who approves a call of a tool whose policy asks (else the widget's Allow / Deny row). */
  get onToolRequest() {
    return this.reckon.toolHost.approve;
  }

  set onToolRequest(fn) {
    if (fn !== null && typeof fn !== "function") throw new TypeError("<reckon-chat>.onToolRequest: set a function (request) => boolean, or null");
    this.reckon.toolHost.approve = fn;
  }

  /** The createReckon() object behind this element (the same API as window.reckon on the page). */
  get reckon() {
    return this.#start();
  }

  #start() {
    if (this.#api) return this.#api;
    const relay = this.getAttribute("relay") || undefined;
    const session = this.getAttribute("session");
    const token = sessionStorage.getItem(tokenKey(relay)) || undefined;
    const kept = session ? { session, store: new Store({ name: `reckon-widget:${session}` }) } : {};
    const api = createReckon({ root: BASE, relay, token, persist: Boolean(session), ...kept });
    this.#api = api;
    for (const type of EVENTS) api.on(type, (/** @type {unknown} */ detail) => this.#emit(type, detail));
    // `error` also covers an ask that ended without an answer (`ask-error`).
    api.on("ask-error", (/** @type {unknown} */ detail) => this.#emit("error", detail));

    const box = document.createElement("div");
    this.#box = box;
    box.className = "reckon-chat";
    box.hidden = true; // until the stylesheet is in: no flash of unstyled markup
    this.#shadow.appendChild(box);
    this.#ui = mountChat(this.#shadow, api, {
      page: false,
      container: box,
      model: this.getAttribute("model"),
      fileName: session ? `reckon-${session}` : "reckon-session",
      onToken: (typed) => {
        sessionStorage.setItem(tokenKey(relay), typed);
        location.reload();
      },
    });
    styles()
      .then((css) => (this.#shadow.adoptedStyleSheets = [css, this.#sizing]))
      .catch((err) => this.#emit("error", { message: `the widget's stylesheet could not be loaded: ${errorText(err)}` }))
      .finally(() => (box.hidden = false)); // closed meanwhile: a box no longer shown
    this.#applyLook();
    return api;
  }

  /** After a file change made through the element's methods, show it in the widget's lists. */
  async refreshFiles() {
    if (this.#ui) await this.#ui.refreshFiles();
  }

  /** @param {string} type @param {unknown} detail */
  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  #applyLook() {
    if (!this.#box) return;
    this.#box.classList.toggle("theme-dark", this.getAttribute("theme") === "dark");
    // Through the CSSOM, which drops a value that is not a length: nothing else gets in.
    const height = (this.getAttribute("height") || "").trim();
    const rule = /** @type {CSSStyleRule} */ (this.#sizing.cssRules[0]);
    rule.style.removeProperty("height");
    if (height) rule.style.setProperty("height", /^\d+(\.\d+)?$/.test(height) ? `${height}px` : height);
  }
}

for (const name of METHODS) {
  Object.defineProperty(ReckonChat.prototype, name, {
    /** @this {ReckonChat} @param {...unknown} args */
    value(...args) {
      const api = this.reckon;
      const method = /** @type {Record<string, unknown>} */ (api)[name];
      if (typeof method !== "function") throw new TypeError(`<reckon-chat>.${name}() is not available in this build of Reckon`);
      const reply = method.apply(api, args);
      if (FILE_CHANGES.has(name)) Promise.resolve(reply).then(() => this.refreshFiles(), () => {});
      return reply;
    },
    writable: true,
    configurable: true,
  });
}

if (!customElements.get("reckon-chat")) customElements.define("reckon-chat", ReckonChat);
