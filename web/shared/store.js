// The browser-side store: what survives a reload or a browser restart, in one
// IndexedDB database ("reckon", the page's origin; the sandbox frame's opaque
// origin has no storage and never sees this). Record shapes: PROTOCOL.md §6.
//
// Every write is one IndexedDB transaction, so it lands whole or not at all: a
// QuotaExceededError aborts the transaction and leaves no partial record. A
// read-modify-write of a session record (append a cell, add an ask) happens inside
// one readwrite transaction too; the browser never runs two readwrite transactions
// on the same store at once, in any tab, so two tabs cannot lose each other's
// updates (no lock is needed beyond that). Other tabs hear about every change on a
// BroadcastChannel, so they can refresh their lists and their sandbox.
//
// Files belong to one session (key: [session, path]): a session never sees, lists or
// mounts another session's files. Version 1 kept files without a session; opening
// the database upgrades them into the default session. The cell log is a store of its
// own (version 3): logging a cell adds one small record, instead of rewriting a session
// record that grows with the conversation (6 ms per cell at 1 MB of history, on every run).
// A session keeps many conversations (version 4; conversations.js reads and writes them);
// its files are shared by them, each file listing the conversations that use it. An
// ask is a record of its own too (version 5): written once, when it ends.

import { DB_VERSION, DEFAULT_SESSION, upgradeSchema } from "./store-schema.js";

const DB_NAME = "reckon";
const CHANNEL = "reckon-store";
export { DEFAULT_SESSION };

/**
 * @typedef {{session: string, path: string, blob: Blob, size: number, mtime: number, kind: "upload" | "output", conversations?: string[]}} FileRecord
 * @typedef {{type: "file", session: string, action: "put" | "delete", path: string} | {type: "session", id: string} | {type: "conversations", session: string, id: string} | {type: "cleared", session: string, paths: string[]}} ChangeMessage
 */

/** A write that did not happen: `quota` says the browser's storage is full. */
export class StoreError extends Error {
  /** @param {string} message @param {{quota?: boolean, cause?: unknown}} [options] */
  constructor(message, { quota = false, cause } = {}) {
    super(message);
    this.name = "StoreError";
    this.quota = quota;
    this.cause = cause;
  }
}

