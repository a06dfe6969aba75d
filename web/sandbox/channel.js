// The page's channels to the sandbox: the opaque-origin frame and its port, a private
// MessagePort per worker, the requests in the order sent (only the head may stream,
// start or be answered: OrderedRpc), the heartbeat. Everything from the worker is only data.

import { OrderedRpc } from "../shared/protocol.js";
import { liveText } from "./results.js";
import { SandboxRuntime } from "./runtime.js";

// A live frame answers a ping at once (its main thread runs no Python). One that does
// not answer in this long while requests wait, or after a restart, is dead: replaced.
const PING_MS = 10_000;
const HEARTBEAT_MS = 5_000;
// A worker with nothing else to do says `received` for a request within milliseconds.
// One that does not, while that request is the first in line, is busy with work a cell
// left behind (a setTimeout or setInterval loop, an asyncio task that never awaits):
// it would never start the request (the third outside attack waited 120 s). Replaced.
const BUSY_MS = 4_000;
const DEAD_FRAME = "The sandbox stopped responding (its renderer may have run out of memory or been ended by the system)";

export class SandboxChannel extends SandboxRuntime {
  /** @param {{root: URL, container: HTMLElement}} options */
  constructor({ root, container }) {
    super({ root });
    this.container = container;
    /** @type {HTMLIFrameElement | null} */
    this.frame = null;
    /** @type {MessagePort | null} the frame's own port (frame-* messages) */
    this.port = null;
    this.crossOriginIsolated = false;
    /** @type {MessagePort | null} the private channel to the current worker (see boot()) */
    this.workerPort = null;
    /** @type {Record<string, any>} the boot config (client.js fills it) */
    this.config = {};
    /** @type {Blob | null} */
    this.workerSource = null;
    // Each pending call keeps {onStream, collected, started?} for its events (see onMessage).
    this.rpc = new OrderedRpc((msg, transfer) => this.workerPort.postMessage(msg, transfer));
    /** @type {Set<number>} the current worker's requests it said it has received */
    this.received = new Set();
    /** @type {{id: number, timer: ReturnType<typeof setTimeout>} | null} the busy watch on the head */
    this.busyWatch = null;
    const call = this.rpc.call.bind(this.rpc);
    this.rpc.call = (...args) => {
      const reply = call(...args);
      this.watchHead();
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
    /** @type {Map<number, (alive: boolean) => void>} */
    this.pongs = new Map();
    this.pingCount = 0;
    /** @type {ReturnType<typeof setInterval> | null} */
    this.heartbeat = null;
    this.replacing = false;
    this.closed = false;
  }

  /** Replace the worker (recovery.js overrides this).
   * @param {string} reason @param {string | null} [message] @param {number | null} [runId] @returns {Promise<unknown>} */
  recover(reason, message = null, runId = null) {
    void reason, void message, void runId;
    return Promise.reject(new Error("no recovery"));
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
   * so: an import that needs them then fails with this message instead of waiting forever. */
  handOver(names, options = {}) {
    this.handed = [...new Set([...(this.handed || []), ...names])]; // a new frame needs them again
    this.fetchRuntime(names, options).then(
      (files) => this.port.postMessage({ type: "addRuntime", files }),
      (err) => this.port.postMessage({ type: "addRuntime", files: {}, failed: names, message: String((err && err.message) || err) }),
    );
  }

  openFrame() {
    return new Promise((resolve, reject) => {
      const frame = document.createElement("iframe");
      frame.setAttribute("sandbox", "allow-scripts");
      frame.setAttribute("allow", "cross-origin-isolated");
      frame.setAttribute("aria-hidden", "true");
      frame.title = "Reckon sandbox";
      frame.style.display = "none";
      frame.src = new URL("sandbox.html", this.root).href;
      frame.addEventListener("load", () => {
        const channel = new MessageChannel();
        channel.port1.onmessage = (ev) => {
          if (ev.data && ev.data.type === "frame-ready") {
            this.crossOriginIsolated = ev.data.crossOriginIsolated === true;
            channel.port1.onmessage = (e) => this.onFrameMessage(e.data);
            resolve(channel.port1);
          }
        };
        // "*" because the frame's origin is opaque ("null"); the port is the channel.
        frame.contentWindow.postMessage({ type: "frame-connect" }, "*", [channel.port2]);
      }, { once: true }); // a document loaded later in this frame is not ours: no port for it
      frame.addEventListener("error", () => reject(new Error("the sandbox frame failed to load")));
      this.container.appendChild(frame);
      this.frame = frame;
    });
  }

  boot(kind) {
    // The frame sends the worker its boot call (id 0) with the port made here.
    this.bootPromise = this.rpc.begin(0).then((reply) => (reply.status === "ok" ? reply : Promise.reject(new Error(reply.message))));
    // A fresh channel per worker: the worker gets one end with its boot request and
    // nothing else can write to it. Whatever the old worker still sends is dropped.
    if (this.workerPort) this.workerPort.close();
    this.received = new Set();
    this.watchHead();
    const channel = new MessageChannel();
    const workerPort = channel.port1;
    workerPort.onmessage = (ev) => {
      if (workerPort === this.workerPort) this.onMessage(ev.data);
    };
    this.workerPort = workerPort;
    const lazyPackages = this.info.sandbox.all_packages.filter((name) => !this.info.sandbox.packages.includes(name));
    const config = { ...this.config, indexURL: new URL("pyodide/", this.root).href, packages: this.info.sandbox.packages, lazyFiles: this.lazy, heldBack: this.heldBack, lazyPackages, sqlFiles: this.info.sandbox.sql_files || [] };
    if (kind === "frame-start") this.port.postMessage({ type: kind, workerSource: this.workerSource, runtime: this.runtime, config }, [channel.port2]);
    else this.port.postMessage({ type: kind, snapshot: this.config.snapshot || null }, [channel.port2]);
    return this.bootPromise;
  }

  /** A worker waits for a file the page holds back: the boot's package files (it could
   * not restore the snapshot) or the rest of the stack (not idle yet). Each is sent
   * once; the frame keeps them for restarts. */
  handHeld() {
    if (this.heldBack.length) this.handOver(this.heldBack.splice(0));
    if (this.heldRest && this.heldRest.length) this.handOver(this.heldRest.splice(0));
  }

  /** From the frame itself: a real worker error ("crash"), or the heartbeat's answer. */
  onFrameMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "frame-pong") {
      const waiter = this.pongs && this.pongs.get(msg.n);
      if (waiter) waiter(true);
      return;
    }
    if (msg.type === "crash") this.recover("crash", typeof msg.message === "string" ? msg.message : null);
  }

