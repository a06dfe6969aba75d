// The page's side of the sandbox: one opaque-origin frame, one worker inside it.
// Message shapes: PROTOCOL.md §3. Everything that comes back from the worker is
// untrusted (the model's code runs there): it is only ever treated as data.
// The Sandbox is a facade over its parts, each one job, none calling another's
// subclass (there are none): runtime.js (the files), channel.js (frame, ports, order),
// recovery.js (replacing a dead worker), snapshot-plan.js (snapshot starts);
// results.js (limits). It emits what the page hears (progress, ready, stream,
// restarted, snapshot, error) and what persistence holds up (events.js: started,
// replaced, ran); docs/architecture.md draws it.

import { CLOSED, MARKER_ROOM, toRunResult } from "./results.js";
import { RECIPE_PARTS, WORKER_PARTS, fetchParts } from "./parts.js";
import { SandboxRuntime } from "./runtime.js";
import { SandboxChannel } from "./channel.js";
import { SandboxRecovery } from "./recovery.js";
import { SandboxSnapshots } from "./snapshot-plan.js";
import { dispatchAndWait } from "./events.js";
import { runFresh } from "./fresh.js";
import { SEAM_SOURCE } from "../shared/seam.js";

const DEFAULT_TIMEOUT_MS = 60_000;
const GRACE_MS = 3_000; // after the deadline's KeyboardInterrupt, before the worker is ended
const BACKSTOP_MS = 15_000; // beyond the queue's own limits, for a cell that never starts

/** @typedef {import("../shared/protocol.js").RunResult} RunResult */
/** @typedef {import("../shared/protocol.js").SandboxApi} SandboxApi */
/** @typedef {{onStream?: (name: string, text: string) => void, collected: {stdout: string, stderr: string}, started?: () => void}} RunEntry */

export class Sandbox extends EventTarget {
  /**
   * `snapshot: false` turns snapshot starts off (README "Fast starts").
   * `sqlMemoryLimitMB`: DuckDB's memory limit for run_sql (default: half of `memoryLimitMB`).
   * @param {{root?: URL, container?: HTMLElement, memoryLimitMB?: number, sqlMemoryLimitMB?: number, outputLimit?: number, snapshot?: boolean}} [options]
   */
  constructor({ root = new URL("../", import.meta.url), container = document.body, memoryLimitMB = 2048, sqlMemoryLimitMB = 0, outputLimit = 100_000, snapshot = true } = {}) {
    super();
    this.container = container;
    this.memoryLimitMB = memoryLimitMB;
    /** @type {Record<string, any>} the boot config the worker gets (and the snapshot part's choice of snapshot) */
    this.config = { memoryLimitMB, sqlMemoryLimitMB, kernel: { output_limit: outputLimit } };
    // Enforced here too: the kernel's limit lives inside the sandbox, where a cell can
    // raise it (the second outside attack put 40 MB into the chat that way).
    this.outputLimit = outputLimit;
    /** @type {Map<string, Blob>} path -> Blob/File of the uploads, re-mounted after a restart */
    this.files = new Map();
    /** @param {string} type @param {object} detail */
    const emit = (type, detail) => void this.dispatchEvent(new CustomEvent(type, { detail }));
    /** @param {string} type @param {object} detail */
    const emitAndWait = (type, detail) => dispatchAndWait(this, type, detail);
    this.runtime = new SandboxRuntime({ root, emit });
    this.channel = new SandboxChannel({ runtime: this.runtime, container, config: this.config, emit, recover: (reason, message, runId) => this.recover(reason, message, runId) });
    this.recovery = new SandboxRecovery({ channel: this.channel, files: this.files, emit, emitAndWait });
    this.snapshots = new SandboxSnapshots({ runtime: this.runtime, channel: this.channel, config: this.config, emit, enabled: snapshot !== false });
    /** Resolves with {status: "saved" | "failed" | "restored" | "rejected" | "off", ...} once this visit's snapshot work is done.
     * @type {Promise<Record<string, unknown>> | null} */
    this.snapshotDone = null;
    /** @type {{code: string, files: Array<[string, Blob]>, result: RunResult} | null} the last scan() */
    this.lastScan = null;
    /** @type {(err: Error) => void} */
    this.rejectClosed = () => {};
    /** @type {Promise<never>} */
    this.whenClosed = new Promise((_, reject) => (this.rejectClosed = reject));
    this.whenClosed.catch(() => {});
    /** @type {Promise<any> | null} */
    this.readyPromise = null;
    this.startMs = 0;
    /** @type {Record<string, number | undefined> | null} page-clock and worker-clock ms of the start */
    this.bootMarks = null;
    this.queueEnd = 0; // when the runs queued so far may have ended at the latest
    this.currentRun = 0; // the id of the last run sent
  }

