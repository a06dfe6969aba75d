// The page's side of the agent worker. The page is the only bridge between the
// agent and the sandbox, and it forwards only the agent-allowed calls from the agent.
// Message shapes: PROTOCOL.md §4, web/shared/protocol.js (AgentApi, AgentSandboxApi);
// the calls go through web/shared/seam.js, whose text the worker runs first.
import { AGENT_ALLOWED, payload } from "../shared/protocol.js";
import { connect, serve } from "../shared/seam.js";
import { FigureShelf } from "./figures.js";
import { spawnWorker } from "./spawn.js";

export const DEMO_MODEL = "reckon-demo";
const CLOSED = "this Reckon was closed (close()); create a new one to ask";

/** @typedef {import("../shared/protocol.js").AskOutcome} AskOutcome */
/** @typedef {import("../shared/protocol.js").AgentApi} AgentApi */
/** @typedef {import("../shared/protocol.js").AgentSandboxApi} AgentSandboxApi */

export class Agent extends EventTarget {
  /**
   * @param {import("../sandbox/client.js").Sandbox} sandbox
   * @param {{root?: URL, relay?: string | null, token?: string | null, settings?: Record<string, unknown>}} [options]
   */
  constructor(sandbox, { root = new URL("../", import.meta.url), relay = null, token = null, settings = {} } = {}) {
    super();
    this.sandbox = sandbox;
    this.root = root;
    this.relay = relay ? new URL(relay, root).href.replace(/\/$/, "") : new URL(".", root).href.replace(/\/$/, "");
    this.token = token;
    this.settings = settings;
    /** The figures' PNGs: the worker gets references to them (figures.js). */
    this.figures = new FigureShelf();
    this.stops = 0;
    this.closed = false;
    this.authRequired = false;
    /** @type {Map<number, {steps: unknown[], model: string}>} asks under way, by their call id */
    this.asks = new Map();
    /** @type {any} */
    this.info = null;
    /** @type {Worker | null} */
    this.worker = null;
    /** @type {HTMLIFrameElement | null} the frame whose policy the worker inherits */
    this.frame = null;
    /** @type {Promise<import("../shared/protocol.js").Reply> | null} */
    this.readyPromise = null;
    /** @type {Promise<any> | null} the worker, started (build-info.json as its value) */
    this.spawnPromise = null;
    /** Rejects if the worker cannot run at all (its script blocked, e.g. by a host page's CSP).
     * @type {Promise<never>} */
    this.failed = new Promise(() => {});
    // The worker's events: each about an ask (its call's id, as askId), or the session.
    /** @type {Record<string, (msg: Record<string, any>) => void>} */
    const on = {
      step: (msg) => {
        const step = this.figures.restore(msg.step);
        const ask = this.asks.get(msg.askId);
        if (ask) ask.steps.push(step);
        this.emit("step", { askId: msg.askId, step });
      },
      delta: (msg) => this.emit("delta", { askId: msg.askId, text: String(msg.text) }),
    };
    for (const type of ["usage", "proposal", "waiting"]) on[type] = ({ type: _type, ...detail }) => this.emit(type, detail);
    /** @type {import("../shared/seam.js").Caller<AgentApi>} the page's calls to the worker */
    this.rpc = connect(null, { on });
    /** The agent's calls to the sandbox: only the agent-allowed methods go through. */
    this.served = serve(null, this.sandboxMethods(), { gate: (method) => (AGENT_ALLOWED.includes(method) ? null : `the agent may not ${method}`) });
  }

