// The store's object stores, and the upgrades that take a database from an older
// version to this one (store.js opens it; PROTOCOL.md §6 has the record shapes). An
// upgrade runs in the browser's upgrade transaction: whole, or not at all. Each step
// starts when the one before has moved its records (their cursors would otherwise
// interleave over the same stores).

export const DB_VERSION = 5;
export const DEFAULT_SESSION = "default";

/** Create what `db` lacks, moving older versions' records into it.
 * @param {IDBDatabase} db @param {IDBTransaction} upgrade */
export function upgradeSchema(db, upgrade) {
  const steps = [
    (/** @type {() => void} */ next) => (db.objectStoreNames.contains("session-files") ? next() : upgradeFiles(db, upgrade, next)),
    (/** @type {() => void} */ next) => {
      if (!db.objectStoreNames.contains("sessions")) db.createObjectStore("sessions", { keyPath: "id" });
      next();
    },
    (/** @type {() => void} */ next) => (db.objectStoreNames.contains("session-cells") ? next() : moveCells(db, upgrade, next)),
    (/** @type {() => void} */ next) => (db.objectStoreNames.contains("conversations") ? next() : makeConversations(db, upgrade, next)),
    (/** @type {() => void} */ next) => (db.objectStoreNames.contains("conversation-asks") ? next() : moveAsks(db, upgrade, next)),
  ];
  const step = (/** @type {number} */ i) => i < steps.length && steps[i](() => step(i + 1));
  step(0);
}

/** A new conversation's id: unique enough across tabs and time. */
export function newConversationId() {
  const random = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("");
  return `c${Date.now().toString(36)}${random}`;
}

/** Walk every record of `store`, calling `each(cursor)`, then `done()`.
 * @param {IDBObjectStore} store @param {(cursor: IDBCursorWithValue) => void} each @param {() => void} done */
function walk(store, each, done) {
  store.openCursor().onsuccess = (ev) => {
    const cursor = /** @type {IDBCursorWithValue | null} */ (/** @type {IDBRequest} */ (ev.target).result);
    if (!cursor) return done();
    each(cursor);
    cursor.continue();
  };
}

/** Version 2's store of files, with version 1's (files without a session, which belong
 * to the default session) copied in. @param {IDBDatabase} db @param {IDBTransaction} upgrade @param {() => void} next */
function upgradeFiles(db, upgrade, next) {
  const files = db.createObjectStore("session-files", { keyPath: ["session", "path"] });
  if (!db.objectStoreNames.contains("files")) return next();
  walk(upgrade.objectStore("files"), (cursor) => files.put({ ...cursor.value, session: DEFAULT_SESSION }), () => {
    db.deleteObjectStore("files");
    next();
  });
}

/** Version 3's cell log: one record per cell, its key in the order cells were logged
 * (across tabs too), the session an index. Version 2's logs move out of their session
 * records. @param {IDBDatabase} db @param {IDBTransaction} upgrade @param {() => void} next */
function moveCells(db, upgrade, next) {
  const cells = db.createObjectStore("session-cells", { autoIncrement: true });
  cells.createIndex("session", "session");
  walk(upgrade.objectStore("sessions"), (cursor) => {
    const { cells: logged, ...record } = cursor.value || {};
    if (!Array.isArray(logged)) return;
    for (const code of logged) if (typeof code === "string") cells.add({ session: record.id, code });
    cursor.update(record);
  }, next);
}

/**
 * Version 4's conversations: many per session. `conversations` holds each one's head
 * (small: listing them reads no history), `conversation-data` its transcript and agent
 * messages, the cell log gains a `conversation`, a file the conversations that use it,
 * and a session record keeps only which conversation is open. Version 3's one
 * conversation per session becomes the first of its list.
 * @param {IDBDatabase} db @param {IDBTransaction} upgrade @param {() => void} next
 */
function makeConversations(db, upgrade, next) {
  const heads = db.createObjectStore("conversations", { keyPath: ["session", "id"] });
  heads.createIndex("session", "session");
  const data = db.createObjectStore("conversation-data", { keyPath: ["session", "id"] });
  const cells = upgrade.objectStore("session-cells");
  cells.createIndex("conversation", ["session", "conversation"]);
  const sessions = upgrade.objectStore("sessions");
  /** @type {Map<string, string>} session -> its conversation's new id */
  const moved = new Map();
  /** @param {string} session @param {any} old the version-3 record, if any */
  const move = (session, old) => {
    const id = newConversationId();
    moved.set(session, id);
    const transcript = old && old.transcript && Array.isArray(old.transcript.asks) ? old.transcript : { version: 1, asks: [] };
    const updated = (old && Number(old.updated)) || Date.now() / 1000;
    const first = transcript.asks.find((/** @type {any} */ a) => a && typeof a.question === "string");
    heads.put({ session, id, title: titleOf(first ? first.question : ""), created: updated, updated, asks: transcript.asks.length, steps: countSteps(transcript.asks), deleted: null });
    data.put({ session, id, transcript, agentMessages: old && Array.isArray(old.agentMessages) ? old.agentMessages : [], pending: (old && old.pending) || null });
    sessions.put({ id: session, current: id, updated });
    return id;
  };
  walk(sessions, (cursor) => {
    const old = cursor.value || {};
    if (typeof old.id === "string") move(old.id, old);
  }, () => walk(cells, (cursor) => {
    const cell = cursor.value || {};
    const session = String(cell.session);
    cursor.update({ ...cell, conversation: moved.get(session) || move(session, null) });
  }, () => walk(upgrade.objectStore("session-files"), (cursor) => {
    const id = moved.get(cursor.value.session);
    if (id) cursor.update({ ...cursor.value, conversations: [id] });
  }, next)));
}

/**
 * Version 5's asks: one record per ask, added once when it ends (its key in the order
 * asks were kept, across tabs; indexes "session" and "conversation"), instead of a
 * transcript in `conversation-data` that every later ask wrote again, figures and all.
 * Version 4's transcripts move out, in order.
 * @param {IDBDatabase} db @param {IDBTransaction} upgrade @param {() => void} next
 */
function moveAsks(db, upgrade, next) {
  const asks = db.createObjectStore("conversation-asks", { autoIncrement: true });
  asks.createIndex("session", "session");
  asks.createIndex("conversation", ["session", "conversation"]);
  walk(upgrade.objectStore("conversation-data"), (cursor) => {
    const { transcript, ...record } = cursor.value || {};
    if (transcript === undefined) return;
    const kept = transcript && Array.isArray(transcript.asks) ? transcript.asks : [];
    for (const ask of kept) asks.add({ session: record.session, conversation: record.id, ask });
    cursor.update(record);
  }, next);
}

/** A conversation's title from its first question: one line, at most 80 characters.
 * @param {unknown} question */
export function titleOf(question) {
  const line = String(question || "").replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79).trimEnd()}…` : line;
}

/** @param {any[]} asks */
export function countSteps(asks) {
  return asks.reduce((n, a) => n + (a && Array.isArray(a.steps) ? a.steps.length : 0), 0);
}
