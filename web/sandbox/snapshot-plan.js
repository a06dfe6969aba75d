// Snapshot starts (README, Architecture): which snapshot to start from (the one an
// earlier visit kept, the build's, or none), and after the start keeping it, dropping
// a refused one, or making one in a second, short-lived worker once the page is idle.
// One part of the Sandbox (client.js): it reads the runtime's files and, to make a
// snapshot, the channel's frame; it sets the boot config's snapshot.

import { canKeep, commitSnapshot, dropSnapshots, keepParts, keepRuntime, loadRuntime, loadSnapshot, markChecked, saveSnapshot, snapshotKey } from "./snapshot-store.js";
import { CLOSED } from "./results.js";
import { connect } from "../shared/seam.js";

/** @typedef {import("./runtime.js").SandboxRuntime} SandboxRuntime */
/** @typedef {import("./channel.js").SandboxChannel} SandboxChannel */
/** @typedef {import("./runtime.js").Emit} Emit */
/** @typedef {{meta: Record<string, any>, snap: any, fs: any}} Snapshot */
/** @typedef {"kept" | "build" | null} Plan */

export class SandboxSnapshots {
  /** @param {{runtime: SandboxRuntime, channel: SandboxChannel, config: Record<string, any>, emit: Emit, enabled: boolean}} options */
  constructor({ runtime, channel, config, emit, enabled }) {
    this.runtime = runtime;
    this.channel = channel;
    /** @type {Record<string, any>} the boot config (the Sandbox's, shared): its snapshot and snapshotSource */
    this.config = config;
    this.emit = emit;
    this.enabled = enabled;
    /** @type {string | null} */
    this.key = null;
    this.runtimeKept = false;
    /** The build's snapshot being written to Cache Storage while the worker restores it.
     * @type {Promise<void> | null} */
    this.keeping = null;
  }

  /** A first visit: keep the build's snapshot (all but its meta) while the worker
   * restores it, so that the copy is there even if the page closes soon after ready.
   * @param {Snapshot | null} snapshot */
  keepShipped(snapshot) {
    if (!snapshot || !canKeep() || !this.key) return;
    this.keeping = keepParts(this.runtime.root, this.key, snapshot, this.runtime.coreRuntime());
    this.keeping.catch(() => {});
  }

  /** Pyodide's own files kept beside the snapshot `plan` starts from, or null (then
   * they are fetched). @param {Plan} plan @returns {Promise<Record<string, Blob> | null>} */
  async keptRuntime(plan) {
    const core = this.runtime.coreNames();
    const sizes = this.runtime.info.sizes;
    const kept = plan === "kept" && this.key ? await loadRuntime(this.runtime.root, this.key, Object.fromEntries(core.map((name) => [name, sizes[name]]))) : null;
    this.runtimeKept = Boolean(kept);
    return kept;
  }

  /** The kept copies would not start: drop them all; the start goes on as a first
   * visit without a snapshot (a new one is made once idle). */
  async forget() {
    await dropSnapshots().catch(() => {});
    this.runtimeKept = false;
    this.config.snapshot = null;
  }

  /** Which snapshot to start from: "kept" (Cache Storage, from an earlier visit),
   * "build" (shipped with the site) or null (boot cold). Sets config.snapshotSource.
   * @param {Promise<Blob | null> | null} recipe @returns {Promise<Plan>} */
  async findSnapshot(recipe) {
    if (!this.enabled || !recipe) return null;
    try {
      const source = await recipe;
      if (!source) return null;
      this.key = await snapshotKey(this.runtime.info, source);
      this.config.snapshotSource = source;
      this.config.snapshot = await loadSnapshot(this.runtime.root, this.key);
      if (this.config.snapshot) return "kept";
      const files = this.runtime.shippedFiles();
      return files.heap && files.fs && files.meta ? "build" : null;
    } catch {
      this.config.snapshot = null; // no snapshot: a cold boot, as without this feature
      return null;
    }
  }

