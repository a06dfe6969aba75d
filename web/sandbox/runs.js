// The Sandbox's cells: a run in the current worker (its deadline counted from when
// the worker starts it, a backstop for one that never starts, one retry when the
// worker was busy with an earlier cell's leftovers), interrupting it, and a scan in a
// fresh worker no cell can reach. One part of the Sandbox (client.js): it calls over
// the channel, and replaces the worker through `recover` (recovery.js, through the
// Sandbox); a recorded run is the `ran` event (events.js).

import { CLOSED, MARKER_ROOM, toRunResult } from "./results.js";
import { runFresh } from "./fresh.js";

/** @typedef {import("../shared/protocol.js").RunResult} RunResult */
/** @typedef {import("./channel.js").SandboxChannel} SandboxChannel */
/** @typedef {import("./channel.js").Recover} Recover */
/** @typedef {import("./recovery.js").SandboxRecovery} SandboxRecovery */
/** @typedef {import("./recovery.js").EmitAndWait} EmitAndWait */
/** @typedef {{onStream?: (name: string, text: string) => void, collected: {stdout: string, stderr: string}, started?: () => void}} RunEntry */
/** @typedef {{timeoutMs?: number, onStream?: (name: string, text: string) => void, direct?: boolean, record?: boolean}} RunOptions */

export const DEFAULT_TIMEOUT_MS = 60_000;
const GRACE_MS = 3_000; // after the deadline's KeyboardInterrupt, before the worker is ended
const BACKSTOP_MS = 15_000; // beyond the queue's own limits, for a cell that never starts

/** @param {number} started */
const closedResult = (started) => toRunResult({ status: "error", error: { type: "SandboxClosed", message: CLOSED, traceback: "", line: null } }, { collected: { stdout: "", stderr: "" } }, started);

export class SandboxRuns {
  /** @param {{channel: SandboxChannel, recovery: SandboxRecovery, files: Map<string, Blob>, outputLimit: number, settled: () => Promise<void>, recover: Recover, emitAndWait: EmitAndWait}} options */
  constructor({ channel, recovery, files, outputLimit, settled, recover, emitAndWait }) {
    this.channel = channel;
    this.recovery = recovery;
    /** @type {Map<string, Blob>} the uploads (the Sandbox's), what a scan mounts */
    this.files = files;
    this.outputLimit = outputLimit;
    this.settled = settled;
    this.recover = recover;
    this.emitAndWait = emitAndWait;
    /** @type {{code: string, files: Array<[string, Blob]>, result: RunResult} | null} the last scan() */
    this.lastScan = null;
    this.queueEnd = 0; // when the runs queued so far may have ended at the latest
    this.currentRun = 0; // the id of the last run sent
  }

  /** Run a cell (Sandbox.run). @param {string} code @param {RunOptions} [options] @returns {Promise<RunResult>} */
  async run(code, { timeoutMs = DEFAULT_TIMEOUT_MS, onStream, direct = false, record = true } = {}) {
    const result = await this.runOnce(code, { timeoutMs, onStream, direct, record });
    if (!result.busy) return result;
    // The worker was busy with an earlier cell's leftovers and never started this one
    // (watch.js): it was replaced, and the cell runs in the new worker. A replay's
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
    if (this.channel.closed) return closedResult(performance.now());
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
          if (this.recovery.rebuildsState && result.error) result.error.message = result.error.message.replace("variables are lost", "variables are rebuilt by re-running your earlier successful cells");
          await this.recover(reply.restartNeeded === "crash" ? "crash" : "memory", null, id);
          result.restarted = true;
        }
        if (record) {
          // The outputs the run deleted as the worker saw it (not the kernel: a cell can change that).
          const deleted = !reply.restartedByClient && Array.isArray(reply.outputsDeleted) ? reply.outputsDeleted.filter((/** @type {unknown} */ p) => typeof p === "string") : [];
          try {
            await this.emitAndWait("ran", { code, result, deleted });
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

  /** Run `code` in a fresh worker (Sandbox.scan).
   * @param {string} code @param {{timeoutMs?: number, outputLimit?: number}} [options] @returns {Promise<RunResult>} */
  async scan(code, { timeoutMs = DEFAULT_TIMEOUT_MS, outputLimit = 9_000_000 } = {}) {
    const started = performance.now();
    const empty = { collected: { stdout: "", stderr: "" } };
    if (this.channel.closed) return closedResult(started);
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

  /** Stop the running cell (Sandbox.interrupt). */
  async interrupt() {
    const id = this.currentRun;
    if (!id || !this.channel.isPending(id)) return { status: "ok", running: false };
    if (this.channel.interruptSoftly()) return { status: "ok", running: true, soft: true };
    await this.recover("interrupted", null, id);
    return { status: "ok", running: true, soft: false };
  }
}
