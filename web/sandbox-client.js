// The page's side of the sandbox: one opaque-origin frame, one worker inside it.
// Message shapes: PROTOCOL.md §3. Everything that comes back from the worker is
// untrusted (the model's code runs there): it is only ever treated as data.

import { call } from "./protocol.js";
import { canKeep, dropSnapshots, keepRuntime, loadRuntime, loadSnapshot, markChecked, saveSnapshot, snapshotKey } from "./snapshot-store.js";

const DEFAULT_TIMEOUT_MS = 60_000;
const GRACE_MS = 3_000; // after the deadline's KeyboardInterrupt, before the worker is ended
const BACKSTOP_MS = 15_000; // beyond the queue's own limits, for a cell that never starts
// A live frame answers a ping at once (its main thread runs no Python). One that does
// not answer in this long while requests wait, or after a restart, is dead: replaced.
const PING_MS = 10_000;
const HEARTBEAT_MS = 5_000;
const RESTART_DEADLINE_MS = 120_000;
const CLOSED = "this Reckon was closed (close()); create a new one to run code";

/** @typedef {import("./protocol.js").RunResult} RunResult */

export class Sandbox extends EventTarget {
  /**
   * `snapshot: false` turns snapshot starts off (README "Fast starts").
   * @param {{root?: URL, container?: HTMLElement, memoryLimitMB?: number, outputLimit?: number, snapshot?: boolean}} [options]
   */
  constructor({ root = new URL("./", import.meta.url), container = document.body, memoryLimitMB = 2048, outputLimit = 100_000, snapshot = true } = {}) {
    super();
    this.snapshotEnabled = snapshot !== false;
    // Over a network the build's snapshot goes as its gzip copies (55 MB, not 185 MB),
    // unpacked here; on this machine unpacking would cost more than it saves.
    this.compressed = typeof DecompressionStream === "function" && !isLoopback(root.hostname);
    /** Resolves with {status: "saved" | "failed" | "restored" | "rejected" | "off", ...} once this visit's snapshot work is done. */
    this.snapshotDone = null;
    this.root = root;
    this.container = container;
    this.config = { memoryLimitMB, kernel: { output_limit: outputLimit } };
    // Enforced here too: the kernel's limit lives inside the sandbox, where a cell can
    // raise it (the second outside attack put 40 MB into the chat that way).
    this.outputLimit = outputLimit;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, onStream, run}
    // Ids in the order they were sent to the current worker, which handles them one
    // at a time in that order: only the head may stream, start or be answered.
    this.order = [];
    this.workerPort = null; // the private channel to the current worker (see boot())
    this.files = new Map(); // path -> Blob/File, re-mounted after a restart
    this.port = null;
    this.info = null;
    this.bootPromise = null;
    this.closed = false;
    this.whenClosed = new Promise((_, reject) => (this.rejectClosed = reject));
    this.whenClosed.catch(() => {});
    this.readyPromise = null;
    this.crossOriginIsolated = false;
    this.startMs = 0;
    // Set while the worker is being replaced and rebuilt: requests wait for it, so no
    // cell runs before the files (and, with persistence, the variables) are back.
    /** @type {Promise<unknown>} */
    this.gate = Promise.resolve();
    this.hookDepth = 0; // > 0 while afterRestart runs (a replay in progress)
    /** Called once the first worker is up, before ready() resolves (persistence restores files here).
     * @type {((sandbox: Sandbox) => Promise<void>) | null} */
    this.afterStart = null;
    /** Called after every worker replacement, before waiting requests go on.
     * @type {((reason: string, options: {nested: boolean}) => Promise<void>) | null} */
    this.afterRestart = null;
    /** Called after each recorded run, before its result is handed back.
     * @type {((code: string, result: RunResult) => Promise<void>) | null} */
    this.afterRun = null;
    /** Whether a replacement rebuilds the variables (changes what the messages say). */
    this.rebuildsState = false;
  }

  /** Resolves when the sandbox can run code. Starts it on first call. */
  ready() {
    if (this.closed) return Promise.reject(new Error(CLOSED));
    if (!this.readyPromise) this.readyPromise = this.start();
    return this.readyPromise;
  }

  /** Shut down for good: the frame and its worker go (their memory with them), what
   * was pending ends with a "closed" error, and later requests get the same answer. */
  close() {
    if (this.closed) return;
    this.closed = true;
    this.rejectClosed(new Error(CLOSED));
    for (const [id, entry] of this.pending) {
      if (id === 0) entry.resolve({ status: "error", message: CLOSED });
      else if (entry.msg.type === "run") entry.resolve({ status: "error", error: { type: "SandboxClosed", message: CLOSED, traceback: "", line: null } });
      else entry.resolve({ status: "error", message: CLOSED });
    }
    this.pending.clear();
    this.order = [];
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.workerPort) this.workerPort.close();
    if (this.port) this.port.close();
    if (this.frame) this.frame.remove();
    this.heldRest = [];
  }

  async start() {
    const t0 = performance.now();
    // The frame and the worker's script do not depend on the build info: under way first.
    const framing = Promise.all([this.openFrame(), fetch(new URL("sandbox-worker.js", this.root)).then((r) => r.blob())]);
    framing.catch(() => {});
    // The worker's installer for the rest of the stack; without it, Pyodide's loadPackage.
    const installer = fetch(new URL("sandbox-install.js", this.root)).then((r) => (r.ok ? r.blob() : null), () => null);
    const recipe = this.snapshotEnabled ? fetch(new URL("sandbox-snapshot.js", this.root)).then((r) => (r.ok ? r.blob() : null)) : null;
    if (recipe) recipe.catch(() => {});
    this.info = await (await fetch(new URL("build-info.json", this.root), { cache: "no-cache" })).json();
    const core = this.coreNames();
    const eager = this.info.sandbox.eager_files;
    const lazy = [...this.info.sandbox.files, ...(this.info.sandbox.rest_files || [])].filter((name) => !eager.includes(name));
    const size = (names) => names.reduce((sum, n) => sum + (this.info.sizes[n] || 0), 0);
    this.progress = { loaded: 0, total: size(core) }; // grows once the plan is known
    // Three ways to a ready interpreter, fastest first: the snapshot an earlier visit
    // kept, the snapshot the build ships, a cold boot (README "Fast starts"). With a
    // snapshot the package files are not needed to start: they are held back, and sent
    // only if the worker cannot restore it and boots cold after all.
    const plan = await this.findSnapshot(recipe);
    // A kept snapshot has Pyodide's own files kept beside it: no fetch at all.
    const kept = plan === "kept" ? await loadRuntime(this.root, this.snapshotKey, Object.fromEntries(core.map((name) => [name, this.info.sizes[name]]))) : null;
    if (kept) this.progress.loaded += size(core);
    this.runtimeKept = Boolean(kept);
    const coreFetched = kept ? Promise.resolve(kept) : this.fetchRuntime(core, { report: true });
    coreFetched.catch(() => {});
    this.heldBack = plan ? [...eager] : [];
    this.lazy = plan ? lazy : [...eager, ...lazy];
    this.progress.total += size(plan === "build" ? Object.values(this.shippedFiles()) : plan ? [] : eager);
    const [runtime, [port, workerSource], snapshot] = await Promise.race([
      Promise.all([coreFetched, framing, plan === "build" ? this.fetchShippedSnapshot() : this.config.snapshot]),
      this.whenClosed, // a frame removed before it loaded never says so
    ]);
    this.config.snapshot = snapshot;
    this.config.installSource = await installer;
    this.port = port;
    this.runtime = runtime;
    this.workerSource = workerSource;
    const bootAt = performance.now();
    const booted = this.boot("frame-start");
    if (!plan) this.handOver(eager, { report: true, stream: true });
    const reply = await booted.catch((err) => {
      if (!kept) throw err;
      return this.bootFromSite(core, eager); // the kept copies would not start
    });
    const repliedAt = performance.now();
    if (this.afterStart) await this.afterStart(this);
    // The rest of the stack (scipy, scikit-learn, pyarrow, sympy…) once the sandbox has
    // been idle a moment (the worker installs it as soon as it arrives, and a cell sent
    // meanwhile would wait for that), or at once when a cell needs one of its files.
    this.heldRest = [...lazy];
    this.whenIdle(1500).then((idle) => idle && this.heldRest.length && this.handOver(this.heldRest.splice(0)));
    this.startMs = performance.now() - t0;
    // Page-clock ms (fetched, boot, workerStart, replied) and worker-clock ms since its start.
    const workerStart = reply.marks.workerStart - performance.timeOrigin;
    this.bootMarks = { fetched: this.fetchedMs, boot: bootAt, ...reply.marks, workerStart, replied: repliedAt };
    this.startHeartbeat();
    this.dispatchEvent(new CustomEvent("ready", { detail: { ms: this.startMs, versions: reply.versions } }));
    this.snapshotDone = this.afterBoot(reply.snapshot, plan);
    return reply;
  }

  /** Start again as on a first visit without a snapshot: Pyodide's files from the site,
   * the packages handed over, and nothing kept (a new snapshot is made once idle). */
  async bootFromSite(core, eager) {
    await dropSnapshots().catch(() => {});
    this.runtime = await this.fetchRuntime(core);
    this.runtimeKept = false;
    this.config.snapshot = null;
    this.heldBack = [];
    this.lazy = [...eager, ...this.lazy];
    const booted = this.boot("frame-start");
    this.handOver(eager);
    return booted;
  }

  /** Pyodide's own files: what every start needs, whatever the build put beside them. */
  coreNames() {
    return [...this.info.core, "pyodide-lock.json"];
  }

  /** Pyodide's own files among what the worker was given, to keep with a snapshot. */
  coreRuntime() {
    return Object.fromEntries(this.coreNames().filter((name) => this.runtime[name] instanceof Blob).map((name) => [name, this.runtime[name]]));
  }

  /** Which snapshot to start from: "kept" (Cache Storage, from an earlier visit),
   * "build" (shipped with the site) or null (boot cold). Sets config.snapshotSource. */
  async findSnapshot(recipe) {
    if (!this.snapshotEnabled || !recipe) return null;
    try {
      const source = await recipe;
      if (!source) return null;
      this.snapshotKey = await snapshotKey(this.info, source);
      this.config.snapshotSource = source;
      this.config.snapshot = await loadSnapshot(this.root, this.snapshotKey);
      if (this.config.snapshot) return "kept";
      const files = this.shippedFiles();
      return files.heap && files.fs && files.meta ? "build" : null;
    } catch {
      this.config.snapshot = null; // no snapshot: a cold boot, as without this feature
      return null;
    }
  }

  /** The build's snapshot files (build.py stage "snapshot"), or {} if it has none. As
   * downloaded: from a site off this machine, the gzip copies of the two big ones. */
  shippedFiles() {
    const shipped = this.info.sandbox.snapshot || {};
    const packed = (name) => (this.compressed && name && this.info.sizes[`${name}.gz`] ? `${name}.gz` : name);
    return { heap: packed(shipped.heap), fs: packed(shipped.fs), meta: shipped.meta };
  }

  /** Download the build's snapshot. On failure: null, and the worker boots cold. */
  async fetchShippedSnapshot() {
    try {
      const { heap, fs, meta } = this.shippedFiles();
      const got = await this.fetchRuntime([heap, fs, meta], { report: true, stream: true });
      const [snap, image] = await Promise.all([heap, fs].map((name) => unpacked(got[name], name, this.info.sizes)));
      return { meta: JSON.parse(await got[meta].text()), snap, fs: image };
    } catch {
      return null;
    }
  }

  /** After "ready": drop a snapshot the worker refused, or make one if there was none. */
  async afterBoot(outcome, plan) {
    const done = (detail) => {
      this.dispatchEvent(new CustomEvent("snapshot", { detail }));
      return detail;
    };
    if (!this.snapshotEnabled || !this.config.snapshotSource) return done({ status: "off" });
    // A snapshot that passed the worker's smoke test in this browser skips it next time.
    if (outcome && outcome.restored) this.config.snapshot.meta = { ...this.config.snapshot.meta, checkedIn: navigator.userAgent };
    if (outcome && outcome.restored && plan === "kept") {
      await markChecked(this.root, this.snapshotKey, this.config.snapshot.meta).catch(() => {});
      if (!this.runtimeKept) await keepRuntime(this.root, this.snapshotKey, this.coreRuntime()).catch(() => {});
      return done({ status: "restored", source: "kept" });
    }
    if (outcome && outcome.restored) {
      // Kept in Cache Storage for the next visit: the HTTP cache may not hold 185 MB.
      // Writing it is heavy: not while the person's first cells run.
      if (!(await this.whenIdle())) return done({ status: "restored", source: "build", message: CLOSED });
      try {
        this.config.snapshot = await saveSnapshot(this.root, this.snapshotKey, this.config.snapshot, this.coreRuntime());
      } catch (err) {
        // Not kept (no Cache Storage, little quota left): the next visit downloads it again.
        return done({ status: "restored", source: "build", message: String((err && err.message) || err) });
      }
      return done({ status: "restored", source: "build" });
    }
    if (outcome && outcome.error) {
      this.config.snapshot = null;
      await dropSnapshots().catch(() => {});
      if (plan === "kept") return done({ status: "rejected", message: String(outcome.error) }); // made again next visit
    }
    // Nowhere to keep one (no Cache Storage outside a secure context): do not make it.
    if (!canKeep()) return done({ status: "failed", message: "not made: this page has no Cache Storage (it needs https or localhost)" });
    try {
      // Making one costs seconds of CPU: not under the first cells.
      if (!(await this.whenIdle())) return done({ status: "failed", message: CLOSED });
      const made = await this.makeSnapshot();
      // Restarts (frame-restart) restore from it too, from now on.
      this.config.snapshot = await saveSnapshot(this.root, this.snapshotKey, made, this.coreRuntime());
      return done({ status: "saved", bytes: made.snap.byteLength + made.fs.byteLength });
    } catch (err) {
      return done({ status: "failed", message: String((err && err.message) || err) });
    }
  }

  /** Resolves true once no request has been sent or answered for `ms`; false if closed. */
  async whenIdle(ms = 2000) {
    for (;;) {
      const sent = this.nextId;
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (this.closed) return false;
      if (this.order.length === 0 && this.nextId === sent) return true;
    }
  }

  /** A short-lived second worker in the frame makes the snapshot (PROTOCOL.md §3). */
  makeSnapshot() {
    return new Promise((resolve, reject) => {
      const channel = new MessageChannel();
      // A worker that died without a word (out of memory) must not leave this pending.
      const silent = setTimeout(() => {
        channel.port1.close();
        reject(new Error("the snapshot worker did not answer within 5 minutes"));
      }, 300_000);
      channel.port1.onmessage = (ev) => {
        const msg = ev.data;
        if (!msg || msg.type !== "reply" || msg.id !== 0) return; // its stdout and the like
        clearTimeout(silent);
        channel.port1.close();
        const out = msg.snapshot;
        if (msg.status === "ok" && out && out.snap instanceof ArrayBuffer && out.fs instanceof ArrayBuffer && out.meta && typeof out.meta === "object") resolve(out);
        else reject(new Error(typeof msg.message === "string" ? msg.message : "the snapshot worker failed"));
      };
      this.port.postMessage({ type: "frame-snapshot" }, [channel.port2]);
    });
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

  /** Fetch the runtime files as Blobs, reporting byte progress: per chunk with `stream`
   * (the big downloads, where a person watches the bar), else per file (pumping a
   * cached file through JS chunk by chunk costs more than the bar is worth). */
  async fetchRuntime(names, { report = false, stream = false } = {}) {
    const progress = () => this.dispatchEvent(new CustomEvent("progress", { detail: { ...this.progress } }));
    const entries = await Promise.all(
      names.map(async (name) => {
        const resp = await fetch(new URL(`pyodide/${name}`, this.root));
        if (!resp.ok) throw new Error(`could not load ${name}: HTTP ${resp.status}; rebuild the site with \`python build.py\``);
        if (!report || !stream) {
          const blob = await resp.blob();
          if (report) {
            this.progress.loaded += blob.size;
            progress();
          }
          return [name, blob];
        }
        const reader = resp.body.getReader();
        const chunks = [];
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          if (report) {
            this.progress.loaded += value.length;
            progress();
          }
        }
        return [name, new Blob(chunks)];
      }),
    );
    if (report) this.fetchedMs = performance.now();
    return Object.fromEntries(entries);
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
    this.bootPromise = new Promise((resolve, reject) => {
      this.pending.set(0, {
        resolve: (reply) => (reply.status === "ok" ? resolve(reply) : reject(new Error(reply.message))),
      });
    });
    // A fresh channel per worker: the worker gets one end with its boot request and
    // nothing else can write to it. Whatever the old worker still sends is dropped.
    if (this.workerPort) this.workerPort.close();
    const channel = new MessageChannel();
    const workerPort = channel.port1;
    workerPort.onmessage = (ev) => {
      if (workerPort === this.workerPort) this.onMessage(ev.data);
    };
    this.workerPort = workerPort;
    this.order = [0];
    const lazyPackages = this.info.sandbox.all_packages.filter((name) => !this.info.sandbox.packages.includes(name));
    const config = { ...this.config, indexURL: new URL("pyodide/", this.root).href, packages: this.info.sandbox.packages, lazyFiles: this.lazy, heldBack: this.heldBack, lazyPackages };
    if (kind === "frame-start") this.port.postMessage({ type: kind, workerSource: this.workerSource, runtime: this.runtime, config }, [channel.port2]);
    else this.port.postMessage({ type: kind, snapshot: this.config.snapshot || null }, [channel.port2]);
    return this.bootPromise;
  }

  /** Send a request to the worker over its private channel, noting its place in line:
   * `{type: "call", id, method, args}` (PROTOCOL.md §3). */
  send(msg, transfer = []) {
    const { type: method, id, ...args } = msg;
    this.order.push(id);
    this.workerPort.postMessage(call(id, method, args), transfer);
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
      if (checking || this.closed || this.replacing || !this.pending.size) return;
      checking = true;
      try {
        if (!(await this.frameAlive()) && !this.closed && !this.replacing) {
          this.recover("crash", "The sandbox stopped responding (its renderer may have run out of memory or been ended by the system)");
        }
      } finally {
        checking = false;
      }
    }, HEARTBEAT_MS);
  }

  /**
   * A new frame for a dead one: the worker, Pyodide's files and the packages handed
   * over again (the browser's HTTP cache has them), the uploads re-mounted.
   */
  async replaceFrame() {
    const previous = this.pending.get(0); // a restart that never booted: it ends with this boot
    for (const [id, entry] of this.pending) {
      if (id !== 0) entry.resolve({ status: "error", message: "the sandbox frame was replaced" });
    }
    this.pending.clear();
    this.order = [];
    if (this.frame) this.frame.remove();
    this.port = await this.openFrame();
    const booted = this.boot("frame-start");
    if (this.handed && this.handed.length) this.handOver([...this.handed]);
    const mounts = this.remount();
    try {
      const [reply] = await Promise.all([booted, ...mounts]);
      if (previous) previous.resolve(reply);
    } catch (err) {
      if (previous) previous.resolve({ status: "error", message: String((err && err.message) || err) });
      throw err;
    }
  }

  /** From the current worker, over its private channel. Still treated as data. */
  onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    // The worker handles one request at a time, in order: anything about a request
    // that is not the one being handled is not the worker's own doing. Ignore it.
    if (msg.id !== this.order[0]) return;
    if (msg.type === "need-files") {
      // The worker waits for a file the page holds back: the boot's package files (it
      // could not restore the snapshot) or the rest of the stack (not idle yet). Each is
      // sent once; the frame keeps them for restarts.
      if (this.heldBack.length) this.handOver(this.heldBack.splice(0));
      if (this.heldRest && this.heldRest.length) this.handOver(this.heldRest.splice(0));
    } else if (msg.type === "stream") {
      const entry = this.pending.get(msg.id);
      if (!entry || !entry.collected || typeof msg.text !== "string" || (msg.name !== "stdout" && msg.name !== "stderr")) return;
      const text = liveText(entry.collected, msg.name, msg.text);
      if (!text) return;
      if (entry.onStream) entry.onStream(msg.name, text);
      this.dispatchEvent(new CustomEvent("stream", { detail: { id: msg.id, name: msg.name, text } }));
    } else if (msg.type === "started") {
      const entry = this.pending.get(msg.id);
      if (entry && entry.started) entry.started();
    } else if (msg.type === "reply") {
      const entry = this.pending.get(msg.id);
      if (!entry) return;
      this.order.shift();
      this.pending.delete(msg.id);
      if (msg.restartNeeded && entry.msg && entry.msg.type !== "run") {
        // The interpreter died under a file request: answer it, then replace the worker.
        entry.resolve({ status: "error", message: typeof msg.error === "object" && msg.error ? String(msg.error.message) : "the sandbox crashed" });
        this.recover("crash", null);
        return;
      }
      entry.resolve(msg);
    }
  }

  /** Resolves when the sandbox is up and no replacement or rebuild is under way. */
  async settled() {
    await this.ready();
    await this.bootPromise;
    let gate;
    do {
      gate = this.gate;
      await gate;
    } while (gate !== this.gate);
  }

  /**
   * Send one request and wait for its reply. `direct` skips the wait for a running
   * restore or rebuild: only the hooks that do that work use it.
   * @param {Record<string, unknown>} msg @param {Transferable[]} [transfer]
   * @param {{onStream?: (name: string, text: string) => void, direct?: boolean}} [options]
   * @returns {Promise<Record<string, any>>}
   */
  async request(msg, transfer = [], { onStream, direct = false } = {}) {
    if (this.closed) return { status: "error", message: CLOSED };
    if (!direct) await this.settled();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, onStream, collected: { stdout: "", stderr: "" }, msg });
      this.send({ ...msg, id }, transfer);
    });
  }

  /**
   * Run a cell. Never rejects for user errors: the result's status says what happened.
   * @param {string} code
   * `record: false` runs it without telling `afterRun` (replays are not logged again).
   * @param {{timeoutMs?: number, onStream?: (name: string, text: string) => void, direct?: boolean, record?: boolean}} [options]
   * @returns {Promise<RunResult>}
   */
  async run(code, { timeoutMs = DEFAULT_TIMEOUT_MS, onStream, direct = false, record = true } = {}) {
    if (typeof code !== "string") throw new TypeError("run(code): code must be a string");
    if (this.closed) return toRunResult({ status: "error", error: { type: "SandboxClosed", message: CLOSED, traceback: "", line: null } }, { collected: { stdout: "", stderr: "" } }, performance.now());
    if (!direct) await this.settled();
    const id = this.nextId++;
    const started = performance.now();
    return new Promise((resolve) => {
      const entry = { onStream, collected: { stdout: "", stderr: "" }, msg: { type: "run" } };
      let watchdog = null;
      // A backstop for a worker that never even starts the cell (a cell before it
      // broke the worker's message handling): the longest the queue ahead can take.
      const now = performance.now();
      this.queueEnd = Math.max(now, this.queueEnd || 0) + timeoutMs + GRACE_MS;
      let backstop = setTimeout(() => this.recover("crash", "the sandbox stopped answering", id), this.queueEnd - now + BACKSTOP_MS);
      // Counted from when the worker starts the cell, not from when it was queued.
      entry.started = () => {
        clearTimeout(backstop);
        backstop = null;
        watchdog = setTimeout(() => this.recover("timeout", null, id), timeoutMs + GRACE_MS);
      };
      entry.resolve = async (reply) => {
        if (watchdog) clearTimeout(watchdog);
        if (backstop) clearTimeout(backstop);
        const result = toRunResult(reply, entry, started, this.outputLimit + MARKER_ROOM);
        if (reply.restartNeeded) {
          // The memory ceiling, or an interpreter that exited or crashed: replace the
          // worker the same way as after a timeout kill.
          if (this.rebuildsState && result.error) result.error.message = result.error.message.replace("variables are lost", "variables are rebuilt by re-running your earlier successful cells");
          await this.recover(reply.restartNeeded === "crash" ? "crash" : "memory", null, id);
          result.restarted = true;
        }
        if (record && this.afterRun) {
          try {
            await this.afterRun(code, result);
          } catch {
            // Persistence reports its own failures; a run result is never lost to them.
          }
        }
        resolve(result);
      };
      this.pending.set(id, entry);
      this.currentRun = id;
      this.send({ type: "run", id, code, timeoutMs });
    });
  }

  /** Stop the running cell. Soft (KeyboardInterrupt, state kept) when the frame is
   * cross-origin isolated; otherwise the worker is replaced. */
  async interrupt() {
    const id = this.currentRun;
    if (!id || !this.pending.has(id)) return { status: "ok", running: false };
    if (this.crossOriginIsolated) {
      this.port.postMessage({ type: "frame-interrupt" });
      return { status: "ok", running: true, soft: true };
    }
    await this.recover("interrupted", null, id);
    return { status: "ok", running: true, soft: false };
  }

  /** A fresh interpreter: variables are gone; uploaded files are mounted again. */
  async restart() {
    await this.ready();
    await this.recover("restart");
    return { status: "ok" };
  }

  /**
   * End the worker, answer what was pending, start a new one, re-mount files, then
   * let `afterRestart` rebuild. Requests made meanwhile wait (see settled()).
   * @param {string} reason "timeout" | "memory" | "crash" | "interrupted" | "restart"
   */
  recover(reason, message = null, runId = null) {
    // A replayed cell that itself kills the worker: replace it again, but do not
    // start another replay from inside this one.
    const nested = this.hookDepth > 0;
    this.gate = this.replaceWorker(reason, message, runId, nested);
    return this.gate;
  }

  async replaceWorker(reason, message, runId, nested) {
    const lost = [...this.pending.entries()].filter(([id]) => id !== 0);
    this.pending.clear();
    this.order = [];
    for (const [id, entry] of lost) {
      if (entry.msg.type === "run") {
        const status = reason === "restart" ? "interrupted" : reason === "crash" ? "error" : reason;
        entry.resolve({
          status,
          restartedByClient: true,
          error: {
            type: reason === "crash" ? "SandboxCrash" : "KeyboardInterrupt",
            message: explain(reason, message, this.rebuildsState),
            traceback: "",
            line: null,
          },
        });
      } else {
        entry.resolve({ status: "error", message: explain(reason, message, this.rebuildsState) });
      }
      void id;
    }
    await this.restartOrReplace();
    this.dispatchEvent(new CustomEvent("restarted", { detail: { reason, runId } }));
    if (this.afterRestart) {
      this.hookDepth++;
      try {
        await this.afterRestart(reason, { nested });
      } catch (err) {
        this.dispatchEvent(new CustomEvent("error", { detail: { message: `after the restart: ${err.message || err}` } }));
      } finally {
        this.hookDepth--;
      }
    }
  }

  restartWorker() {
    const booted = this.boot("frame-restart");
    return Promise.all([booted, ...this.remount()]);
  }

  /** A new worker in the frame, or a new frame when the frame is dead or the restart
   * never finishes: no request waits forever on a frame that is gone. */
  async restartOrReplace() {
    this.replacing = true;
    try {
      if (await this.frameAlive()) {
        let timer;
        const late = new Promise((resolve) => (timer = setTimeout(() => resolve("late"), RESTART_DEADLINE_MS)));
        const outcome = await Promise.race([this.restartWorker().then(() => "ok", () => "failed"), late]);
        clearTimeout(timer);
        if (outcome === "ok") return;
      }
      await this.replaceFrame();
    } finally {
      this.replacing = false;
    }
  }

  /** Re-mount the uploads right behind a boot request, before anything else can be
   * sent: the worker handles messages in order, so no run sees an empty /data. */
  remount() {
    return [...this.files].map(([path, file]) => {
      const id = this.nextId++;
      return new Promise((resolve) => {
        this.pending.set(id, { resolve, collected: null, msg: { type: "mountFile" } });
        this.send({ type: "mountFile", id, path, file });
      });
    });
  }

  /**
   * Put bytes or text at `path` (under /data unless absolute). `remember: false`
   * leaves it out of what is re-mounted after a restart (persisted outputs are
   * written back as plain, writable files instead).
   * @param {string} path @param {string | ArrayBuffer | Uint8Array} data
   * @param {{direct?: boolean, remember?: boolean}} [options]
   */
  async writeFile(path, data, { direct = false, remember = true } = {}) {
    const full = resolvePath(path);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data instanceof Uint8Array ? data : new Uint8Array(data);
    const copy = bytes.slice(); // handed over (transferred), so the caller's bytes stay theirs
    const reply = await this.request({ type: "writeFile", path: full, data: copy }, [copy.buffer], { direct });
    if (reply.status === "ok") {
      if (remember) this.files.set(full, new Blob([/** @type {Uint8Array<ArrayBuffer>} */ (bytes)]));
      else this.files.delete(full);
    }
    return reply;
  }

  /** Mount a File/Blob under /data without copying it into memory.
   * @param {string} path @param {Blob} file @param {{direct?: boolean}} [options] */
  async mountFile(path, file, { direct = false } = {}) {
    const full = resolvePath(path);
    const reply = await this.request({ type: "mountFile", path: full, file }, [], { direct });
    if (reply.status === "ok") this.files.set(full, file);
    return reply;
  }

  /** @param {string} path @param {{direct?: boolean}} [options] @returns {Promise<Uint8Array>} */
  async readFile(path, { direct = false } = {}) {
    const reply = await this.request({ type: "readFile", path: resolvePath(path) }, [], { direct });
    if (reply.status !== "ok") throw new Error(`readFile(${path}): ${reply.message}`);
    return reply.data;
  }

  /** Plain data: rejects when the sandbox cannot list (README, JS API's error rule).
   * @param {string} [dir] @returns {Promise<import("./protocol.js").FileEntry[]>} */
  async listFiles(dir = "/data") {
    const reply = await this.request({ type: "listFiles", dir: resolvePath(dir) });
    if (reply.status !== "ok") throw new Error(`listFiles(${dir}): ${reply.message}`);
    return reply.files;
  }

  async inspect(path) {
    const { type, id, ...rest } = await this.request({ type: "inspect", path: resolvePath(path) });
    void type;
    void id;
    return rest;
  }

  /** A fresh namespace in the same interpreter (fast; files are kept). */
  async reset() {
    const { type, id, ...rest } = await this.request({ type: "reset" });
    void type;
    void id;
    return rest;
  }

  /** @param {string} path @param {{direct?: boolean}} [options] */
  async deleteFile(path, { direct = false } = {}) {
    const full = resolvePath(path);
    this.files.delete(full);
    return this.request({ type: "deleteFile", path: full }, [], { direct });
  }
}

