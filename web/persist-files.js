// The files side of persistence (persist.js builds on it): stored files written back
// into the sandbox, the files a run wrote kept within keep.js's caps and the ones it
// deleted forgotten, and changes other tabs made mirrored into this tab's sandbox.
// Storage failures never fail the operation: a `storage-error` event says what was not
// saved and why.

import { StoreError } from "./shared/store.js";
import { notKeptNote, planKeep, storablePath } from "./shared/keep.js";
import { FIRST_CONVERSATION } from "./shared/conversations.js";

/**
 * @typedef {import("./sandbox/client.js").Sandbox} Sandbox
 * @typedef {import("./shared/store.js").Store} Store
 */

export class PersistedFiles {
  /** @param {{sandbox: Sandbox, store: Store, emit: (type: string, detail: object) => void, session: string}} options */
  constructor({ sandbox, store, emit, session }) {
    this.sandbox = sandbox;
    this.store = store;
    this.emit = emit;
    this.sessionId = session;
    /** The open conversation (persist-conversations.js): files stored now are used by it. */
    this.conversationId = FIRST_CONVERSATION;
    /** Resolves once the open conversation is known (persist.js). @type {Promise<void>} */
    this.opening = Promise.resolve();
  }

  /**
   * Stored files into the sandbox: uploads mounted from their Blobs (read lazily),
   * outputs written as plain files so cells can change them.
   * @param {import("./shared/store.js").FileRecord[]} files @param {{uploads: boolean}} options
   */
  async writeBack(files, { uploads }) {
    for (const file of files) {
      if (!storablePath(file.path, file.kind)) {
        // Stored before paths were checked, or planted: never written back.
        await this.store.deleteFile(this.sessionId, file.path).catch(() => {});
        this.emit("storage-error", { message: `A saved file with an unsafe path was removed: ${String(file.path).slice(0, 200)}`, quota: false, path: null });
        continue;
      }
      try {
        if (file.kind === "output") {
          await this.sandbox.writeFile(file.path, new Uint8Array(await file.blob.arrayBuffer()), { direct: true, remember: false });
        } else if (uploads || !this.sandbox.files.has(file.path)) {
          await this.sandbox.mountFile(file.path, file.blob, { direct: true });
        }
      } catch (err) {
        this.report(err, `${file.path} could not be restored`);
      }
    }
  }

  /** @param {import("./shared/protocol.js").RunResult} result
   * @param {Array<{path: string, size: number}>} files @param {string[]} gone */
  async keepOutputs(result, files, gone) {
    /** @type {import("./shared/store.js").FileRecord[]} */
    let stored = [];
    try {
      stored = await this.store.listFiles(this.sessionId);
    } catch (err) {
      this.report(err, "the files this run wrote were not saved for next time (they are still here for this session)");
      return;
    }
    for (const path of gone) {
      // Deleted in the sandbox: deleted from the store, so a reload does not bring it back.
      if (stored.some((f) => f.path === path && f.kind === "output")) await this.deleteFile(path);
    }
    const kept = new Map(stored.filter((f) => f.kind === "output" && !gone.includes(f.path)).map((f) => [f.path, f.size]));
    const { keep, skipped } = planKeep(files, kept, { memoryLimitMB: this.sandbox.memoryLimitMB });
    for (const file of keep) {
      try {
        const bytes = await this.sandbox.readFile(file.path, { direct: true, output: true });
        await this.saveFile(file.path, new Blob([/** @type {Uint8Array<ArrayBuffer>} */ (bytes)]), "output");
      } catch {
        // Deleted again before it could be read, or no longer a plain file: nothing to keep.
      }
    }
    const note = notKeptNote(skipped);
    if (note) {
      result.stderr = `${result.stderr || ""}${note}`;
      this.emit("storage-error", { message: note.trim().replace(/^\[|\]$/g, ""), quota: false, path: skipped[0].path });
    }
  }

  /** Store a file; on failure say so (the file itself stays in this session).
   * @param {string} path @param {Blob} blob @param {"upload" | "output"} kind */
  async saveFile(path, blob, kind) {
    if (!storablePath(path, kind)) return false;
    await this.opening;
    try {
      await this.store.putFile(this.sessionId, path, blob, kind, this.conversationId);
      return true;
    } catch (err) {
      const name = path.split("/").pop();
      this.report(err, `${name} was not saved for next time (it is still here for this session)`, path);
      return false;
    }
  }

  /** @param {string} path */
  async deleteFile(path) {
    try {
      await this.store.deleteFile(this.sessionId, path);
    } catch (err) {
      this.report(err, `${path} could not be deleted from the browser's storage`, path);
    }
  }

  /** Another tab stored or deleted something: mirror it in this tab's sandbox.
   * @param {Record<string, any>} message */
  async onOtherTab(message) {
    // Another session's files and records are not this one's business.
    if (message.type === "session" ? message.id !== this.sessionId : message.session !== this.sessionId) return;
    try {
      if (message.type === "file" && message.action === "put") {
        const file = await this.store.getFile(this.sessionId, message.path);
        if (file && !storablePath(file.path, file.kind)) return;
        if (file && file.kind === "output") await this.sandbox.writeFile(file.path, new Uint8Array(await file.blob.arrayBuffer()), { remember: false });
        else if (file) await this.sandbox.mountFile(file.path, file.blob);
      } else if (message.type === "file" && message.action === "delete") {
        await this.sandbox.deleteFile(message.path);
      } else if (message.type === "cleared") {
        for (const path of message.paths || []) await this.sandbox.deleteFile(String(path));
      }
    } catch {
      // The sandbox may not have had the file; the list refresh below shows the truth.
    }
    this.emit("storage-changed", { ...message });
  }

  /** @param {unknown} err @param {string} what @param {string} [path] */
  report(err, what, path) {
    const quota = err instanceof StoreError && err.quota;
    const message = quota
      ? `Browser storage is full: ${what}. Delete files you no longer need.`
      : `Not saved in the browser: ${what} (${(err && /** @type {any} */ (err).message) || err}).`;
    this.emit("storage-error", { message, quota, path: path || null });
  }
}
