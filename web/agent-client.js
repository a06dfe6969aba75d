// The page's side of the agent worker. The page is the only bridge between the
// agent and the sandbox, and it forwards only these requests from the agent.
const AGENT_ALLOWED = new Set(["run", "listFiles", "inspect", "interrupt"]);
export const DEMO_MODEL = "reckon-demo";
const CLOSED = "this Reckon was closed (close()); create a new one to ask";

export class Agent extends EventTarget {
  /** @param {import("./sandbox-client.js").Sandbox} sandbox */
  constructor(sandbox, { root = new URL("./", import.meta.url), relay = null, token = null, settings = {} } = {}) {
    super();
    this.sandbox = sandbox;
    this.root = root;
    this.relay = relay ? new URL(relay, root).href.replace(/\/$/, "") : new URL(".", root).href.replace(/\/$/, "");
    this.token = token;
    this.settings = settings;
    this.nextAsk = 1;
    this.stops = 0;
    this.asks = new Map();
    this.calls = new Map(); // id -> resolve, for export/import replies
    this.info = null;
    this.worker = null;
    this.readyPromise = null;
  }

  /** What the relay offers; a plain static server has no relay: demo model only. */
  async models() {
    if (!this.info) {
      try {
        const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
        const resp = await fetch(`${this.relay}/api/info`, { headers });
        this.info = resp.ok ? await resp.json() : null;
        this.authRequired = resp.status === 401;
      } catch {
        this.info = null;
      }
      if (!this.info || this.info.status !== "ok") this.info = { status: "ok", models: [], default_model: null, demo: true, relay: false };
    }
    const models = [...this.info.models, DEMO_MODEL];
    return { models, default: this.info.default_model || DEMO_MODEL, demo: !this.info.models.length, authRequired: this.authRequired === true };
  }

  /** How to talk to a model, from the relay's profile: {tools, context_window} (PROTOCOL.md §5). */
  modelOptions(model) {
    const options = this.info && this.info.model_options;
    return (options && typeof options === "object" && options[model]) || {};
  }

  ready() {
    if (this.closed) return Promise.reject(new Error(CLOSED));
    if (!this.readyPromise) this.readyPromise = this.start();
    return this.readyPromise;
  }

  /** End the worker (and a model call under way); pending asks and calls end with an error. */
  close() {
    if (this.closed) return;
    this.closed = true;
    this.stops += 1;
    if (this.worker) this.worker.terminate();
    for (const ask of this.asks.values()) {
      if (ask.resolve) ask.resolve({ status: "error", answer: "", steps: ask.steps, message: CLOSED });
      if (ask.resolveTranscript) ask.resolveTranscript({ version: 1, asks: [] });
    }
    this.asks.clear();
    for (const pending of this.calls.values()) pending({ status: "error", message: CLOSED });
    this.calls.clear();
  }

  async start() {
    const build = await (await fetch(new URL("build-info.json", this.root), { cache: "no-cache" })).json();
    if (this.closed) throw new Error(CLOSED);
    this.worker = startWorker(new URL("agent-worker.js", this.root), "reckon-agent");
    const ready = new Promise((resolve, reject) => {
      this.worker.onmessage = (ev) => {
        if (ev.data && ev.data.type === "agent-ready") resolve(ev.data);
        else if (ev.data && ev.data.type === "agent-error") reject(new Error(ev.data.message));
        else this.onMessage(ev.data);
      };
      // A worker that never runs (its script blocked, e.g. by a host page's CSP) says so only here.
      this.worker.onerror = (ev) => reject(new Error(`the agent worker could not start${ev.message ? ` (${ev.message})` : ""}; a page embedding Reckon needs worker-src blob: and the site's origin in script-src`));
    });
    this.worker.postMessage({
      type: "config",
      config: { relay: this.relay, token: this.token, settings: this.settings, python: build.python, packages: build.sandbox.all_packages },
    });
    const reply = await ready;
    this.worker.onmessage = (ev) => this.onMessage(ev.data);
    return reply;
  }

