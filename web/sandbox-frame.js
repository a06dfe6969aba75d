"use strict";
// The sandbox frame: an opaque-origin <iframe sandbox="allow-scripts">. It holds
// no secrets and has no network (its CSP says connect-src 'none'). It only starts
// the sandbox worker from Blobs the page hands it and relays messages over the one
// MessagePort the page gave it, so no other window can talk to the worker.
(() => {
  let port = null;
  let worker = null;
  let boot = null; // {workerSource: Blob, runtime: {name: Blob}, config}
  // Only a cross-origin-isolated frame can share memory with its worker; then
  // interrupt() is a soft KeyboardInterrupt instead of a restart.
  const signal = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;

  function start() {
    const url = URL.createObjectURL(boot.workerSource);
    worker = new Worker(url, { name: "reckon-sandbox" });
    URL.revokeObjectURL(url);
    worker.onmessage = (ev) => port.postMessage(ev.data);
    worker.onerror = (ev) => {
      ev.preventDefault();
      port.postMessage({ type: "crash", message: String(ev.message || "the sandbox worker crashed") });
    };
    const config = { ...boot.config, interruptBuffer: signal ? signal.buffer : null };
    worker.postMessage({ type: "boot", id: 0, runtime: boot.runtime, config });
  }

  function onPortMessage(ev) {
    const msg = ev.data;
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "frame-start") {
      boot = { workerSource: msg.workerSource, runtime: msg.runtime, config: msg.config };
      start();
    } else if (msg.type === "frame-restart") {
      if (worker) worker.terminate();
      start();
    } else if (msg.type === "addRuntime") {
      // Kept for restarts, and forwarded now: the worker installs them when idle.
      Object.assign(boot.runtime, msg.files);
      if (worker) worker.postMessage(msg);
    } else if (msg.type === "frame-interrupt") {
      if (signal) Atomics.store(signal, 0, 2);
    } else if (worker) {
      // Everything else is for the worker; transfer binary payloads, never copy them.
      const transfer = msg.data instanceof Uint8Array ? [msg.data.buffer] : [];
      worker.postMessage(msg, transfer);
    }
  }

  window.addEventListener("message", (ev) => {
    // Only the embedding page, and only once: it hands us the port we answer on.
    if (port || ev.source !== window.parent || !ev.data || ev.data.type !== "frame-connect") return;
    if (!(ev.ports && ev.ports[0])) return;
    port = ev.ports[0];
    port.onmessage = onPortMessage;
    port.postMessage({ type: "frame-ready", crossOriginIsolated: self.crossOriginIsolated === true });
  });
})();