function resolvePath(path) {
  if (typeof path !== "string" || !path) throw new TypeError("path must be a non-empty string");
  return path.startsWith("/") ? path : `/data/${path}`;
}

function explain(reason, message, rebuilds = false) {
  switch (reason) {
    case "timeout":
      return rebuilds
        ? "The cell did not stop after its time limit, so the sandbox was restarted: files are kept, and variables are rebuilt by re-running the earlier successful cells (not this one)."
        : "The cell did not stop after its time limit, so the sandbox was restarted: variables are lost, uploaded files are kept.";
    case "interrupted":
      return "The cell was stopped by restarting the sandbox: variables are lost, uploaded files are kept.";
    case "restart":
      return "The sandbox was restarted.";
    default:
      return rebuilds
        ? `The sandbox crashed (${message || "no detail"}) and was restarted: files are kept, and variables are rebuilt by re-running the earlier successful cells.`
        : `The sandbox crashed (${message || "no detail"}) and was restarted: variables are lost, uploaded files are kept.`;
  }
}

// The kernel keeps `outputLimit` characters and then says what it cut: room for that.
const MARKER_ROOM = 1000;
// The live view stops here: past it a runaway print only slows the page (the result
// keeps its own, smaller limit).
const LIVE_LIMIT = 1_000_000;