  // What pages and tests read of the parts.
  get info() {
    return this.runtime.info;
  }
  get frame() {
    return this.channel.frame;
  }
  get crossOriginIsolated() {
    return this.channel.crossOriginIsolated;
  }
  get closed() {
    return this.channel.closed;
  }
  get runtimeKept() {
    return this.snapshots.runtimeKept;
  }
  /** Whether a replacement rebuilds the variables (persistence does: it changes what
   * the messages say). */
  get rebuildsState() {
    return this.recovery.rebuildsState;
  }
  set rebuildsState(value) {
    this.recovery.rebuildsState = value;
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
    this.channel.close();
    this.rejectClosed(new Error(CLOSED));
  }

  /** Start a worker in the frame (the channel's boot): "frame-start" with the files. A
   * subclass may change the config or the build info here before the first boot.
   * @param {"frame-start" | "frame-restart"} kind */
  boot(kind) {
    return this.channel.boot(kind);
  }

  /** Replace the worker (recovery.js). @param {string} reason @param {string | null} [message] @param {number | null} [runId] */
  recover(reason, message = null, runId = null) {
    return this.recovery.recover(reason, message, runId);
  }

  async start() {
    const t0 = performance.now();
    const { runtime, channel, snapshots } = this;
    // The frame and the worker's script do not depend on the build info: under way first.
    const framing = Promise.all([channel.openFrame(), fetchParts(runtime.root, WORKER_PARTS, SEAM_SOURCE)]);
    framing.catch(() => {});
    // The worker's installer for the rest of the stack; without it, Pyodide's loadPackage.
    const installer = fetch(new URL("sandbox/install.js", runtime.root)).then((r) => (r.ok ? r.blob() : null), () => null);
    const recipe = snapshots.enabled ? fetchParts(runtime.root, RECIPE_PARTS) : null;
    if (recipe) recipe.catch(() => {});
    await runtime.load();
    // Three ways to a ready interpreter, fastest first: the snapshot an earlier visit
    // kept, the snapshot the build ships, a cold boot (README "Fast starts"). With a
    // snapshot the package files are not needed to start: they are held back, and sent
    // only if the worker cannot restore it and boots cold after all.
    const plan = await snapshots.findSnapshot(recipe);
    // A kept snapshot has Pyodide's own files kept beside it: no fetch at all.
    const kept = await snapshots.keptRuntime(plan);
    const { core, eager, lazy } = runtime.plan(plan, Boolean(kept));
    const coreFetched = kept ? Promise.resolve(kept) : runtime.fetchRuntime(core, { report: true });
    coreFetched.catch(() => {});
    const [blobs, [port, workerSource], snapshot] = await Promise.race([
      Promise.all([coreFetched, framing, plan === "build" ? runtime.fetchShippedSnapshot() : this.config.snapshot]),
      this.whenClosed, // a frame removed before it loaded never says so
    ]);
    this.config.snapshot = snapshot;
    this.config.installSource = await installer;
    runtime.blobs = blobs;
    if (plan === "build") snapshots.keepShipped(snapshot);
    channel.prepare({ port, workerSource, heldBack: plan ? [...eager] : [], lazy: plan ? lazy : [...eager, ...lazy] });
    const bootAt = performance.now();
    const booted = this.boot("frame-start");
    if (!plan) channel.handOver(eager, { report: true, stream: true });
    const reply = await booted.catch((err) => {
      if (!kept) throw err;
      return this.bootFromSite(core, eager); // the kept copies would not start
    });
    const repliedAt = performance.now();
    // Persistence puts the stored files back here, before ready() resolves.
    await dispatchAndWait(this, "started", {});
    // The rest of the stack (scipy, scikit-learn, pyarrow, sympy…) only when a request
    // needs it (the worker asks: need-files); nothing is fetched or installed meanwhile.
    channel.heldRest = [...lazy];
    this.startMs = performance.now() - t0;
    // Page-clock ms (fetched, boot, workerStart, replied) and worker-clock ms since its start.
    const workerStart = reply.marks.workerStart - performance.timeOrigin;
    this.bootMarks = { fetched: runtime.fetchedMs, boot: bootAt, ...reply.marks, workerStart, replied: repliedAt };
    channel.startHeartbeat();
    this.dispatchEvent(new CustomEvent("ready", { detail: { ms: this.startMs, versions: reply.versions } }));
    this.snapshotDone = snapshots.afterBoot(reply.snapshot, plan);
    return reply;
  }

  /** Start again as on a first visit without a snapshot: Pyodide's files from the site,
   * the packages handed over, and nothing kept (a new snapshot is made once idle).
   * @param {string[]} core @param {string[]} eager */
  async bootFromSite(core, eager) {
    await this.snapshots.forget();
    this.runtime.blobs = await this.runtime.fetchRuntime(core);
    return this.channel.bootCold(eager);
  }