  /** What the relay offers; a plain static server has no relay: demo model only. */
  async models() {
    if (!this.info) {
      try {
        /** @type {Record<string, string>} */
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

  /** The relay's host tools (PROTOCOL.md §4, `relayTools`), asked through the worker, which
   * alone talks to the relay (no interpreter needed); [] when there is none or none offered. */
  async relayTools() {
    await this.spawn();
    const reply = await this.rpc.call("relayTools", { relay: this.relay, token: this.token });
    return reply.status === "ok" && Array.isArray(reply.tools) ? reply.tools : [];
  }

  /** Call a relay tool through the worker: its result, or an Error with the relay's message;
   * `signal` aborted (its cell ended) cancels the request. @param {string} name @param {unknown} args @param {AbortSignal} [signal] */
  async callRelayTool(name, args, signal) {
    await this.spawn();
    const id = this.rpc.reserve();
    if (signal) signal.addEventListener("abort", () => void this.rpc.call("cancelRelayTool", { call: id }), { once: true });
    const reply = await this.rpc.call("relayTool", { relay: this.relay, token: this.token, name, args: JSON.stringify(args) }, { id });
    if (reply.status !== "ok") throw new Error(String(reply.message));
    return JSON.parse(String(reply.text));
  }

  /** How to talk to a model, from the relay's profile: {tools, context_window} (PROTOCOL.md §5). @param {string} model */
  modelOptions(model) {
    const options = this.info && this.info.model_options;
    return (options && typeof options === "object" && options[model]) || {};
  }

  /** Resolves when the agent's interpreter is up; starts it on the first call (an ask,
   * or the page on a first sign that someone will ask): it costs seconds of CPU, which a
   * page nobody asks anything of never spends. */
  ready() {
    if (this.closed) return Promise.reject(new Error(CLOSED));
    if (!this.readyPromise) this.readyPromise = this.start();
    return this.readyPromise;
  }

  /** Starts the worker without its interpreter (cheap), so that a page whose policy
   * forbids it learns so at once (`failed`). ready() starts the interpreter. */
  spawn() {
    if (this.closed) return Promise.reject(new Error(CLOSED));
    if (!this.spawnPromise) this.spawnPromise = this.startWorker();
    return this.spawnPromise;
  }

  /** End the worker (and a model call under way); pending asks and calls end with an error. */
  close() {
    if (this.closed) return;
    this.closed = true;
    this.stops += 1;
    if (this.worker) this.worker.terminate();
    if (this.frame) this.frame.remove();
    for (const [id, ask] of this.asks) this.rpc.settle(id, { status: "error", answer: "", steps: ask.steps, message: CLOSED });
    this.asks.clear();
    this.rpc.failAll({ status: "error", message: CLOSED });
  }

  async startWorker() {
    const build = await (await fetch(new URL("build-info.json", this.root), { cache: "no-cache" })).json();
    if (this.closed) throw new Error(CLOSED);
    const { worker, frame } = await spawnWorker(this.root, new URL("agent/worker.js", this.root), "reckon-agent", this.sandbox.container || document.body);
    this.frame = frame;
    if (this.closed) {
      worker.terminate();
      if (frame) frame.remove();
      throw new Error(CLOSED);
    }
    this.worker = worker;
    this.rpc.attach(worker);
    this.served.attach(worker);
    // A worker that never runs (its script blocked, e.g. by a host page's CSP) says so only here.
    this.failed = new Promise((_, reject) => {
      worker.onerror = (ev) => reject(new Error(`the agent worker could not start${ev.message ? ` (${ev.message})` : ""}; a page embedding Reckon needs worker-src blob: and the site's origin in script-src`));
    });
    this.failed.catch(() => {});
    return build;
  }

  async start() {
    const build = await this.spawn();
    const config = { relay: this.relay, token: this.token, settings: this.settings, python: build.python, packages: build.sandbox.all_packages };
    const started = this.rpc.call("start", { config }).then((r) => (r.status === "ok" ? r : Promise.reject(new Error(r.message))));
    const reply = await Promise.race([started, this.failed]);
    if (this.worker) this.worker.onerror = null;
    return reply;
  }

  /** What the agent may call on the sandbox, through the page (AGENT_ALLOWED; PROTOCOL.md §4).
   * @returns {import("../shared/seam.js").Handlers<AgentSandboxApi>} */
  sandboxMethods() {
    const sandbox = this.sandbox;
    /** @param {{timeoutMs?: unknown}} args */
    const timeout = (args) => Number(args.timeoutMs) || undefined;
    return {
      run: async (args) => {
        const result = await sandbox.run(String(args.code), { timeoutMs: timeout(args), onStream: (name, text) => this.emit("stream", { name, text }) });
        // What the run's host tools returned goes to the agent beside the result, for
        // schema privacy to hide (the agent takes it out at once: _tool_values.py).
        const calls = Array.isArray(result.tools) ? result.tools : [];
        const texts = calls.length && sandbox.channel.tools ? sandbox.channel.tools.valuesOf(calls[0].runId) : [];
        const lent = this.figures.lend(result);
        return texts.length ? { ...lent, toolValues: texts } : lent;
      },
      interrupt: () => sandbox.interrupt(),
      scan: (args) => sandbox.scan(String(args.code), { timeoutMs: timeout(args) }).then((result) => this.figures.lend(result)),
      listFiles: (args) => sandbox.listFiles(String(args.dir)).then((files) => ({ status: "ok", files }), (err) => ({ status: "error", files: [], message: String(err.message || err) })),
      inspect: (args) => /** @type {Promise<import("../shared/protocol.js").InspectResult>} */ (sandbox.inspect(String(args.path))),
      // The host tools the page lends now, for the prompt, the relay's once listed (web/tools.js).
      tools: async () => {
        const host = sandbox.channel.tools;
        if (host) await host.loadRelay();
        return { status: "ok", tools: host ? host.describe() : [] };
      },
    };
  }

  /** @param {string} type @param {unknown} detail */
  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /** Ask a question; resolves to {status, answer, steps, message?} when the agent is done.
   * @param {string} question @param {{model?: string, tokenBudget?: number, verify?: boolean}} [options]
   * @returns {Promise<AskOutcome>} */
  async ask(question, { model, tokenBudget, verify } = {}, { stops = this.stops } = {}) {
    if (typeof question !== "string" || !question.trim()) throw new TypeError("ask(question): question must be a non-empty string");
    if (this.closed) return { status: "error", answer: "", steps: [], message: CLOSED };
    // `stops` as of the call (the caller's, if it awaited first): a stop() after it,
    // even before this ask reaches the worker, stops it too.
    const { default: fallback } = await this.models();
    await Promise.all([this.ready(), this.sandbox.ready()]);
    const chosen = model || fallback;
    if (this.closed) return { status: "error", answer: "", steps: [], message: CLOSED };
    const id = this.rpc.reserve(); // its call's id: the worker's events carry it as askId
    const ask = { steps: [], model: chosen };
    this.asks.set(id, ask);
    this.emit("ask", { askId: id, question, model: chosen });
    /** @type {Record<string, any>} */
    let reply;
    if (stops !== this.stops) {
      reply = { status: "stopped", message: "Stopped by the user before it started." };
    } else {
      const options = { tokenBudget, verify, modelOptions: this.modelOptions(chosen) };
      reply = this.figures.restore(payload(await this.rpc.call("ask", { question, model: chosen === DEMO_MODEL ? "" : chosen, options }, { id })));
    }
    this.asks.delete(id);
    const outcome = { status: String(reply.status), answer: reply.answer || "", steps: reply.steps || ask.steps, message: reply.message, model: chosen, usage: reply.usage, sessionUsage: reply.sessionUsage, privacy: reply.privacy, verification: reply.verification, grounding: reply.grounding };
    if (!this.closed) this.emit(outcome.status === "ok" ? "answer" : "error", { askId: id, ...outcome });
    return outcome;
  }

  /** Stop the running ask and every ask waiting for its turn (PROTOCOL.md §4). */
  stop() {
    this.stops += 1;
    if (this.worker) this.rpc.call("stop");
  }

  /** Change approval, privacy, allowColumns, tokenBudget, verify: {status, settings} or {status: "error", message}.
   * @param {unknown} settings */
  async configure(settings) {
    const reply = await this.call("configure", { settings });
    if (reply.status === "ok") this.settings = { ...this.settings, .../** @type {object} */ (reply.settings) };
    return reply;
  }

  /** Answer a "proposal" event: {action: "run"} | {action: "edit", code} | {action: "reject", reason}.
   * @param {string | number} proposalId @param {unknown} decision */
  decide(proposalId, decision) {
    return this.call("decide", { proposal: String(proposalId), decision });
  }

  /** The conversation as data: every ask with its steps (model text, code, results). */
  async transcript() {
    const reply = await this.call("transcript");
    return reply.status === "ok" ? this.figures.restore(reply.transcript) : { version: 1, asks: [] };
  }

  reset() {
    if (this.readyPromise) this.rpc.call("reset"); // an agent not started yet has nothing to forget
    this.figures.keepOnly(null); // it forgets every figure it was lent
  }

  /** One call to the worker, once it is up: its reply's payload.
   * @template {keyof AgentApi & string} K @param {K} method @param {import("../shared/seam.js").ArgsOf<AgentApi, K>} [args] */
  async call(method, args = /** @type {any} */ ({})) {
    await this.ready();
    return payload(await this.rpc.call(method, args));
  }

  /** The agent's memory as data: {version, messages, transcript} (PROTOCOL.md §4). */
  async exportState() {
    const reply = await this.call("exportState");
    if (reply.status !== "ok") throw new Error(reply.message || "the agent could not export its state");
    return this.figures.restore(reply.state);
  }

  /** The conversation as .ipynb JSON text (format "ipynb"), a .py script (format "py") or
   * a self-contained HTML report (format "html"). @param {"ipynb" | "py" | "html"} format */
  async exportSession(format) {
    const reply = await this.call("exportSession", { format });
    if (reply.status !== "ok") throw new Error(reply.message || "the agent could not export the session");
    return this.figures.fill(/** @type {string} */ (reply.text), format);
  }

  /** Run a notebook's or script's cells as starting cells: {status, question?, cells, ok, failed, message?}.
   * @param {string} text @param {string} name */
  importNotebook(text, name) {
    return this.call("importNotebook", { text, name }).then((reply) => this.figures.restore(reply));
  }

  /** Give the agent back a conversation saved by exportState(). @param {unknown} state */
  async importState(state) {
    const lent = this.figures.lend(state);
    const reply = await this.call("importState", { state: lent });
    if (reply.status !== "ok") throw new Error(reply.message || "the agent could not import the saved state");
    this.figures.keepOnly(lent); // the agent's history is this one now
    return reply;
  }
}
