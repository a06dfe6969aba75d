"use strict";
// The agent worker: a small Pyodide (no scientific stack) running reckon.agent.
// It is the only browser context that talks to the relay. It never touches the
// sandbox: it asks the page, which forwards only the agent-allowed requests.
// Message shapes: PROTOCOL.md §4.
// Started from a blob: bootstrap when the page is on another origin (agent-client.js).
const BASE = self.RECKON_BASE || self.location.href;
importScripts(new URL("pyodide/pyodide.js", BASE).href);

let host = null;
let booting = null;
let nextId = 1;
const pending = new Map();

const bridge = {
  post: (json) => self.postMessage(JSON.parse(json)),
  sandbox: (json) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      self.postMessage({ type: "sandbox", id, request: JSON.parse(json) });
    }),
};

async function boot(config) {
  const t0 = performance.now();
  const pyodide = await loadPyodide({ indexURL: new URL("pyodide/", BASE).href });
  await pyodide.loadPackage(["reckon"], { messageCallback: () => {} });
  host = pyodide.pyimport("reckon.agent._host");
  host.start(bridge, JSON.stringify(config));
  self.postMessage({ type: "agent-ready", ms: performance.now() - t0 });
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (!msg || typeof msg !== "object") return;
  if (msg.type === "sandbox-reply") {
    const resolve = pending.get(msg.id);
    pending.delete(msg.id);
    if (resolve) resolve(JSON.stringify(msg.reply));
    return;
  }
  if (msg.type === "config") {
    booting = boot(msg.config).catch((err) => self.postMessage({ type: "agent-error", message: String(err.message || err) }));
    return;
  }
  await booting;
  if (msg.type === "ask") {
    host.ask(msg.id, String(msg.question), String(msg.model || ""), JSON.stringify(msg.options || {})).catch((err) =>
      self.postMessage({ type: "done", askId: msg.id, status: "error", answer: "", steps: [], message: String(err.message || err) }),
    );
  } else if (msg.type === "configure") {
    let reply;
    try {
      reply = JSON.parse(host.configure(JSON.stringify(msg.settings ?? null)));
    } catch (err) {
      reply = { status: "error", message: String(err.message || err) };
    }
    self.postMessage({ type: "configured", id: msg.id, ...reply });
  } else if (msg.type === "decide") {
    let reply;
    try {
      reply = JSON.parse(host.decide(String(msg.proposal), JSON.stringify(msg.decision ?? null)));
    } catch (err) {
      reply = { status: "error", message: String(err.message || err) };
    }
    self.postMessage({ type: "decided", id: msg.id, ...reply });
  } else if (msg.type === "stop") {
    host.stop();
  } else if (msg.type === "reset") {
    host.reset();
  } else if (msg.type === "transcript") {
    self.postMessage({ type: "transcript", id: msg.id, transcript: JSON.parse(host.transcript()) });
  } else if (msg.type === "export") {
    self.postMessage({ type: "state", id: msg.id, status: "ok", state: JSON.parse(host.export_state()) });
  } else if (msg.type === "import") {
    let reply;
    try {
      reply = JSON.parse(host.import_state(JSON.stringify(msg.state)));
    } catch (err) {
      reply = { status: "error", message: String(err.message || err) };
    }
    self.postMessage({ type: "imported", id: msg.id, ...reply });
  } else if (msg.type === "exportSession") {
    const kind = msg.format === "py" ? "py" : "ipynb";
    self.postMessage({ type: "exported", id: msg.id, status: "ok", format: kind, text: host.export_session(kind) });
  } else if (msg.type === "importNotebook") {
    let reply;
    try {
      reply = JSON.parse(await host.import_notebook(String(msg.text), String(msg.name || "notebook")));
    } catch (err) {
      reply = { status: "error", cells: 0, ok: 0, failed: 0, message: `internal error: ${err.message || err}` };
    }
    self.postMessage({ type: "notebookImported", id: msg.id, ...reply });
  }
};