  /** Resolves when the sandbox is up and no replacement or rebuild is under way. */
  async settled() {
    await this.ready();
    await this.channel.bootPromise;
    await this.recovery.settled();
  }

  /**
   * Call one of the worker's methods and wait for its reply. `direct` skips the wait for
   * a running restore or rebuild: only the hooks that do that work use it.
   * @template {keyof SandboxApi & string} K
   * @param {K} method @param {import("../shared/seam.js").ArgsOf<SandboxApi, K>} args @param {Transferable[]} [transfer]
   * @param {{direct?: boolean}} [options]
   * @returns {Promise<Record<string, any>>}
   */
  async request(method, args, transfer = [], { direct = false } = {}) {
    if (this.closed) return { status: "error", message: CLOSED };
    if (!direct) await this.settled();
    return this.channel.rpc.call(method, args, { transfer });
  }

  /**
   * Run a cell. Never rejects for user errors: the result's status says what happened.
   * @param {string} code
   * `record: false` runs it without a `ran` event (replays are not logged again).
   * @param {{timeoutMs?: number, onStream?: (name: string, text: string) => void, direct?: boolean, record?: boolean}} [options]
   * @returns {Promise<RunResult>}
   */
  async run(code, { timeoutMs = DEFAULT_TIMEOUT_MS, onStream, direct = false, record = true } = {}) {
    const result = await this.runOnce(code, { timeoutMs, onStream, direct, record });
    if (!result.busy) return result;
    // The worker was busy with an earlier cell's leftovers and never started this one
    // (channel.js): it was replaced, and the cell runs in the new worker. A replay's
    // cell (direct) is not run again: the replay stops there (web/persist.js).
    const { busy, ...failed } = result;
    void busy;
    if (direct) return failed;
    const again = await this.runOnce(code, { timeoutMs, onStream, direct, record });
    const { busy: _still, ...rerun } = again;
    void _still;
    const note = `[${failed.error ? failed.error.message : "The sandbox was restarted."} This cell then ran in the new sandbox.]\n`;
    return { ...rerun, stderr: note + (rerun.stderr || ""), restarted: true };
  }

  /** One attempt at a run (run() tries again once when the worker was busy).
   * @param {string} code @param {{timeoutMs: number, onStream?: (name: string, text: string) => void, direct: boolean, record: boolean}} options
   * @returns {Promise<RunResult & {busy?: boolean}>} */
  async runOnce(code, { timeoutMs, onStream, direct, record }) {
    if (typeof code !== "string") throw new TypeError("run(code): code must be a string");
    if (this.closed) return toRunResult({ status: "error", error: { type: "SandboxClosed", message: CLOSED, traceback: "", line: null } }, { collected: { stdout: "", stderr: "" } }, performance.now());
    if (!direct) await this.settled();
    const rpc = this.channel.rpc;
    const id = rpc.reserve();
    const started = performance.now();
    return new Promise((resolve) => {
      /** @type {RunEntry} */
      const entry = { onStream, collected: { stdout: "", stderr: "" } };
      /** @type {ReturnType<typeof setTimeout> | null} */
      let watchdog = null;
      // A backstop for a worker that never even starts the cell (a cell before it
      // broke the worker's message handling): the longest the queue ahead can take.
      const now = performance.now();
      this.queueEnd = Math.max(now, this.queueEnd || 0) + timeoutMs + GRACE_MS;
      /** @type {ReturnType<typeof setTimeout> | null} */
      let backstop = setTimeout(() => this.recover("crash", "the sandbox stopped answering", id), this.queueEnd - now + BACKSTOP_MS);
      // Counted from when the worker starts the cell, not from when it was queued.
      entry.started = () => {
        if (backstop) clearTimeout(backstop);
        backstop = null;
        watchdog = setTimeout(() => this.recover("timeout", null, id), timeoutMs + GRACE_MS);
      };
      /** @param {Record<string, any>} reply */
      const finish = async (reply) => {
        if (watchdog) clearTimeout(watchdog);
        if (backstop) clearTimeout(backstop);
        const result = toRunResult(reply, entry, started, this.outputLimit + MARKER_ROOM);
        if (reply.busy) {
          resolve({ ...result, busy: true }); // not recorded: it never ran
          return;
        }
        if (reply.restartNeeded) {
          // The memory ceiling, or an interpreter that exited or crashed: replace the
          // worker the same way as after a timeout kill.
          if (this.rebuildsState && result.error) result.error.message = result.error.message.replace("variables are lost", "variables are rebuilt by re-running your earlier successful cells");
          await this.recover(reply.restartNeeded === "crash" ? "crash" : "memory", null, id);
          result.restarted = true;
        }
        if (record) {
          // The outputs the run deleted as the worker saw it (not the kernel: a cell can change that).
          const deleted = !reply.restartedByClient && Array.isArray(reply.outputsDeleted) ? reply.outputsDeleted.filter((/** @type {unknown} */ p) => typeof p === "string") : [];
          try {
            await dispatchAndWait(this, "ran", { code, result, deleted });
          } catch {
            // Persistence reports its own failures; a run result is never lost to them.
          }
        }
        resolve(result);
      };
      this.currentRun = id;
      rpc.call("run", { code, timeoutMs }, { id, about: entry }).then(finish);
    });
  }