  /** After "ready": drop a snapshot the worker refused, or make one if there was none.
   * Resolves with {status: "saved" | "failed" | "restored" | "rejected" | "off", ...}.
   * @param {{restored?: boolean, error?: unknown} | undefined} outcome @param {Plan} plan
   * @returns {Promise<Record<string, unknown>>} */
  async afterBoot(outcome, plan) {
    /** @param {Record<string, unknown>} detail */
    const done = (detail) => {
      this.emit("snapshot", detail);
      return detail;
    };
    const root = this.runtime.root;
    const key = /** @type {string} */ (this.key);
    if (!this.enabled || !this.config.snapshotSource) return done({ status: "off" });
    // A snapshot that passed the worker's smoke test in this browser skips it next time.
    if (outcome && outcome.restored) this.config.snapshot.meta = { ...this.config.snapshot.meta, checkedIn: navigator.userAgent };
    if (outcome && outcome.restored && plan === "kept") {
      await markChecked(root, key, this.config.snapshot.meta).catch(() => {});
      if (!this.runtimeKept) await keepRuntime(root, key, this.runtime.coreRuntime()).catch(() => {});
      return done({ status: "restored", source: "kept" });
    }
    if (outcome && outcome.restored) {
      // Kept in Cache Storage for the next visit (the HTTP cache may not hold 185 MB):
      // written while the worker restored it (keepShipped), and made whole here.
      if (this.channel.closed) return done({ status: "restored", source: "build", message: CLOSED });
      try {
        if (!this.keeping) throw new Error("not kept: this page has no Cache Storage (it needs https or localhost)");
        await this.keeping;
        this.config.snapshot = await commitSnapshot(root, key, this.config.snapshot.meta);
      } catch (err) {
        // Not kept (no Cache Storage, little quota left): the next visit downloads it again.
        return done({ status: "restored", source: "build", message: String((err && /** @type {any} */ (err).message) || err) });
      }
      return done({ status: "restored", source: "build" });
    }
    if (outcome && outcome.error) {
      this.config.snapshot = null;
      if (this.keeping) await this.keeping.catch(() => {}); // then dropped with the rest
      await dropSnapshots().catch(() => {});
      if (plan === "kept") return done({ status: "rejected", message: String(outcome.error) }); // made again next visit
    }
    // Nowhere to keep one (no Cache Storage outside a secure context): do not make it.
    if (!canKeep()) return done({ status: "failed", message: "not made: this page has no Cache Storage (it needs https or localhost)" });
    try {
      // Making one costs seconds of CPU: not under the first cells.
      if (!(await this.channel.whenIdle())) return done({ status: "failed", message: CLOSED });
      const made = await this.makeSnapshot();
      // Restarts (frame-restart) restore from it too, from now on.
      this.config.snapshot = await saveSnapshot(root, key, made, this.runtime.coreRuntime());
      return done({ status: "saved", bytes: made.snap.byteLength + made.fs.byteLength });
    } catch (err) {
      return done({ status: "failed", message: String((err && /** @type {any} */ (err).message) || err) });
    }
  }

  /** A short-lived second worker in the frame makes the snapshot (PROTOCOL.md §3).
   * @returns {Promise<Snapshot>} */
  async makeSnapshot() {
    const port = this.channel.port;
    if (!port) throw new Error("the sandbox frame is gone");
    const channel = new MessageChannel();
    // Only its boot reply counts (its stdout and the like are dropped).
    const maker = connect(channel.port1);
    const reply = maker.expect(0);
    // A worker that died without a word (out of memory) must not leave this pending.
    const silent = setTimeout(() => maker.settle(0, { status: "error", message: "the snapshot worker did not answer within 5 minutes" }), 300_000);
    port.notify("frame-snapshot", {}, [channel.port2]);
    const msg = await reply;
    clearTimeout(silent);
    channel.port1.close();
    const out = msg.snapshot;
    if (msg.status === "ok" && out && out.snap instanceof ArrayBuffer && out.fs instanceof ArrayBuffer && out.meta && typeof out.meta === "object") return out;
    throw new Error(typeof msg.message === "string" ? msg.message : "the snapshot worker failed");
  }
}