export class Store {
  /** @param {{name?: string}} [options] */
  constructor({ name = DB_NAME } = {}) {
    this.name = name;
    /** @type {Promise<IDBDatabase> | null} */
    this.dbPromise = null;
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`${CHANNEL}:${name}`) : null;
  }

  /** @returns {Promise<IDBDatabase>} */
  db() {
    if (!this.dbPromise) {
      this.dbPromise = new Promise((resolve, reject) => {
        const request = indexedDB.open(this.name, DB_VERSION);
        request.onupgradeneeded = () => {
          const db = request.result;
          const upgrade = /** @type {IDBTransaction} */ (request.transaction);
          upgradeSchema(db, upgrade);
        };
        request.onsuccess = () => {
          const db = request.result;
          // Another tab upgrading the schema must not be blocked by this one.
          db.onversionchange = () => db.close();
          resolve(db);
        };
        request.onerror = () => reject(wrap(request.error, "could not open the browser's storage"));
        request.onblocked = () => reject(new StoreError("the browser's storage is busy in another tab; close it and reload"));
      });
      this.dbPromise.catch(() => (this.dbPromise = null));
    }
    return this.dbPromise;
  }

  /**
   * One transaction over `stores`; `body` queues its requests synchronously and
   * returns a getter for the result, read once the transaction has committed.
   * @template T
   * @param {string[]} stores @param {IDBTransactionMode} mode
   * @param {(tx: IDBTransaction) => (() => T)} body
   * @param {string} what for the error message
   * @returns {Promise<T>}
   */
  async transaction(stores, mode, body, what) {
    const db = await this.db();
    return new Promise((resolve, reject) => {
      let tx;
      try {
        tx = db.transaction(stores, mode, { durability: "strict" });
      } catch (err) {
        reject(wrap(err, what));
        return;
      }
      let result;
      try {
        result = body(tx);
      } catch (err) {
        tx.abort();
        reject(wrap(err, what));
        return;
      }
      // Resolve on commit, not on the request's success: only then is it on disk.
      tx.oncomplete = () => resolve(result());
      tx.onabort = () => reject(wrap(tx.error, what));
      tx.onerror = (ev) => ev.preventDefault(); // reported once, by onabort
    });
  }

  /** @param {string} session @returns {Promise<FileRecord[]>} the session's stored files (Blobs are read lazily) */
  listFiles(session) {
    return this.transaction(["session-files"], "readonly", (tx) => {
      const req = tx.objectStore("session-files").getAll(sessionRange(session));
      return () => req.result;
    }, "could not read the stored files");
  }

  /** @param {string} session @param {string} path @returns {Promise<FileRecord | undefined>} */
  getFile(session, path) {
    return this.transaction(["session-files"], "readonly", (tx) => {
      const req = tx.objectStore("session-files").get([session, path]);
      return () => req.result;
    }, `could not read ${path}`);
  }

  /**
   * Store a file of one session whole (or not at all), used by `conversation` besides
   * the conversations that used it before.
   * @param {string} session @param {string} path @param {Blob} blob @param {"upload" | "output"} kind
   * @param {string | null} [conversation]
   */
  async putFile(session, path, blob, kind, conversation = null) {
    /** @type {FileRecord} */
    const record = { session, path, blob, size: blob.size, mtime: Date.now() / 1000, kind };
    const old = await this.getFile(session, path);
    const before = old && Array.isArray(old.conversations) ? old.conversations : [];
    record.conversations = conversation && !before.includes(conversation) ? [...before, conversation] : before;
    // Put as soon as the transaction starts: a put queued from a callback is not refused
    // when the store is full (the browser checks the quota of what is queued at first).
    await this.transaction(["session-files"], "readwrite", (tx) => {
      tx.objectStore("session-files").put(record);
      return () => undefined;
    }, `could not save ${path}`);
    this.announce({ type: "file", session, action: "put", path });
    return record;
  }

  /** @param {string} session @param {string} path */
  async deleteFile(session, path) {
    await this.transaction(["session-files"], "readwrite", (tx) => {
      tx.objectStore("session-files").delete([session, path]);
      return () => undefined;
    }, `could not delete ${path}`);
    this.announce({ type: "file", session, action: "delete", path });
  }

  /** Delete one session's files and record (other sessions keep theirs); returns the
   * paths that were stored. @param {string} session */
  async clear(session) {
    const paths = await this.transaction(["session-files", "sessions", "session-cells", "conversations", "conversation-data", "conversation-asks"], "readwrite", (tx) => {
      const range = sessionRange(session);
      const keys = tx.objectStore("session-files").getAllKeys(range);
      tx.objectStore("session-files").delete(range);
      tx.objectStore("sessions").delete(session);
      tx.objectStore("conversations").delete(range);
      tx.objectStore("conversation-data").delete(range);
      deleteCells(tx, "session", session);
      deleteCells(tx, "session", session, "conversation-asks");
      return () => /** @type {[string, string][]} */ (/** @type {unknown} */ (keys.result)).map((key) => key[1]);
    }, "could not delete the stored data");
    this.announce({ type: "cleared", session, paths });
    return paths;
  }

  /** @param {ChangeMessage} message */
  announce(message) {
    if (this.channel) this.channel.postMessage(message);
  }

  /** Let go of the database and the channel (close() of the JS API). */
  close() {
    if (this.channel) this.channel.close();
    this.channel = null;
    if (this.dbPromise) this.dbPromise.then((db) => db.close(), () => {});
    this.dbPromise = Promise.reject(new StoreError("this Reckon was closed (close())"));
    this.dbPromise.catch(() => {});
  }

  /** @param {(message: ChangeMessage) => void} fn called for changes made in other tabs */
  onChange(fn) {
    if (this.channel) this.channel.onmessage = (ev) => ev.data && typeof ev.data === "object" && fn(ev.data);
  }
}

/** Queue the deletion of logged cells (or kept asks: `store`) in `tx`: a session's
 * (index "session") or one conversation's (index "conversation", key [session, id]).
 * @param {IDBTransaction} tx @param {"session" | "conversation"} index @param {IDBValidKey} key
 * @param {"session-cells" | "conversation-asks"} [store] */
export function deleteCells(tx, index, key, store = "session-cells") {
  const cells = tx.objectStore(store);
  const keys = cells.index(index).getAllKeys(key);
  keys.onsuccess = () => {
    for (const key of keys.result) cells.delete(key);
  };
}

/** Every [session, path] (or [session, id]) key of one session (arrays sort after
 * every string). @param {string} session */
export function sessionRange(session) {
  return IDBKeyRange.bound([session], [session, []]);
}

/** True for the browser's "storage is full" errors, whatever the engine calls them.
 * @param {unknown} err */
export function isQuotaError(err) {
  const name = err && /** @type {any} */ (err).name;
  const message = String((err && /** @type {any} */ (err).message) || "");
  return name === "QuotaExceededError" || /quota/i.test(message);
}

/** @param {unknown} err @param {string} what @returns {StoreError} */
function wrap(err, what) {
  if (err instanceof StoreError) return err;
  const quota = isQuotaError(err);
  const detail = err ? String(/** @type {any} */ (err).message || err) : "the write was aborted";
  return new StoreError(`${what}: ${quota ? "the browser's storage is full" : detail}`, { quota, cause: err });
}