  async onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "sandbox") {
      const request = msg.request || {};
      let reply;
      if (!AGENT_ALLOWED.has(request.type)) reply = { status: "error", message: `the agent may not ${request.type}` };
      else if (request.type === "run" && request.hidden === true) reply = await this.sandbox.run(String(request.code), { timeoutMs: Number(request.timeoutMs) || undefined, record: false });
      else if (request.type === "run") reply = await this.sandbox.run(String(request.code), { timeoutMs: Number(request.timeoutMs) || undefined, onStream: (name, text) => this.emit("stream", { name, text }) });
      else if (request.type === "interrupt") reply = await this.sandbox.interrupt();
      else if (request.type === "listFiles") reply = { status: "ok", files: await this.sandbox.listFiles(String(request.dir)) };
      else reply = await this.sandbox.inspect(String(request.path));
      this.worker.postMessage({ type: "sandbox-reply", id: msg.id, reply });
      return;
    }
    if (msg.type === "state" || msg.type === "imported" || msg.type === "exported" || msg.type === "notebookImported" || msg.type === "decided" || msg.type === "configured") {
      const pending = this.calls.get(msg.id);
      this.calls.delete(msg.id);
      if (pending) pending(msg);
      return;
    }
    if (msg.type === "transcript") {
      const pending = this.asks.get(msg.id);
      this.asks.delete(msg.id);
      if (pending && pending.resolveTranscript) pending.resolveTranscript(msg.transcript);
      return;
    }
    const ask = this.asks.get(msg.askId);
    if (msg.type === "step") {
      if (ask) ask.steps.push(msg.step);
      this.emit("step", { askId: msg.askId, step: msg.step });
    } else if (msg.type === "delta") {
      this.emit("delta", { askId: msg.askId, text: String(msg.text) });
    } else if (msg.type === "usage" || msg.type === "proposal" || msg.type === "waiting") {
      const { type, ...detail } = msg;
      this.emit(type, detail);
    } else if (msg.type === "done") {
      if (!ask) return;
      this.asks.delete(msg.askId);
      const outcome = { status: msg.status, answer: msg.answer || "", steps: msg.steps || ask.steps, message: msg.message, model: ask.model, usage: msg.usage, sessionUsage: msg.sessionUsage, privacy: msg.privacy, verification: msg.verification, grounding: msg.grounding };
      this.emit(msg.status === "ok" ? "answer" : "error", { askId: msg.askId, ...outcome });
      ask.resolve(outcome);
    }
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /** Ask a question; resolves to {status, answer, steps, message?} when the agent is done. */
  async ask(question, { model, tokenBudget, verify } = {}, { stops = this.stops } = {}) {
    if (typeof question !== "string" || !question.trim()) throw new TypeError("ask(question): question must be a non-empty string");
    if (this.closed) return { status: "error", answer: "", steps: [], message: CLOSED };
    // `stops` as of the call (the caller's, if it awaited first): a stop() after it,
    // even before this ask reaches the worker, stops it too.
    const { default: fallback } = await this.models();
    await Promise.all([this.ready(), this.sandbox.ready()]);
    const id = this.nextAsk++;
    const chosen = model || fallback;
    if (this.closed) return { status: "error", answer: "", steps: [], message: CLOSED };
    return new Promise((resolve) => {
      this.asks.set(id, { resolve, steps: [], model: chosen });
      this.emit("ask", { askId: id, question, model: chosen });
      if (stops !== this.stops) this.onMessage({ type: "done", askId: id, status: "stopped", message: "Stopped by the user before it started." });
      else this.worker.postMessage({ type: "ask", id, question, model: chosen === DEMO_MODEL ? "" : chosen, options: { tokenBudget, verify, modelOptions: this.modelOptions(chosen) } });
    });
  }

  /** Stop the running ask and every ask waiting for its turn (PROTOCOL.md §4). */
  stop() {
    this.stops += 1;
    if (this.worker) this.worker.postMessage({ type: "stop" });
  }

  /** Change approval, privacy, allowColumns, tokenBudget, verify: {status, settings} or {status: "error", message}. */
  async configure(settings) {
    const { type, id, ...reply } = await this.call({ type: "configure", settings });
    if (reply.status === "ok") this.settings = { ...this.settings, ...reply.settings };
    return reply;
  }

  /** Answer a "proposal" event: {action: "run"} | {action: "edit", code} | {action: "reject", reason}. */
  async decide(proposalId, decision) {
    const { type, id, ...reply } = await this.call({ type: "decide", proposal: String(proposalId), decision });
    return reply;
  }

  /** The conversation as data: every ask with its steps (model text, code, results). */
  async transcript() {
    await this.ready();
    const id = this.nextAsk++;
    return new Promise((resolve) => {
      this.asks.set(id, { resolveTranscript: resolve });
      this.worker.postMessage({ type: "transcript", id });
    });
  }

  reset() {
    if (this.worker) this.worker.postMessage({ type: "reset" });
  }

  /** Send one request to the worker and wait for its reply (by id). */
  async call(message) {
    await this.ready();
    const id = this.nextAsk++;
    return new Promise((resolve) => {
      this.calls.set(id, resolve);
      this.worker.postMessage({ ...message, id });
    });
  }

  /** The agent's memory as data: {version, messages, transcript} (PROTOCOL.md §4). */
  async exportState() {
    const reply = await this.call({ type: "export" });
    if (reply.status !== "ok") throw new Error(reply.message || "the agent could not export its state");
    return reply.state;
  }

  /** The conversation as .ipynb JSON text (format "ipynb") or a .py script (format "py"). */
  async exportSession(format) {
    const reply = await this.call({ type: "exportSession", format });
    if (reply.status !== "ok") throw new Error(reply.message || "the agent could not export the session");
    return reply.text;
  }

  /** Run a notebook's or script's cells as starting cells: {status, question?, cells, ok, failed, message?}. */
  async importNotebook(text, name) {
    const { type, id, ...reply } = await this.call({ type: "importNotebook", text, name });
    return reply;
  }

  /** Give the agent back a conversation saved by exportState(). */
  async importState(state) {
    const reply = await this.call({ type: "import", state });
    if (reply.status !== "ok") throw new Error(reply.message || "the agent could not import the saved state");
    return reply;
  }
}

/**
 * A worker running `url`. A page cannot start a worker from another origin's script
 * (an embedded <reckon-chat> whose files are hosted elsewhere), so then a same-origin
 * blob: script imports it and tells it where its files are (RECKON_BASE).
 */
function startWorker(url, name) {
  if (url.origin === location.origin) return new Worker(url, { name });
  const source = `self.RECKON_BASE = ${JSON.stringify(new URL("./", url).href)};\nimportScripts(${JSON.stringify(url.href)});\n`;
  const blob = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return new Worker(blob, { name });
  } finally {
    URL.revokeObjectURL(blob);
  }
}
