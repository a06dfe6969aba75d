// The page's channels to the sandbox: the opaque-origin frame and its port, a private
// MessagePort per worker, the requests in the order sent (only the head may stream,
// start or be answered: an ordered `connect`, web/shared/seam.js). Everything from
// the worker is only data (what it says: worker-events.js). One part of the Sandbox
// (client.js): it reads the runtime's files, and calls `recover` (recovery.js, through
// the Sandbox) when it finds the worker or the frame dead or stuck (its watches:
// watch.js).

import { connect } from "../shared/seam.js";
import { CLOSED } from "./results.js";
import { ChannelWatch } from "./watch.js";
import { headReply, workerEvents } from "./worker-events.js";

/** @typedef {import("./runtime.js").SandboxRuntime} SandboxRuntime */
/** @typedef {import("./runtime.js").Emit} Emit */
/** @typedef {(reason: string, message?: string | null, runId?: number | null) => Promise<unknown>} Recover */
/** @typedef {import("../shared/seam.js").Caller<import("../shared/protocol.js").FrameApi>} FramePort */

// A live frame answers a ping at once (its main thread runs no Python). One that does
// not answer in this long while requests wait, or after a restart, is dead: replaced.
const PING_MS = 10_000;
// How long a loaded frame on a site of its own may take to say it is ready (it runs
// one small script; on a busy machine seconds).
const SITE_MS = 30_000;

export class SandboxChannel {
  /** @param {{runtime: SandboxRuntime, container: HTMLElement, config: Record<string, any>, emit: Emit, recover: Recover}} options */
  constructor({ runtime, container, config, emit, recover }) {
    this.runtime = runtime;
    this.container = container;
    /** @type {Record<string, any>} the boot config (the Sandbox's, shared) */
    this.config = config;
    this.emit = emit;
    this.recover = recover;
    /** @type {HTMLIFrameElement | null} */
    this.frame = null;
    /** @type {FramePort | null} the frame's own port (its notes and its call) */
    this.port = null;
    this.crossOriginIsolated = false;
    /** @type {MessagePort | null} the private channel to the current worker (see boot()) */
    this.workerPort = null;
    /** @type {Blob | null} */
    this.workerSource = null;
    // Each pending call keeps {onStream, collected, started?} for its events (worker-events.js).
    /** @type {import("../shared/seam.js").Caller<import("../shared/protocol.js").SandboxApi>} */
    this.rpc = connect(null, { ordered: true, on: workerEvents(this), onReply: (msg, entry) => headReply(this, msg, entry) });
    this.watch = new ChannelWatch({ channel: this, recover });
    const call = this.rpc.call.bind(this.rpc);
    this.rpc.call = (method, args, options) => {
      const reply = call(method, args, options);
      this.watch.watchHead();
      return reply;
    };
    /** @type {Promise<any> | null} */
    this.bootPromise = null;
    /** @type {string[]} runtime files held back: the boot's packages, the rest of the stack */
    this.heldBack = [];
    /** @type {string[]} */
    this.heldRest = [];
    /** @type {string[]} files the worker may ask for later (config.lazyFiles) */
    this.lazy = [];
    /** @type {string[]} files handed over so far: a new frame needs them again */
    this.handed = [];
    /** @type {import("../tools.js").ToolHost | null} the page's host tools (web/tools.js), set by createReckon */
    this.tools = null;
    this.replacing = false; // set by recovery.js while it replaces the worker
    this.closed = false;
  }

  /** Shut down for good: what was pending ends with a "closed" error, the frame and its
   * worker go (their memory with them). */
  close() {
    this.closed = true;
    for (const [id, entry] of [...this.rpc.pending]) {
      if (entry.method === "run") this.rpc.settle(id, { status: "error", error: { type: "SandboxClosed", message: CLOSED, traceback: "", line: null } });
      else this.rpc.settle(id, { status: "error", message: CLOSED });
    }
    this.rpc.clear();
    this.watch.stop();
    if (this.workerPort) this.workerPort.close();
    if (this.port) this.port.close();
    if (this.frame) this.frame.remove();
    this.heldRest = [];
  }

