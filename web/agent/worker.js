"use strict";
// The agent worker: a small Pyodide (no scientific stack) running reckon.agent.
// It is the only browser context that talks to the relay. It never touches the
// sandbox: it asks the page, which forwards only the agent-allowed requests.
// Message shapes: PROTOCOL.md §4 (web/shared/protocol.js: AgentApi, AGENT_EVENTS); the
// calls go through web/shared/seam.js (`serve`, `connect`), whose text the page runs first.
// Started from a blob: bootstrap when the page is on another origin (agent/client.js).
// BASE is the site's root, where pyodide/ is: one folder up from this script.
const BASE = self.RECKON_BASE || new URL("../", self.location.href).href;
importScripts(new URL("pyodide/pyodide.js", BASE).href);

// In a closure: its names stay its own (the type check sees every classic script's
// top-level names as one global scope, the sandbox worker's parts included).
(() => {

// It is one object, AgentWorker: its methods are the protocol, its fields all its state.
class AgentWorker {
  /** @param {import("../shared/seam.js").PortLike} port the worker's own `self`, its port to the page */
  constructor(port) {
    /** @type {any} reckon.agent._host, once started */
    this.host = null;
    /** @type {Promise<boolean> | null} true once `start` succeeded */
    this.booting = null;
    /** @type {Map<number, AbortController>} relay tool calls under way, by their call's id */
    this.toolCalls = new Map();
    this.handlers = this.methods();
    this.page = serve(port, this.handlers, { gate: (method) => this.gate(method) });
    /** The page's sandbox methods, for Python (PROTOCOL.md §4: the agent-allowed ones). */
    this.sandbox = /** @type {import("../shared/seam.js").Caller<import("../shared/protocol.js").AgentSandboxApi>} */ (connect(port));
  }

  /** The page's calls (PROTOCOL.md §4; its interface: AgentApi): each answers with a
   * reply, and nothing else of the worker is reachable.
   * @returns {import("../shared/seam.js").Handlers<import("../shared/protocol.js").AgentApi>} */
  methods() {
    return {
      start: (args) => this.start(args),
      ask: ({ question, model, options }, { id }) =>
        fromPython(() => this.host.ask(id, String(question), String(model || ""), JSON.stringify(options || {})), { answer: "", steps: [] }),
      configure: ({ settings }) => fromPython(() => this.host.configure(JSON.stringify(settings ?? null))),
      decide: ({ proposal, decision }) => fromPython(() => this.host.decide(String(proposal), JSON.stringify(decision ?? null))),
      stop: () => (this.host.stop(), { status: "ok" }),
      reset: () => (this.host.reset(), { status: "ok" }),
      transcript: () => ({ status: "ok", transcript: JSON.parse(this.host.transcript()) }),
      exportState: () => ({ status: "ok", state: JSON.parse(this.host.export_state()) }),
      importState: ({ state }) => fromPython(() => this.host.import_state(JSON.stringify(state))),
      exportSession: ({ format }) => {
        const kind = format === "py" || format === "html" ? format : "ipynb";
        return { status: "ok", format: kind, text: this.host.export_session(kind) };
      },
      importNotebook: ({ text, name }) =>
        fromPython(() => this.host.import_notebook(String(text), String(name || "notebook")), { cells: 0, ok: 0, failed: 0 }),
      relayTools: (args) => relayTools(args),
      relayTool: (args, { id }) => this.relayTool(args, id),
      cancelRelayTool: ({ call }) => this.cancelRelayTool(call),
    };
  }

  /** @param {{config: Record<string, unknown>}} args */
  start({ config }) {
    const started = (async () => {
      const t0 = performance.now();
      const pyodide = await loadPyodide({ indexURL: new URL("pyodide/", BASE).href });
      await pyodide.loadPackage(["reckon"], { messageCallback: () => {} });
      this.host = pyodide.pyimport("reckon.agent._host");
      this.host.start(this.bridge(), JSON.stringify(config));
      return { status: "ok", ms: performance.now() - t0 };
    })();
    this.booting = started.then(() => true, () => false);
    return started;
  }

  /** Why `method` may not run now, or null. Every call but NO_PYTHON waits for `start`,
   * and fails as it did (the relay's tools are plain JS: they need no interpreter); an
   * unknown one is left to `serve` to refuse.
   * @param {string} method */
  async gate(method) {
    if (NO_PYTHON.includes(method) || !Object.hasOwn(this.handlers, method)) return null;
    return (await this.booting) ? null : "the agent did not start";
  }

  /** What Python calls: events for the page, and sandbox calls answered by the page. */
  bridge() {
    return {
      post: (/** @type {string} */ json) => this.page.post(JSON.parse(json)),
      sandbox: async (/** @type {string} */ json) => {
        const { type: method, ...args } = JSON.parse(json);
        const { type, id, ...reply } = await this.sandbox.call(method, args);
        void type, void id;
        return JSON.stringify(reply);
      },
    };
  }

  /** A cell's call of a relay tool (PROTOCOL.md §5, *Relay tools*), abortable
   * (cancelRelayTool): the relay sees the connection close and stops its own call to
   * the tool's endpoint, which would otherwise run on for nobody. `args` is JSON text
   * the page parsed and checked; the relay checks it again.
   * @param {{relay: string, token: string | null, name: string, args: string}} call @param {number} id */
  async relayTool({ relay, token, name, args }, id) {
    const abort = new AbortController();
    this.toolCalls.set(id, abort);
    const request = { method: "POST", headers: { "Content-Type": "application/json" }, body: `{"name":${JSON.stringify(String(name))},"args":${String(args)}}`, signal: abort.signal };
    try {
      const { body, problem } = await relayFetch(relay, token, "/api/tools/call", request);
      if (abort.signal.aborted) return { status: "error", message: `${String(name)}: cancelled, its cell ended first` };
      if (body && body.status === "ok") return { status: "ok", text: JSON.stringify(body.result === undefined ? null : body.result) };
      if (body && body.status === "error") return { status: "error", message: String(body.error) };
      return { status: "error", message: problem || "the relay gave no answer" };
    } finally {
      this.toolCalls.delete(id);
    }
  }

  /** `call` is the id of a `relayTool` call; one that already ended is not an error.
   * @param {unknown} call */
  cancelRelayTool(call) {
    const abort = this.toolCalls.get(Number(call));
    if (abort) abort.abort();
    return { status: "ok", cancelled: Boolean(abort) };
  }
}

/** Python's JSON reply, or an error reply when it raised. @param {() => string | Promise<string>} call */
async function fromPython(call, extra = {}) {
  try {
    return JSON.parse(await call());
  } catch (err) {
    return { status: "error", ...extra, message: `internal error: ${String((err && /** @type {Error} */ (err).message) || err)}` };
  }
}

/** The relay's host tools (PROTOCOL.md §5, *Relay tools*): fetched here, since this
 * worker is the only browser context that talks to the relay.
 * @param {{relay: string, token: string | null}} args */
async function relayTools({ relay, token }) {
  const { ok, body, problem } = await relayFetch(relay, token, "/api/tools");
  if (ok && body && body.status === "ok" && Array.isArray(body.tools)) return { status: "ok", tools: body.tools };
  return { status: "error", tools: [], message: problem || "the relay offers no tools" };
}

/** A relay route's JSON answer, or why there is none (the relay's own refusals, in its
 * error shape: a token missing, a limit).
 * @param {string} relay @param {string | null} token @param {string} path @param {RequestInit} [init] */
async function relayFetch(relay, token, path, init = {}) {
  const headers = { .../** @type {Record<string, string>} */ (init.headers || {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) };
  try {
    const resp = await fetch(`${String(relay).replace(/\/$/, "")}${path}`, { ...init, headers });
    /** @type {any} */
    let body = null;
    try {
      body = await resp.json();
    } catch {
      return { ok: false, body: null, problem: `the relay answered HTTP ${resp.status}, not JSON (is this a plain static server?)` };
    }
    const refused = body && body.error && typeof body.error === "object" ? `the relay refused the call: ${String(body.error.message)}` : "";
    return { ok: resp.ok, body: refused ? null : body, problem: refused };
  } catch (err) {
    return { ok: false, body: null, problem: `the relay could not be reached (${String((err && /** @type {Error} */ (err).message) || err)})` };
  }
}

const NO_PYTHON = ["start", "relayTools", "relayTool", "cancelRelayTool"];
// The worker's own `self` is its port to the page (lib.dom types it as a Window).
new AgentWorker(/** @type {import("../shared/seam.js").PortLike} */ (/** @type {unknown} */ (self)));
})();
