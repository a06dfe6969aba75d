"use strict";
// The agent worker: a small Pyodide (no scientific stack) running reckon.agent.
// It is the only browser context that talks to the relay. It never touches the
// sandbox: it asks the page, which forwards only the agent-allowed requests.
// Message shapes: PROTOCOL.md §4.
importScripts("pyodide/pyodide.js");

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
  const pyodide = await loadPyodide({ indexURL: new URL("pyodide/", self.location.href).href });
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
    host.ask(msg.id, String(msg.question), String(msg.model || "")).catch((err) =>
      self.postMessage({ type: "done", askId: msg.id, status: "error", answer: "", steps: [], message: String(err.message || err) }),
    );
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
  }
};
