// Recovery: a worker that timed out, ran out of memory or crashed is replaced (a new
// frame if the frame itself is dead), what was pending is answered, the uploads are
// re-mounted, and the `replaced` event's listeners (persistence) rebuild before
// waiting requests go on. One part of the Sandbox (client.js), over its channel.

import { explain } from "./results.js";

/** @typedef {import("./channel.js").SandboxChannel} SandboxChannel */
/** @typedef {import("./runtime.js").Emit} Emit */
/** @typedef {(type: string, detail: object) => Promise<void>} EmitAndWait */

const RESTART_DEADLINE_MS = 120_000;

export class SandboxRecovery {
  /** @param {{channel: SandboxChannel, files: Map<string, Blob>, emit: Emit, emitAndWait: EmitAndWait}} options */
  constructor({ channel, files, emit, emitAndWait }) {
    this.channel = channel;
    /** @type {Map<string, Blob>} path -> Blob/File, re-mounted after a restart (the Sandbox's) */
    this.files = files;
    this.emit = emit;
    this.emitAndWait = emitAndWait;
    // Set while the worker is being replaced and rebuilt: requests wait for it, so no
    // cell runs before the files (and, with persistence, the variables) are back.
    /** @type {Promise<unknown>} */
    this.gate = Promise.resolve();
    this.depth = 0; // > 0 while the `replaced` listeners run (a replay in progress)
    /** Whether a replacement rebuilds the variables (changes what the messages say). */
    this.rebuildsState = false;
  }

  /**
   * End the worker, answer what was pending, start a new one, re-mount files, then
   * let the `replaced` listeners rebuild. Requests made meanwhile wait (see settled()).
   * @param {string} reason "timeout" | "memory" | "crash" | "busy" | "interrupted" | "restart"
   * @param {string | null} [message] @param {number | null} [runId] the run it is about
   */
  recover(reason, message = null, runId = null) {
    // A replayed cell that itself kills the worker: replace it again, but do not
    // start another replay from inside this one.
    const nested = this.depth > 0;
    this.gate = this.replaceWorker(reason, message, runId, nested);
    return this.gate;
  }

  /** Resolves once no replacement or rebuild is under way. */
  async settled() {
    let gate;
    do {
      gate = this.gate;
      await gate;
    } while (gate !== this.gate);
  }

  /** @param {string} reason @param {string | null} message @param {number | null} runId @param {boolean} nested */
  async replaceWorker(reason, message, runId, nested) {
    const rpc = this.channel.rpc;
    const lost = [...rpc.pending].filter(([id]) => id !== 0);
    for (const [id, entry] of lost) {
      if (entry.method === "run") {
        const status = reason === "restart" ? "interrupted" : reason === "crash" || reason === "busy" ? "error" : reason;
        rpc.settle(id, {
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
        rpc.settle(id, { status: "error", message: explain(reason, message, this.rebuildsState) });
      }
    }
    rpc.clear(); // a boot still under way is not answered: the new worker's boot replaces it
    await this.restartOrReplace();
    this.emit("restarted", { reason, runId });
    this.depth++;
    try {
      await this.emitAndWait("replaced", { reason, runId, nested });
    } catch (err) {
      this.emit("error", { message: `after the restart: ${(err && /** @type {any} */ (err).message) || err}` });
    } finally {
      this.depth--;
    }
  }

  /** A new worker in the frame, or a new frame when the frame is dead or the restart
   * never finishes: no request waits forever on a frame that is gone. */
  async restartOrReplace() {
    const channel = this.channel;
    const remount = () => this.remount();
    channel.replacing = true;
    try {
      if (await channel.frameAlive()) {
        /** @type {ReturnType<typeof setTimeout> | undefined} */
        let timer;
        const late = new Promise((resolve) => (timer = setTimeout(() => resolve("late"), RESTART_DEADLINE_MS)));
        const outcome = await Promise.race([channel.restartWorker(remount).then(() => "ok", () => "failed"), late]);
        clearTimeout(timer);
        if (outcome === "ok") return;
      }
      await channel.replaceFrame(remount);
    } finally {
      channel.replacing = false;
    }
  }

  /** Re-mount the uploads right behind a boot request, before anything else can be
   * sent: the worker handles messages in order, so no run sees an empty /data. */
  remount() {
    return [...this.files].map(([path, file]) => this.channel.rpc.call("mountFile", { path, file }));
  }
}
