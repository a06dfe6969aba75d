// Recovery: a worker that timed out, ran out of memory or crashed is replaced (a new
// frame if the frame itself is dead), what was pending is answered, the uploads are
// re-mounted, and `afterRestart` (persistence) rebuilds before waiting requests go on.

import { explain } from "./results.js";
import { SandboxChannel } from "./channel.js";

const RESTART_DEADLINE_MS = 120_000;

export class SandboxRecovery extends SandboxChannel {
  /** @param {{root: URL, container: HTMLElement}} options */
  constructor(options) {
    super(options);
    /** @type {Map<string, Blob>} path -> Blob/File, re-mounted after a restart */
    this.files = new Map();
    // Set while the worker is being replaced and rebuilt: requests wait for it, so no
    // cell runs before the files (and, with persistence, the variables) are back.
    /** @type {Promise<unknown>} */
    this.gate = Promise.resolve();
    this.hookDepth = 0; // > 0 while afterRestart runs (a replay in progress)
    /** Called after every worker replacement, before waiting requests go on.
     * @type {((reason: string, options: {nested: boolean}) => Promise<void>) | null} */
    this.afterRestart = null;
    /** Whether a replacement rebuilds the variables (changes what the messages say). */
    this.rebuildsState = false;
  }

  /**
   * End the worker, answer what was pending, start a new one, re-mount files, then
   * let `afterRestart` rebuild. Requests made meanwhile wait (see settled()).
   * @param {string} reason "timeout" | "memory" | "crash" | "busy" | "interrupted" | "restart"
   * @param {string | null} [message] @param {number | null} [runId] the run it is about
   */
  recover(reason, message = null, runId = null) {
    // A replayed cell that itself kills the worker: replace it again, but do not
    // start another replay from inside this one.
    const nested = this.hookDepth > 0;
    this.gate = this.replaceWorker(reason, message, runId, nested);
    return this.gate;
  }

  /** @param {string} reason @param {string | null} message @param {number | null} runId @param {boolean} nested */
  async replaceWorker(reason, message, runId, nested) {
    const lost = [...this.rpc.pending].filter(([id]) => id !== 0);
    for (const [id, entry] of lost) {
      if (entry.method === "run") {
        const status = reason === "restart" ? "interrupted" : reason === "crash" || reason === "busy" ? "error" : reason;
        this.rpc.settle(id, {
          status,
          restartedByClient: true,
          ...(reason === "busy" ? { busy: true } : {}), // never started: client.js runs it again
          error: {
            type: reason === "crash" ? "SandboxCrash" : reason === "busy" ? "SandboxBusy" : "KeyboardInterrupt",
            message: explain(reason, message, this.rebuildsState),
            traceback: "",
            line: null,
          },
        });
      } else {
        this.rpc.settle(id, { status: "error", message: explain(reason, message, this.rebuildsState) });
      }
    }
    this.rpc.clear(); // a boot still under way is not answered: the new worker's boot replaces it
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

  /**
   * A new frame for a dead one: the worker, Pyodide's files and the packages handed
   * over again (the browser's HTTP cache has them), the uploads re-mounted.
   */
  async replaceFrame() {
    const previous = this.rpc.pending.get(0); // a restart that never booted: it ends with this boot
    for (const id of [...this.rpc.pending.keys()]) {
      if (id !== 0) this.rpc.settle(id, { status: "error", message: "the sandbox frame was replaced" });
    }
    this.rpc.clear();
    if (this.frame) this.frame.remove();
    this.port = await this.openFrame();
    const booted = this.boot("frame-start");
    if (this.handed && this.handed.length) this.handOver([...this.handed]);
    const mounts = this.remount();
    try {
      const [reply] = await Promise.all([booted, ...mounts]);
      if (previous) previous.resolve(reply);
    } catch (err) {
      if (previous) previous.resolve({ type: "reply", id: 0, status: "error", message: String((err && err.message) || err) });
      throw err;
    }
  }

  /** Re-mount the uploads right behind a boot request, before anything else can be
   * sent: the worker handles messages in order, so no run sees an empty /data. */
  remount() {
    return [...this.files].map(([path, file]) => this.rpc.call("mountFile", { path, file }));
  }
}