  /**
   * Run `code` where no cell can reach it: in a fresh worker, with the person's files
   * mounted, ended after (web/sandbox/fresh.js). Privacy's value scan runs here; its
   * output may be long, so the fresh kernel keeps up to `outputLimit` characters.
   * @param {string} code @param {{timeoutMs?: number, outputLimit?: number}} [options]
   * @returns {Promise<RunResult>}
   */
  async scan(code, { timeoutMs = DEFAULT_TIMEOUT_MS, outputLimit = 9_000_000 } = {}) {
    const started = performance.now();
    const empty = { collected: { stdout: "", stderr: "" } };
    if (this.closed) return toRunResult({ status: "error", error: { type: "SandboxClosed", message: CLOSED, traceback: "", line: null } }, empty, started);
    await this.settled();
    // The same code over the same files finds the same: no cell can change either.
    const files = [...this.files];
    const last = this.lastScan;
    if (last && last.code === code && last.files.length === files.length && last.files.every(([path, file], i) => files[i][0] === path && files[i][1] === file)) return last.result;
    const channel = this.channel;
    const reply = await runFresh({ port: /** @type {import("./channel.js").FramePort} */ (channel.port), files: new Map(files), code, timeoutMs, kernel: { output_limit: outputLimit }, onNeedFiles: () => channel.handHeld() });
    if (typeof reply.status === "string" && reply.type !== "reply") return toRunResult({ status: "error", error: { type: "SandboxError", message: String(reply.message), traceback: "", line: null } }, empty, started);
    const result = toRunResult(reply, empty, started);
    this.lastScan = result.status === "ok" ? { code, files, result } : null;
    return result;
  }

  /** Stop the running cell. Soft (KeyboardInterrupt, state kept) when the frame is
   * cross-origin isolated; otherwise the worker is replaced. */
  async interrupt() {
    const id = this.currentRun;
    if (!id || !this.channel.isPending(id)) return { status: "ok", running: false };
    if (this.channel.interruptSoftly()) return { status: "ok", running: true, soft: true };
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
    const reply = await this.request("writeFile", { path: full, data: copy }, [copy.buffer], { direct });
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
    const reply = await this.request("mountFile", { path: full, file }, [], { direct });
    if (reply.status === "ok") this.files.set(full, file);
    return reply;
  }

  /** `output: true` reads only a regular file a cell wrote under /output, reached
   * without a link (what persistence keeps).
   * @param {string} path @param {{direct?: boolean, output?: boolean}} [options] @returns {Promise<Uint8Array>} */
  async readFile(path, { direct = false, output = false } = {}) {
    const reply = await this.request("readFile", { path: resolvePath(path), ...(output ? { output: true } : {}) }, [], { direct });
    if (reply.status !== "ok") throw new Error(`readFile(${path}): ${reply.message}`);
    return reply.data;
  }

  /** Plain data: rejects when the sandbox cannot list (README, JS API's error rule).
   * @param {string} [dir] @returns {Promise<import("../shared/protocol.js").FileEntry[]>} */
  async listFiles(dir = "/data") {
    const reply = await this.request("listFiles", { dir: resolvePath(dir) });
    if (reply.status !== "ok") throw new Error(`listFiles(${dir}): ${reply.message}`);
    return reply.files;
  }

  /** @param {string} path */
  async inspect(path) {
    const { type, id, ...rest } = await this.request("inspect", { path: resolvePath(path) });
    void type;
    void id;
    return rest;
  }

  /** A fresh namespace in the same interpreter (fast; files are kept). */
  async reset() {
    const { type, id, ...rest } = await this.request("reset", {});
    void type;
    void id;
    return rest;
  }

  /** @param {string} path @param {{direct?: boolean}} [options] */
  async deleteFile(path, { direct = false } = {}) {
    const full = resolvePath(path);
    this.files.delete(full);
    return this.request("deleteFile", { path: full }, [], { direct });
  }
}

/** @param {unknown} path */
function resolvePath(path) {
  if (typeof path !== "string" || !path) throw new TypeError("path must be a non-empty string");
  return path.startsWith("/") ? path : `/data/${path}`;
}
