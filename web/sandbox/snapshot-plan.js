// Snapshot starts (README, Architecture): which snapshot to start from (the one an
// earlier visit kept, the build's, or none), and after the start keeping it, dropping
// a refused one, or making one in a second, short-lived worker once the page is idle.

import { canKeep, commitSnapshot, dropSnapshots, keepParts, keepRuntime, loadSnapshot, markChecked, saveSnapshot, snapshotKey } from "./snapshot-store.js";
import { CLOSED } from "./results.js";
import { SandboxRecovery } from "./recovery.js";
import { connect } from "../shared/seam.js";

export class SandboxSnapshots extends SandboxRecovery {
  /** @param {{root: URL, container: HTMLElement, snapshot: boolean}} options */
  constructor({ root, container, snapshot }) {
    super({ root, container });
    this.snapshotEnabled = snapshot !== false;
    /** @type {string | null} */
    this.snapshotKey = null;
    /** Resolves with {status: "saved" | "failed" | "restored" | "rejected" | "off", ...} once this visit's snapshot work is done.
     * @type {Promise<Record<string, unknown>> | null} */
    this.snapshotDone = null;
    this.runtimeKept = false;
    /** The build's snapshot being written to Cache Storage while the worker restores it.
     * @type {Promise<void> | null} */
    this.keeping = null;
  }

  /** A first visit: keep the build's snapshot (all but its meta) while the worker
   * restores it, so that the copy is there even if the page closes soon after ready. */
  keepShipped(snapshot) {
    if (!snapshot || !canKeep()) return;
    this.keeping = keepParts(this.root, this.snapshotKey, snapshot, this.coreRuntime());
    this.keeping.catch(() => {});
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
      // Kept in Cache Storage for the next visit (the HTTP cache may not hold 185 MB):
      // written while the worker restored it (keepShipped), and made whole here.
      if (this.closed) return done({ status: "restored", source: "build", message: CLOSED });
      try {
        if (!this.keeping) throw new Error("not kept: this page has no Cache Storage (it needs https or localhost)");
        await this.keeping;
        this.config.snapshot = await commitSnapshot(this.root, this.snapshotKey, this.config.snapshot.meta);
      } catch (err) {
        // Not kept (no Cache Storage, little quota left): the next visit downloads it again.
        return done({ status: "restored", source: "build", message: String((err && err.message) || err) });
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
      if (!(await this.whenIdle())) return done({ status: "failed", message: CLOSED });
      const made = await this.makeSnapshot();
      // Restarts (frame-restart) restore from it too, from now on.
      this.config.snapshot = await saveSnapshot(this.root, this.snapshotKey, made, this.coreRuntime());
      return done({ status: "saved", bytes: made.snap.byteLength + made.fs.byteLength });
    } catch (err) {
      return done({ status: "failed", message: String((err && err.message) || err) });
    }
  }

  /** A short-lived second worker in the frame makes the snapshot (PROTOCOL.md §3). */
  async makeSnapshot() {
    const channel = new MessageChannel();
    // Only its boot reply counts (its stdout and the like are dropped).
    const maker = connect(channel.port1);
    const reply = maker.expect(0);
    // A worker that died without a word (out of memory) must not leave this pending.
    const silent = setTimeout(() => maker.settle(0, { status: "error", message: "the snapshot worker did not answer within 5 minutes" }), 300_000);
    this.port.notify("frame-snapshot", {}, [channel.port2]);
    const msg = await reply;
    clearTimeout(silent);
    channel.port1.close();
    const out = msg.snapshot;
    if (msg.status === "ok" && out && out.snap instanceof ArrayBuffer && out.fs instanceof ArrayBuffer && out.meta && typeof out.meta === "object") return out;
    throw new Error(typeof msg.message === "string" ? msg.message : "the snapshot worker failed");
  }
}