/** What of a streamed batch still goes to the live view, with a marker where it stops;
 * "" after that. `collected` keeps what was shown, per stream. */
function liveText(collected, name, text) {
  const room = LIVE_LIMIT - collected[name].length;
  if (room <= 0) return "";
  const shown = text.length <= room ? text : `${text.slice(0, room)}\n[live output stopped after ${LIVE_LIMIT.toLocaleString("en")} characters]\n`;
  collected[name] += shown;
  return shown;
}

/** `text` within `limit` characters, with a marker saying how much was cut. */
function capped(text, limit) {
  if (typeof text !== "string" || text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[output truncated by the page: ${(text.length - limit).toLocaleString("en")} more characters not shown]`;
}

/** The sandbox's result held to the page's own limit, whatever the sandbox says. */
function withinLimit(result, limit) {
  const over = (t) => typeof t === "string" && t.length > limit;
  const value = result.result && typeof result.result === "object" ? result.result : null;
  const error = result.error && typeof result.error === "object" ? result.error : null;
  // Made by the kernel, inside the sandbox, like the rest: held to the limit too.
  const assigned = Array.isArray(result.assigned) ? result.assigned.filter((a) => a && typeof a === "object") : null;
  const anyOver = over(result.stdout) || over(result.stderr) || over(value && value.text) || over(error && error.traceback) || over(error && error.message) || (assigned || []).some((a) => over(a.text));
  if (!anyOver) return result;
  return {
    ...result,
    ...(assigned ? { assigned: assigned.map((a) => ({ ...a, text: capped(a.text, limit) })) } : {}),
    stdout: capped(result.stdout, limit),
    stderr: capped(result.stderr, limit),
    result: value ? { ...value, text: capped(value.text, limit) } : result.result,
    error: error ? { ...error, traceback: capped(error.traceback, limit), message: capped(error.message, limit) } : result.error,
    truncated: true,
  };
}

function toRunResult(reply, entry, started, limit = Infinity) {
  const base = {
    status: "error",
    stdout: entry.collected.stdout,
    stderr: entry.collected.stderr,
    truncated: false,
    result: null,
    figures: [],
    files: [],
    error: null,
    duration_ms: performance.now() - started,
    restarted: false,
  };
  if (reply.restartedByClient) return withinLimit({ ...base, status: reply.status, error: reply.error, restarted: true }, limit);
  const { type, id, restartNeeded, ...result } = reply;
  void type;
  void id;
  void restartNeeded;
  if (typeof result.status !== "string") return { ...base, error: { type: "ProtocolError", message: "malformed reply from the sandbox", traceback: "", line: null } };
  return withinLimit({ ...base, ...result }, limit);
}

function isLoopback(host) {
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A `.gz` download as the file it packs (checked against the build's size for it). A
 * server that already decoded it (Content-Encoding: gzip) sends the file itself. */
async function unpacked(blob, name, sizes) {
  if (!name.endsWith(".gz")) return blob;
  const head = new Uint8Array(await blob.slice(0, 2).arrayBuffer());
  const file = head[0] === 0x1f && head[1] === 0x8b ? await new Response(blob.stream().pipeThrough(new DecompressionStream("gzip"))).blob() : blob;
  const expected = sizes[name.slice(0, -3)];
  if (file.size !== expected) throw new Error(`${name} unpacked to ${file.size} bytes, not ${expected}`);
  return file;
}
