// The store's object stores, and the upgrades that take a database from an older
// version to this one (store.js opens it; PROTOCOL.md §6 has the record shapes). An
// upgrade runs in the browser's upgrade transaction: whole, or not at all.

export const DB_VERSION = 3;
export const DEFAULT_SESSION = "default";

/** Create what `db` lacks, moving older versions' records into it.
 * @param {IDBDatabase} db @param {IDBTransaction} upgrade */
export function upgradeSchema(db, upgrade) {
  if (!db.objectStoreNames.contains("session-files")) upgradeFiles(db, upgrade);
  if (!db.objectStoreNames.contains("sessions")) db.createObjectStore("sessions", { keyPath: "id" });
  if (!db.objectStoreNames.contains("session-cells")) moveCells(db, upgrade);
}

/** Version 2's store of files, with version 1's (files without a session, which belong
 * to the default session) copied in the upgrade transaction: whole or not at all.
 * @param {IDBDatabase} db @param {IDBTransaction} upgrade */
function upgradeFiles(db, upgrade) {
  const files = db.createObjectStore("session-files", { keyPath: ["session", "path"] });
  if (!db.objectStoreNames.contains("files")) return;
  const old = upgrade.objectStore("files");
  old.openCursor().onsuccess = (ev) => {
    const cursor = /** @type {IDBCursorWithValue | null} */ (/** @type {IDBRequest} */ (ev.target).result);
    if (!cursor) {
      db.deleteObjectStore("files");
      return;
    }
    files.put({ ...cursor.value, session: DEFAULT_SESSION });
    cursor.continue();
  };
}

/** Version 3's cell log: one record per cell, its key in the order cells were logged
 * (across tabs too), the session an index. Version 2's logs move out of their session
 * records in the upgrade transaction. @param {IDBDatabase} db @param {IDBTransaction} upgrade */
function moveCells(db, upgrade) {
  const cells = db.createObjectStore("session-cells", { autoIncrement: true });
  cells.createIndex("session", "session");
  const sessions = upgrade.objectStore("sessions");
  sessions.openCursor().onsuccess = (ev) => {
    const cursor = /** @type {IDBCursorWithValue | null} */ (/** @type {IDBRequest} */ (ev.target).result);
    if (!cursor) return;
    const { cells: logged, ...record } = cursor.value || {};
    if (Array.isArray(logged)) {
      for (const code of logged) if (typeof code === "string") cells.add({ session: record.id, code });
      cursor.update(record);
    }
    cursor.continue();
  };
}