  /** The frame is up and the worker's script fetched: what the first boot sends, and
   * the package files held back (with a snapshot) or to be asked for later.
   * @param {{port: FramePort, workerSource: Blob, heldBack: string[], lazy: string[]}} start */
  prepare({ port, workerSource, heldBack, lazy }) {
    this.port = port;
    this.workerSource = workerSource;
    this.heldBack = heldBack;
    this.lazy = lazy;
  }

  /** Boot as without a snapshot: the boot's package files handed over at once, not held
   * back (the kept snapshot would not start). @param {string[]} eager */
  bootCold(eager) {
    this.heldBack = [];
    this.lazy = [...eager, ...this.lazy];
    const booted = this.boot("frame-start");
    this.handOver(eager);
    return booted;
  }

  /** Whether the call `id` still waits for its reply. @param {number} id */
  isPending(id) {
    return this.rpc.pending.has(id);
  }

  /** Resolves true once no request has been sent or answered for `ms`; false if closed. */
  async whenIdle(ms = 2000) {
    for (;;) {
      const sent = this.rpc.nextId;
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (this.closed) return false;
      if (this.rpc.order.length === 0 && this.rpc.nextId === sent) return true;
    }
  }

  /** Fetch runtime files for the worker. If they cannot be had, the worker is told
   * so: an import that needs them then fails with this message instead of waiting forever.
   * @param {string[]} names @param {{report?: boolean, stream?: boolean}} [options] */
  handOver(names, options = {}) {
    const port = /** @type {FramePort} */ (this.port);
    this.handed = [...new Set([...this.handed, ...names])]; // a new frame needs them again
    this.runtime.fetchRuntime(names, options).then(
      (files) => port.notify("addRuntime", { files }),
      (err) => port.notify("addRuntime", { files: {}, failed: names, message: String((err && err.message) || err) }),
    );
  }

  /** @returns {Promise<FramePort>} */
  openFrame() {
    return new Promise((resolve, reject) => {
      const frame = document.createElement("iframe");
      // A site of its own when the relay gives the sandbox one (runtime.js, load):
      // another origin and another process, kept empty by the relay's headers and
      // checked empty by the frame. Else an opaque origin (SECURITY.md).
      const site = this.runtime.sandboxOrigin;
      if (!site) frame.setAttribute("sandbox", "allow-scripts");
      frame.setAttribute("allow", "cross-origin-isolated");
      frame.setAttribute("aria-hidden", "true");
      frame.title = "Reckon sandbox";
      frame.style.display = "none";
      frame.src = new URL("sandbox.html", site || this.runtime.root).href;
      frame.addEventListener("load", () => {
        const channel = new MessageChannel();
        /** @type {import("../shared/seam.js").Caller<import("../shared/protocol.js").FrameApi>} */
        const port = connect(channel.port1, {
          on: {
            "frame-ready": (msg) => {
              clearTimeout(silent);
              this.crossOriginIsolated = msg.crossOriginIsolated === true;
              resolve(port);
            },
            // A real worker error, which the frame saw.
            crash: (msg) => this.recover("crash", typeof msg.message === "string" ? msg.message : null),
          },
        });
        // "*" for the opaque frame (its origin is "null"); the port is the channel.
        /** @type {Window} */ (frame.contentWindow).postMessage({ type: "frame-connect" }, site || "*", [channel.port2]);
        // A sandbox site that will not be framed here (its frame-ancestors), or that is
        // not this relay, loads an error page that never answers: say so, not hang.
        const silent = site ? setTimeout(() => reject(new Error(`the sandbox site ${site} did not answer; it must be served by the relay that served this page (reckon serve --sandbox-origin), reachable from this browser, and allow this page to frame it`)), SITE_MS) : undefined;
      }, { once: true }); // a document loaded later in this frame is not ours: no port for it
      frame.addEventListener("error", () => reject(new Error("the sandbox frame failed to load")));
      this.container.appendChild(frame);
      this.frame = frame;
    });
  }

