// The page's side of the sandbox: one opaque-origin frame, one worker inside it.
// Message shapes: PROTOCOL.md §3. Everything that comes back from the worker is
// untrusted (the model's code runs there): it is only ever treated as data.
// The Sandbox is a facade over its parts, each one job, none calling another's
// subclass (there are none): runtime.js (the runtime's files), channel.js (frame,
// ports, order; its watches in watch.js), recovery.js (replacing a dead worker),
// snapshot-plan.js (snapshot starts), runs.js (cells: run, scan, interrupt),
// files.js (the person's files). Here: the start, and the methods over the parts.
// It emits what the page hears (progress, ready, stream, restarted, snapshot,
// error) and what persistence holds up (events.js: started, replaced, ran);
// docs/architecture.md draws it.

import { CLOSED } from "./results.js";
import { RECIPE_PARTS, WORKER_PARTS, fetchParts } from "./parts.js";
import { SandboxRuntime } from "./runtime.js";
import { SandboxChannel } from "./channel.js";
import { SandboxRecovery } from "./recovery.js";
import { SandboxSnapshots } from "./snapshot-plan.js";
import { SandboxRuns } from "./runs.js";
import { SandboxFiles } from "./files.js";
import { dispatchAndWait } from "./events.js";
import { SEAM_SOURCE } from "../shared/seam.js";

/** @typedef {import("../shared/protocol.js").RunResult} RunResult */
/** @typedef {import("../shared/protocol.js").SandboxApi} SandboxApi */

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
    /** @type {Map<string, Blob>} path -> Blob/File of the uploads, re-mounted after a restart */
    this.files = new Map();
    /** @param {string} type @param {object} detail */
    const emit = (type, detail) => void this.dispatchEvent(new CustomEvent(type, { detail }));
    /** @param {string} type @param {object} detail */
    const emitAndWait = (type, detail) => dispatchAndWait(this, type, detail);
    /** @type {import("./channel.js").Recover} */
    const recover = (reason, message, runId) => this.recover(reason, message, runId);
    this.runtime = new SandboxRuntime({ root, emit });
    this.channel = new SandboxChannel({ runtime: this.runtime, container, config: this.config, emit, recover });
    this.recovery = new SandboxRecovery({ channel: this.channel, files: this.files, emit, emitAndWait });
    this.snapshots = new SandboxSnapshots({ runtime: this.runtime, channel: this.channel, config: this.config, emit, enabled: snapshot !== false });
    this.runs = new SandboxRuns({ channel: this.channel, recovery: this.recovery, files: this.files, outputLimit, settled: () => this.settled(), recover, emitAndWait });
    this.fileCalls = new SandboxFiles({ sandbox: this, files: this.files });
    /** Resolves with {status: "saved" | "failed" | "restored" | "rejected" | "off", ...} once this visit's snapshot work is done.
     * @type {Promise<Record<string, unknown>> | null} */
    this.snapshotDone = null;
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
  /** The output limit a run's result is held to (runs.js): enforced here too, since the
   * kernel's own lives inside the sandbox, where a cell can raise it (the second
   * outside attack put 40 MB into the chat that way). */
  get outputLimit() {
    return this.runs.outputLimit;
  }
  set outputLimit(value) {
    this.runs.outputLimit = value;
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
    // The worker's script does not depend on the build info: under way first. So is the
    // frame, unless this page may frame another site: then it waits for the build info,
    // whose response says where the frame lives (runtime.js, load).
    const loaded = runtime.load();
    const opening = mayFrameAnotherSite() ? loaded.then(() => channel.openFrame()) : channel.openFrame();
    const framing = Promise.all([opening, fetchParts(runtime.root, WORKER_PARTS, SEAM_SOURCE)]);
    framing.catch(() => {});
    // The worker's installer for the rest of the stack; without it, Pyodide's loadPackage.
    const installer = fetch(new URL("sandbox/install.js", runtime.root)).then((r) => (r.ok ? r.blob() : null), () => null);
    const recipe = snapshots.enabled ? fetchParts(runtime.root, RECIPE_PARTS) : null;
    if (recipe) recipe.catch(() => {});
    await loaded;
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
   * Run a cell (runs.js). Never rejects for user errors: the result's status says what
   * happened. `record: false` runs it without a `ran` event (replays are not logged again).
   * @param {string} code @param {import("./runs.js").RunOptions} [options] @returns {Promise<RunResult>}
   */
  run(code, options = {}) {
    return this.runs.run(code, options);
  }

  /**
   * Run `code` where no cell can reach it: in a fresh worker, with the person's files
   * mounted, ended after (web/sandbox/fresh.js). Privacy's value scan runs here; its
   * output may be long, so the fresh kernel keeps up to `outputLimit` characters.
   * @param {string} code @param {{timeoutMs?: number, outputLimit?: number}} [options]
   * @returns {Promise<RunResult>}
   */
  scan(code, options = {}) {
    return this.runs.scan(code, options);
  }

  /** Stop the running cell. Soft (KeyboardInterrupt, state kept) when the frame is
   * cross-origin isolated; otherwise the worker is replaced. */
  interrupt() {
    return this.runs.interrupt();
  }

  /** A fresh interpreter: variables are gone; uploaded files are mounted again. */
  async restart() {
    await this.ready();
    await this.recover("restart");
    return { status: "ok" };
  }

  /** A fresh namespace in the same interpreter (fast; files are kept). */
  async reset() {
    const { type, id, ...rest } = await this.request("reset", {});
    void type;
    void id;
    return rest;
  }

  // The person's files (files.js); `files` holds the uploads.
  /** @param {string} path @param {string | ArrayBuffer | Uint8Array} data @param {{direct?: boolean, remember?: boolean}} [options] */
  writeFile(path, data, options = {}) {
    return this.fileCalls.writeFile(path, data, options);
  }
  /** @param {string} path @param {Blob} file @param {{direct?: boolean}} [options] */
  mountFile(path, file, options = {}) {
    return this.fileCalls.mountFile(path, file, options);
  }
  /** @param {string} path @param {{direct?: boolean, output?: boolean}} [options] */
  readFile(path, options = {}) {
    return this.fileCalls.readFile(path, options);
  }
  /** @param {string} [dir] */
  listFiles(dir) {
    return this.fileCalls.listFiles(dir);
  }
  /** @param {string} path */
  inspect(path) {
    return this.fileCalls.inspect(path);
  }
  /** @param {string} path @param {{direct?: boolean}} [options] */
  deleteFile(path, options = {}) {
    return this.fileCalls.deleteFile(path, options);
  }
}

/** Whether this page's policy lets it frame a site other than its own: `reckon serve
 * --sandbox-origin` adds the sandbox's site to the `<meta>` policy's frame-src
 * (py/reckon/server/_sandbox_site.py). Every other page opens the opaque frame without
 * waiting for the build info (it cost the cold start a round trip). */
function mayFrameAnotherSite() {
  const meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  const frames = /(?:^|;)\s*frame-src([^;]*)/i.exec((meta && meta.getAttribute("content")) || "");
  return !!frames && frames[1].trim().split(/\s+/).some((source) => source && source !== "'self'");
}
