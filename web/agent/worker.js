"use strict";
// The agent worker: a small Pyodide (no scientific stack) running reckon.agent.
// It is the only browser context that talks to the relay. It never touches the
// sandbox: it asks the page, which forwards only the agent-allowed requests.
// Message shapes: PROTOCOL.md §4 (web/shared/protocol.js: AGENT_METHODS, AGENT_EVENTS).
// Started from a blob: bootstrap when the page is on another origin (agent/client.js).
// BASE is the site's root, where pyodide/ is: one folder up from this script.
const BASE = self.RECKON_BASE || new URL("../", self.location.href).href;
importScripts(new URL("pyodide/pyodide.js", BASE).href);

// In a closure: its names stay its own (the type check sees every classic script's
// top-level names as one global scope, the sandbox worker's parts included).
(() => {

/** @type {any} reckon.agent._host, once started */
let host = null;
/** @type {Promise<unknown> | null} */
let booting = null;
let nextId = 1;
/** @type {Map<number, (json: string) => void>} our calls to the page (the sandbox), by id */
const pending = new Map();

// What Python calls: events for the page, and sandbox calls answered by the page.
const bridge = {
  post: (/** @type {string} */ json) => self.postMessage(JSON.parse(json)),
  sandbox: (/** @type {string} */ json) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      const { type: method, ...args } = JSON.parse(json);
      self.postMessage({ type: "call", id, method, args });
    }),
};

/** Python's JSON reply, or an error reply when it raised. @param {() => string | Promise<string>} call */
async function fromPython(call, extra = {}) {
  try {
    return JSON.parse(await call());
  } catch (err) {
    return { status: "error", ...extra, message: `internal error: ${String((err && err.message) || err)}` };
  }
}

/** The page's calls (PROTOCOL.md §4): each answers with a reply. @type {Record<string, (args: any) => unknown>} */
const methods = {
  async start({ config }) {
    const t0 = performance.now();
    const pyodide = await loadPyodide({ indexURL: new URL("pyodide/", BASE).href });
    await pyodide.loadPackage(["reckon"], { messageCallback: () => {} });
    host = pyodide.pyimport("reckon.agent._host");
    host.start(bridge, JSON.stringify(config));
    return { status: "ok", ms: performance.now() - t0 };
  },
  ask: ({ id, question, model, options }) =>
    fromPython(() => host.ask(id, String(question), String(model || ""), JSON.stringify(options || {})), { answer: "", steps: [] }),
  configure: ({ settings }) => fromPython(() => host.configure(JSON.stringify(settings ?? null))),
  decide: ({ proposal, decision }) => fromPython(() => host.decide(String(proposal), JSON.stringify(decision ?? null))),
  stop: () => (host.stop(), { status: "ok" }),
  reset: () => (host.reset(), { status: "ok" }),
  transcript: () => ({ status: "ok", transcript: JSON.parse(host.transcript()) }),
  exportState: () => ({ status: "ok", state: JSON.parse(host.export_state()) }),
  importState: ({ state }) => fromPython(() => host.import_state(JSON.stringify(state))),
  exportSession({ format }) {
    const kind = format === "py" ? "py" : "ipynb";
    return { status: "ok", format: kind, text: host.export_session(kind) };
  },
  importNotebook: ({ text, name }) => fromPython(() => host.import_notebook(String(text), String(name || "notebook")), { cells: 0, ok: 0, failed: 0 }),
};

/** @param {number} id @param {string} method @param {any} args @returns {Promise<any>} */
async function answer(id, method, args) {
  /** @type {any} */
  let reply;
  if (!Object.hasOwn(methods, method)) reply = { status: "error", message: `unknown method ${method}` };
  else if (method !== "start" && !(await booting)) reply = { status: "error", message: "the agent did not start" };
  else {
    try {
      reply = await methods[method](method === "ask" ? { ...args, id } : args);
    } catch (err) {
      reply = { status: "error", message: String((err && err.message) || err) };
    }
  }
  self.postMessage({ ...reply, type: "reply", id });
  return reply;
}

self.onmessage = (ev) => {
  const msg = ev.data;
  if (!msg || typeof msg !== "object") return;
  if (msg.type === "reply") {
    // The page's answer to one of our sandbox calls.
    const resolve = pending.get(msg.id);
    pending.delete(msg.id);
    const { type, id, ...reply } = msg;
    void type, void id;
    if (resolve) resolve(JSON.stringify(reply));
  } else if (msg.type === "call" && msg.method === "start") {
    booting = answer(msg.id, "start", msg.args || {}).then((reply) => reply.status === "ok");
  } else if (msg.type === "call") {
    answer(msg.id, String(msg.method), msg.args || {});
  }
};
})();