  /** Start a worker in the frame ("frame-start": with the files; "frame-restart": again).
   * @param {"frame-start" | "frame-restart"} kind */
  boot(kind) {
    const port = /** @type {FramePort} */ (this.port);
    // The frame sends the worker its boot call (id 0) with the port made here.
    this.bootPromise = this.rpc.begin(0).then((reply) => (reply.status === "ok" ? reply : Promise.reject(new Error(reply.message))));
    // A fresh channel per worker: the worker gets one end with its boot request and
    // nothing else can write to it. Whatever the old worker still sends is dropped.
    if (this.workerPort) this.workerPort.close();
    this.watch.reset();
    const channel = new MessageChannel();
    this.workerPort = channel.port1;
    this.rpc.attach(channel.port1);
    const { info, root } = this.runtime;
    const lazyPackages = info.sandbox.all_packages.filter((name) => !info.sandbox.packages.includes(name));
    const config = { ...this.config, indexURL: new URL("pyodide/", root).href, packages: info.sandbox.packages, lazyFiles: this.lazy, heldBack: this.heldBack, lazyPackages, sqlFiles: info.sandbox.sql_files || [] };
    if (kind === "frame-start") port.notify(kind, { workerSource: this.workerSource, runtime: this.runtime.blobs, config }, [channel.port2]);
    else port.notify(kind, { snapshot: this.config.snapshot || null }, [channel.port2]);
    return this.bootPromise;
  }

  /** A worker waits for a file the page holds back: the boot's package files (it could
   * not restore the snapshot) or the rest of the stack (not idle yet). Each is sent
   * once; the frame keeps them for restarts. */
  handHeld() {
    if (this.heldBack.length) this.handOver(this.heldBack.splice(0));
    if (this.heldRest.length) this.handOver(this.heldRest.splice(0));
  }

  /** A new worker in the live frame, with the snapshot the config holds (if any);
   * `remount` sends the uploads right behind its boot request.
   * @param {() => Promise<unknown>[]} remount */
  restartWorker(remount) {
    const booted = this.boot("frame-restart");
    return Promise.all([booted, ...remount()]);
  }

  /** A new frame for a dead one: the worker, Pyodide's files and the packages handed
   * over again (the browser's HTTP cache has them), then `remount`. What was pending
   * ends, but for a boot, which ends with the new one.
   * @param {() => Promise<unknown>[]} remount */
  async replaceFrame(remount) {
    const previous = this.rpc.pending.get(0); // a restart that never booted: it ends with this boot
    for (const id of [...this.rpc.pending.keys()]) {
      if (id !== 0) this.rpc.settle(id, { status: "error", message: "the sandbox frame was replaced" });
    }
    this.rpc.clear();
    if (this.frame) this.frame.remove();
    this.port = await this.openFrame();
    const booted = this.boot("frame-start");
    if (this.handed.length) this.handOver([...this.handed]);
    const mounts = remount();
    try {
      const [reply] = await Promise.all([booted, ...mounts]);
      if (previous) previous.resolve(reply);
    } catch (err) {
      if (previous) previous.resolve({ type: "reply", id: 0, status: "error", message: String((err && /** @type {any} */ (err).message) || err) });
      throw err;
    }
  }

  /** Stop the running cell softly (KeyboardInterrupt, state kept) if the frame is
   * cross-origin isolated: false when it is not (the worker must be replaced). */
  interruptSoftly() {
    if (!this.crossOriginIsolated) return false;
    if (this.port) this.port.notify("frame-interrupt");
    return true;
  }

  /** Does the frame answer within `ms`? (A dead renderer never does.) */
  async frameAlive(ms = PING_MS) {
    if (!this.port) return false;
    const reply = await this.port.call("frame-ping", {}, { timeoutMs: ms, late: { status: "dead" } });
    return reply.status === "ok";
  }

  /** While requests wait, check now and then that the frame is still there (watch.js). */
  startHeartbeat() {
    this.watch.startHeartbeat();
  }
}
