"use strict";
// The sandbox frame: an opaque-origin <iframe sandbox="allow-scripts">. It holds
// no secrets and has no network (its CSP says connect-src 'none'). It only starts
// the sandbox worker from Blobs the page hands it, with a MessagePort the page made
// for that worker: requests and replies go over it, page <-> worker directly. What
// the worker's code posts to `self` lands here and is dropped, so a cell cannot
// forge a reply (SECURITY.md). The frame's own port carries only frame-* messages.
(() => {
  let port = null;
  let worker = null;
  let fresh = null; // a worker for one job no cell may touch (web/sandbox/fresh.js)
  let boot = null; // {workerSource: Blob, runtime: {name: Blob}, config}
  // Only a cross-origin-isolated frame can share memory with its worker; then
  // interrupt() is a soft KeyboardInterrupt instead of a restart.
  const signal = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;

  function start(workerPort) {
    const url = URL.createObjectURL(boot.workerSource);
    worker = new Worker(url, { name: "reckon-sandbox" });
    URL.revokeObjectURL(url);
    worker.onmessage = null; // only the model's code posts to self: nobody listens
    worker.onerror = (ev) => {
      ev.preventDefault();
      port.postMessage({ type: "crash", message: String(ev.message || "the sandbox worker crashed") });
    };
    const config = { ...boot.config, interruptBuffer: signal ? signal.buffer : null };
    worker.postMessage({ type: "call", id: 0, method: "boot", args: { runtime: boot.runtime, config } }, [workerPort]);
  }

  function onPortMessage(ev) {
    const msg = ev.data;
    if (!msg || typeof msg !== "object") return;
    if ((msg.type === "frame-start" || msg.type === "frame-restart" || msg.type === "frame-snapshot" || msg.type === "frame-fresh") && !(ev.ports && ev.ports[0])) return;
    if (msg.type === "frame-start") {
      if (worker) worker.terminate(); // a start again, with other files (the page's fallback)
      boot = { workerSource: msg.workerSource, runtime: msg.runtime, config: msg.config };
      start(ev.ports[0]);
    } else if (msg.type === "frame-restart") {
      if (worker) worker.terminate();
      if (msg.snapshot !== undefined) boot.config = { ...boot.config, snapshot: msg.snapshot };
      start(ev.ports[0]);
    } else if (msg.type === "frame-snapshot" && boot) {
      // A second, short-lived worker that only makes the warm-start snapshot and ends;
      // it runs no cell. Its errors are its own: the sandbox is not affected.
      const url = URL.createObjectURL(boot.workerSource);
      const maker = new Worker(url, { name: "reckon-snapshot" });
      URL.revokeObjectURL(url);
      maker.onerror = (e) => e.preventDefault();
      const config = { ...boot.config, snapshot: null, makeSnapshot: true, interruptBuffer: null };
      maker.postMessage({ type: "call", id: 0, method: "boot", args: { runtime: boot.runtime, config } }, [ev.ports[0]]);
    } else if (msg.type === "frame-fresh" && boot) {
      // Booted like the sandbox's worker, with the page's port; nobody's cells ran in it.
      if (fresh) fresh.terminate();
      const url = URL.createObjectURL(boot.workerSource);
      fresh = new Worker(url, { name: "reckon-fresh" });
      URL.revokeObjectURL(url);
      fresh.onerror = (e) => e.preventDefault();
      const config = { ...boot.config, kernel: { ...boot.config.kernel, ...msg.kernel }, warm: false, interruptBuffer: null };
      fresh.postMessage({ type: "call", id: 0, method: "boot", args: { runtime: boot.runtime, config } }, [ev.ports[0]]);
    } else if (msg.type === "frame-fresh-end") {
      if (fresh) fresh.terminate();
      fresh = null;
    } else if (msg.type === "addRuntime") {
      // Kept for restarts, and forwarded now: the worker installs them when idle.
      Object.assign(boot.runtime, msg.files);
      if (worker) worker.postMessage(msg);
      if (fresh) fresh.postMessage(msg);
    } else if (msg.type === "frame-interrupt") {
      if (signal) Atomics.store(signal, 0, 2);
    } else if (msg.type === "frame-ping") {
      // The page's heartbeat: a frame whose renderer died (out of memory, killed by
      // the OS) never answers, and the page replaces it.
      port.postMessage({ type: "frame-pong", n: msg.n });
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
