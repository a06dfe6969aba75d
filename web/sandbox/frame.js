"use strict";
// The sandbox frame: an opaque-origin <iframe sandbox="allow-scripts">, or under
// `reckon serve --sandbox-origin` a frame on a site of its own whose storage it wipes
// and checks empty before each worker starts (SECURITY.md). It holds
// no secrets and has no network (its CSP says connect-src 'none'). It only starts
// the sandbox worker from Blobs the page hands it, with a MessagePort the page made
// for that worker: requests and replies go over it, page <-> worker directly. What
// the worker's code posts to `self` lands here and is dropped, so a cell cannot
// forge a reply (SECURITY.md). The frame's own port carries only the frame's notes
// and its one call (FrameApi, PROTOCOL.md §3), through the call layer (web/shared/
// seam.js: the build inlines its text before this script).
(() => {
  /** @type {import("../shared/seam.js").Endpoint | null} the page's port, once it connected */
  let page = null;
  /** @type {Worker | null} */
  let worker = null;
  /** @type {Worker | null} a worker for one job no cell may touch (web/sandbox/fresh.js) */
  let fresh = null;
  /** @type {WeakMap<Worker, import("../shared/seam.js").Endpoint>} each worker's end: it only sends */
  const ends = new WeakMap();
  /** @type {{workerSource: Blob, runtime: Record<string, Blob>, config: Record<string, any>} | null} */
  let boot = null;
  let starts = 0; // the latest start() wins
  const TOOL_WORDS = 8; // the header of a tool reply buffer, in 32-bit words (answerTool)
  const TOOL_HEADER = TOOL_WORDS * 4;
  const TOOL_REPLY_MAX = 64 * 1024 * 1024;
  // Only a cross-origin-isolated frame can share memory with its worker; then
  // interrupt() is a soft KeyboardInterrupt instead of a restart.
  const signal = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
  /** @type {SharedArrayBuffer | null} the sandbox worker's replies to its tool calls made without await */
  let toolReplies = null;

  /** The page's answer to a tool call the worker made without await and now waits for,
   * blocked (sandbox/worker/tools.js, ToolBridge.callNow, reads it): the page cannot
   * share memory with it, this frame can, and this frame's thread is free. Written only
   * for the call the worker says it waits for; the layout, in 32-bit words: 0 the call
   * answered (0: none yet; stored last, it is what the worker waits on), 1 the call
   * awaited (the worker's), 2 kind (1: the result's JSON text, 2: an error's message, 3:
   * too big for this buffer), 3 its length in bytes, 4 capped (1: the page's cap ended
   * the run's calls); the bytes after the header. It grows to a reply's size (memory is
   * committed only as it grows) up to TOOL_REPLY_MAX, over the page's default result
   * cap of 5 MB: one write, no chunks to hand over while the worker is blocked.
   * @param {SharedArrayBuffer} buffer @param {Record<string, any>} msg */
  function answerTool(buffer, msg) {
    const words = new Int32Array(buffer, 0, TOOL_WORDS);
    if (!Number.isInteger(msg.call) || msg.call < 1 || Atomics.load(words, 1) !== msg.call) return; // not the call waited for
    const ok = msg.status === "ok";
    const bytes = new TextEncoder().encode(ok ? (typeof msg.text === "string" ? msg.text : "null") : String(msg.message || "the tool failed"));
    let kind = ok ? 1 : 2;
    if (TOOL_HEADER + bytes.length > buffer.maxByteLength) kind = 3;
    else {
      if (TOOL_HEADER + bytes.length > buffer.byteLength) buffer.grow(TOOL_HEADER + bytes.length);
      new Uint8Array(buffer, TOOL_HEADER, bytes.length).set(bytes);
    }
    words[2] = kind;
    words[3] = bytes.length;
    words[4] = msg.capped === true ? 1 : 0;
    Atomics.store(words, 0, msg.call);
    Atomics.notify(words, 0);
  }

  /** A worker from the page's files, sent its boot call (id 0) with the port the page
   * made for it: it answers the page over that port, never here.
   * @param {string} name @param {MessagePort} port @param {Record<string, any>} config */
  function startWorker(name, port, config) {
    const source = /** @type {NonNullable<typeof boot>} */ (boot);
    const url = URL.createObjectURL(source.workerSource);
    const started = new Worker(url, { name });
    URL.revokeObjectURL(url);
    started.onmessage = null; // only the model's code posts to self: nobody listens
    const end = connect(started);
    ends.set(started, end);
    end.send("boot", { runtime: source.runtime, config }, { id: 0, transfer: [port] });
    return started;
  }

  /** What is left in this frame's site storage (the site-of-its-own mode), as a sentence,
   * or null when it is empty. Checked after wiping it, so that a cell's leftovers from
   * before a restart are gone too. A store the browser denies this frame (an opaque
   * origin; a browser that blocks third-party storage) holds nothing anyone here can
   * read or write: empty.
   * @returns {Promise<string | null>} */
  async function leftovers() {
    if (self.origin === "null") return null;
    /** @type {string[]} */
    const left = [];
    /** @param {string} what @param {() => Promise<number>} wipeAndCount */
    const check = async (what, wipeAndCount) => {
      try {
        const count = await wipeAndCount();
        if (count) left.push(`${count} ${what}`);
      } catch (err) {
        // The browser denies this store to the frame (and so to its workers): nothing in it.
        if (/SecurityError|NotAllowedError|denied/.test(`${err && /** @type {any} */ (err).name} ${err && /** @type {any} */ (err).message}`)) return;
        left.push(`${what} that could not be checked (${String((err && /** @type {any} */ (err).message) || err)})`);
      }
    };
    await check("localStorage keys", async () => {
      localStorage.clear();
      return localStorage.length;
    });
    await check("IndexedDB databases", async () => {
      for (const { name } of await indexedDB.databases()) if (name) await gone(indexedDB.deleteDatabase(name));
      return (await indexedDB.databases()).length;
    });
    await check("caches", async () => {
      for (const key of await caches.keys()) await caches.delete(key);
      return (await caches.keys()).length;
    });
    await check("service workers", async () => {
      for (const reg of await navigator.serviceWorker.getRegistrations()) await reg.unregister();
      return (await navigator.serviceWorker.getRegistrations()).length;
    });
    await check("files in the origin's private file system", async () => {
      const opfs = /** @type {any} */ (await navigator.storage.getDirectory());
      for await (const name of opfs.keys()) await opfs.removeEntry(name, { recursive: true });
      let count = 0;
      for await (const _name of opfs.keys()) count += 1;
      return count;
    });
    return left.length ? `the sandbox site's storage is not empty (${left.join(", ")}); close every Reckon tab and reload` : null;
  }

  /** @param {IDBOpenDBRequest} req */
  const gone = (req) => new Promise((resolve) => {
    req.onsuccess = req.onerror = req.onblocked = () => resolve(null);
  });

  /** Start the sandbox's worker, once the site's storage is empty; if it is not, no
   * worker starts and the page's boot call gets the reason as its reply.
   * @param {MessagePort} port */
  async function start(port) {
    const turn = ++starts;
    const problem = await leftovers();
    if (turn !== starts) return port.close(); // another start came meanwhile: it wins
    const source = /** @type {NonNullable<typeof boot>} */ (boot);
    if (problem) {
      // The page's boot call (id 0) gets the reason, answered as the worker would.
      /** @type {import("../shared/seam.js").Handlers<Pick<import("../shared/protocol.js").SandboxApi, "boot">>} */
      const refuse = { boot: () => ({ status: "error", message: problem }) };
      await serve(port, refuse).answer({ type: "call", id: 0, method: "boot" });
      port.close();
      return;
    }
    // A new worker, a new buffer: what the page still answers for the old one lands in
    // the old one.
    toolReplies = signal ? new SharedArrayBuffer(TOOL_HEADER + 65_536, { maxByteLength: TOOL_HEADER + TOOL_REPLY_MAX }) : null;
    worker = startWorker("reckon-sandbox", port, { ...source.config, interruptBuffer: signal ? signal.buffer : null, toolReplies });
    worker.onerror = (ev) => {
      ev.preventDefault();
      if (page) page.notify("crash", { message: String(ev.message || "the sandbox worker crashed") });
    };
  }

  /** Notes that start a worker come with its port; without one they mean nothing.
   * @param {(msg: Record<string, any>, port: MessagePort) => void} fn @returns {import("../shared/seam.js").OnMessage} */
  const withPort = (fn) => (msg, ports) => {
    if (ports[0]) fn(msg, ports[0]);
  };

  /** The page's notes (PROTOCOL.md §3), each one way. @type {Record<string, import("../shared/seam.js").OnMessage>} */
  const notes = {
    "frame-start": withPort((msg, port) => {
      if (worker) worker.terminate(); // a start again, with other files (the page's fallback)
      worker = null;
      boot = { workerSource: msg.workerSource, runtime: msg.runtime, config: msg.config };
      start(port);
    }),
    "frame-restart": withPort((msg, port) => {
      if (!boot) return;
      if (worker) worker.terminate();
      worker = null;
      if (msg.snapshot !== undefined) boot.config = { ...boot.config, snapshot: msg.snapshot };
      start(port);
    }),
    // A second, short-lived worker that only makes the warm-start snapshot and ends;
    // it runs no cell. Its errors are its own: the sandbox is not affected.
    "frame-snapshot": withPort((_msg, port) => {
      if (!boot) return;
      const maker = startWorker("reckon-snapshot", port, { ...boot.config, snapshot: null, makeSnapshot: true, interruptBuffer: null });
      maker.onerror = (e) => e.preventDefault();
    }),
    // Booted like the sandbox's worker, with the page's port; nobody's cells ran in it.
    "frame-fresh": withPort((msg, port) => {
      if (!boot) return;
      if (fresh) fresh.terminate();
      fresh = startWorker("reckon-fresh", port, { ...boot.config, kernel: { ...boot.config.kernel, ...msg.kernel }, warm: false, interruptBuffer: null });
      fresh.onerror = (e) => e.preventDefault();
    }),
    "frame-fresh-end": () => {
      if (fresh) fresh.terminate();
      fresh = null;
    },
    // Kept for restarts, and forwarded now: the worker installs them when idle.
    addRuntime: ({ type: _type, ...fields }) => {
      if (boot) Object.assign(boot.runtime, fields.files);
      for (const target of [worker, fresh]) if (target) ends.get(target)?.notify("addRuntime", fields);
    },
    "frame-interrupt": () => {
      if (signal) Atomics.store(signal, 0, 2);
      // A cell waiting for a tool without await wakes now, not at its next look.
      if (toolReplies) Atomics.notify(new Int32Array(toolReplies, 0, TOOL_WORDS), 0);
    },
    "frame-tool-result": (msg) => {
      if (toolReplies) answerTool(toolReplies, msg);
    },
  };

  /** The frame's one call (FrameApi). @type {import("../shared/seam.js").Handlers<import("../shared/protocol.js").FrameApi>} */
  const methods = {
    // The page's heartbeat: a frame whose renderer died (out of memory, killed by the
    // OS) never answers, and the page replaces it.
    "frame-ping": () => ({ status: "ok" }),
  };

  window.addEventListener("message", (ev) => {
    // Only the embedding page, and only once: it hands us the port we answer on.
    if (page || ev.source !== window.parent || !ev.data || ev.data.type !== "frame-connect") return;
    if (!(ev.ports && ev.ports[0])) return;
    page = serve(ev.ports[0], methods, { on: notes });
    page.notify("frame-ready", { crossOriginIsolated: self.crossOriginIsolated === true });
  });
})();
