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

import { DB_VERSION, DEFAULT_SESSION, upgradeSchema } from "./store-schema.js";

const DB_NAME = "reckon";
const CHANNEL = "reckon-store";
export { DEFAULT_SESSION };

/**
 * @typedef {{session: string, path: string, blob: Blob, size: number, mtime: number, kind: "upload" | "output"}} FileRecord
 * @typedef {{version: number, asks: object[]}} TranscriptData
 * @typedef {{id: string, transcript: TranscriptData, agentMessages: object[], cells: string[], updated: number, pending?: {question: string, model: string | null, at: number} | null}} SessionRecord
 * @typedef {{type: "file", session: string, action: "put" | "delete", path: string} | {type: "session", id: string} | {type: "cleared", session: string, paths: string[]}} ChangeMessage
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

/** @param {string} id @returns {SessionRecord} */
export function emptySession(id) {
  return { id, transcript: { version: 1, asks: [] }, agentMessages: [], cells: [], updated: 0 };
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
   * Store a file of one session whole (or not at all).
   * @param {string} session @param {string} path @param {Blob} blob @param {"upload" | "output"} kind
   */
  async putFile(session, path, blob, kind) {
    /** @type {FileRecord} */
    const record = { session, path, blob, size: blob.size, mtime: Date.now() / 1000, kind };
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

  /** The session's record with its cell log. @param {string} id @returns {Promise<SessionRecord>} */
  async getSession(id) {
    const [record, cells] = await this.transaction(["sessions", "session-cells"], "readonly", (tx) => {
      const req = tx.objectStore("sessions").get(id);
      const logged = tx.objectStore("session-cells").index("session").getAll(id);
      return () => [req.result, logged.result];
    }, "could not read the saved conversation");
    return { ...normalize(id, record), cells: cells.map((/** @type {{code: string}} */ c) => c.code) };
  }

  /**
   * Read-modify-write a session's record in one readwrite transaction: atomic across
   * tabs. `change` must be synchronous (an IndexedDB transaction ends at the first
   * await). The cell log is not in the record (appendCell); `clearCells` empties it in
   * the same transaction. Resolves to the record as stored.
   * @param {string} id @param {(record: SessionRecord) => SessionRecord} change
   * @param {string} [what] @param {{clearCells?: boolean}} [options]
   * @returns {Promise<SessionRecord>}
   */
  async updateSession(id, change, what = "could not save the conversation", { clearCells = false } = {}) {
    const saved = await this.transaction(clearCells ? ["sessions", "session-cells"] : ["sessions"], "readwrite", (tx) => {
      const sessions = tx.objectStore("sessions");
      /** @type {any} */
      let next;
      const req = sessions.get(id);
      req.onsuccess = () => {
        const { cells: _cells, ...changed } = change(normalize(id, req.result));
        next = { ...changed, id, updated: Date.now() / 1000 };
        sessions.put(next);
      };
      if (clearCells) deleteCells(tx, id);
      return () => ({ ...next, cells: [] });
    }, what);
    this.announce({ type: "session", id });
    return saved;
  }

  /** Add one cell to the end of a session's log: one small record, whatever the
   * conversation's size. @param {string} id @param {string} code */
  async appendCell(id, code, what = "could not log the cell") {
    await this.transaction(["session-cells"], "readwrite", (tx) => {
      tx.objectStore("session-cells").add({ session: id, code });
      return () => undefined;
    }, what);
    this.announce({ type: "session", id });
  }

  /** Delete one session's files and record (other sessions keep theirs); returns the
   * paths that were stored. @param {string} session */
  async clear(session) {
    const paths = await this.transaction(["session-files", "sessions", "session-cells"], "readwrite", (tx) => {
      const range = sessionRange(session);
      const keys = tx.objectStore("session-files").getAllKeys(range);
      tx.objectStore("session-files").delete(range);
      tx.objectStore("sessions").delete(session);
      deleteCells(tx, session);
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

/** Queue the deletion of a session's logged cells in `tx`. @param {IDBTransaction} tx @param {string} session */
function deleteCells(tx, session) {
  const cells = tx.objectStore("session-cells");
  const keys = cells.index("session").getAllKeys(session);
  keys.onsuccess = () => {
    for (const key of keys.result) cells.delete(key);
  };
}

/** Every [session, path] key of one session (arrays sort after every string path).
 * @param {string} session */
function sessionRange(session) {
  return IDBKeyRange.bound([session], [session, []]);
}

/** @param {string} id @param {any} record @returns {SessionRecord} */
function normalize(id, record) {
  const empty = emptySession(id);
  if (!record || typeof record !== "object") return empty;
  return {
    ...empty,
    ...record,
    transcript: record.transcript && Array.isArray(record.transcript.asks) ? record.transcript : empty.transcript,
    agentMessages: Array.isArray(record.agentMessages) ? record.agentMessages : [],
    cells: Array.isArray(record.cells) ? record.cells : [],
  };
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