  /** Does the frame answer within `ms`? (A dead renderer never does.) */
  frameAlive(ms = PING_MS) {
    if (!this.port) return Promise.resolve(false);
    this.pongs = this.pongs || new Map();
    const n = (this.pingCount = (this.pingCount || 0) + 1);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), ms);
      const done = (alive) => {
        clearTimeout(timer);
        this.pongs.delete(n);
        resolve(alive);
      };
      this.pongs.set(n, done);
      this.port.postMessage({ type: "frame-ping", n });
    });
  }

  /** While requests wait, check now and then that the frame is still there. */
  startHeartbeat() {
    if (this.heartbeat) return;
    let checking = false;
    this.heartbeat = setInterval(async () => {
      if (checking || this.closed || this.replacing || !this.rpc.pending.size) return;
      checking = true;
      try {
        if (!(await this.frameAlive()) && !this.closed && !this.replacing) {
          this.recover("crash", DEAD_FRAME);
        }
      } finally {
        checking = false;
      }
    }, HEARTBEAT_MS);
  }

  /** Watch the request first in line (not a boot): if the worker does not say it has
   * received it within BUSY_MS, the worker is busy with a cell's leftovers: replaced. */
  watchHead() {
    const head = this.rpc.head;
    if (this.busyWatch && this.busyWatch.id === head) return;
    if (this.busyWatch) clearTimeout(this.busyWatch.timer);
    this.busyWatch = null;
    if (head === undefined || head === 0 || this.received.has(head) || this.closed) return;
    const timer = setTimeout(async () => {
      this.busyWatch = null;
      const stuck = () => this.rpc.head === head && !this.received.has(head) && !this.replacing && !this.closed;
      if (!stuck()) return;
      // A dead frame answers nothing either: that is not a busy worker.
      const alive = await this.frameAlive(BUSY_MS);
      if (!stuck()) return;
      if (alive) this.recover("busy", null, head);
      else this.recover("crash", DEAD_FRAME);
    }, BUSY_MS);
    this.busyWatch = { id: head, timer };
  }

  /** From the current worker, over its private channel. Still treated as data. */
  onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "received" && typeof msg.id === "number") {
      // Said as soon as a request arrives, before the queue: any id the worker got.
      this.received.add(msg.id);
      if (this.busyWatch && this.busyWatch.id === msg.id) this.watchHead();
      return;
    }
    // The worker handles one request at a time, in order: anything about a request
    // that is not the one being handled is not the worker's own doing. Ignore it.
    if (msg.id !== this.rpc.head) return;
    if (msg.type === "need-files" && Array.isArray(msg.files)) {
      // DuckDB's files (sql.js), asked for by name on the first SQL: sent once.
      const sql = (this.info && this.info.sandbox.sql_files) || [];
      const wanted = msg.files.filter((name) => sql.includes(name) && !(this.handed || []).includes(name));
      if (wanted.length) this.handOver(wanted);
    } else if (msg.type === "need-files") {
      this.handHeld();
    } else if (msg.type === "stream") {
      const entry = this.rpc.pending.get(msg.id);
      if (!entry || !entry.collected || typeof msg.text !== "string" || (msg.name !== "stdout" && msg.name !== "stderr")) return;
      const text = liveText(entry.collected, msg.name, msg.text);
      if (!text) return;
      if (entry.onStream) entry.onStream(msg.name, text);
      this.dispatchEvent(new CustomEvent("stream", { detail: { id: msg.id, name: msg.name, text } }));
    } else if (msg.type === "started") {
      const entry = this.rpc.pending.get(msg.id);
      if (entry && entry.started) entry.started();
    } else if (msg.type === "reply") {
      const entry = this.rpc.pending.get(msg.id);
      if (entry && msg.restartNeeded && entry.method && entry.method !== "run") {
        // The interpreter died under a file request: answer it, then replace the worker.
        this.rpc.settle(msg.id, { status: "error", message: typeof msg.error === "object" && msg.error ? String(msg.error.message) : "the sandbox crashed" });
        this.recover("crash", null);
        return;
      }
      this.rpc.take(msg);
      this.watchHead();
    }
  }
}
