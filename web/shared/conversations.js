// A session's conversations in the store (version 5; shapes in PROTOCOL.md §6): each
// one's head (title, times, counts: what a list shows, without reading any history),
// its data (agent messages, the ask under way), its asks (one record each, written
// once, when the ask ends) and its cell log. Every
// change is one readwrite transaction, as in store.js; the list's changes are
// announced as {type: "conversations", session, id}.

import { deleteCells, sessionRange } from "./store.js";
import { countSteps, titleOf } from "./store-schema.js";

/**
 * @typedef {import("./store.js").Store} Store
 * @typedef {import("./store.js").FileRecord} FileRecord
 * @typedef {{version: number, asks: object[]}} TranscriptData
 * @typedef {{question: string, model: string | null, at: number} | null} Pending
 * @typedef {{session: string, id: string, title: string, created: number, updated: number, asks: number, steps: number, deleted: number | null, renamed?: boolean}} ConversationHead
 * @typedef {{agentMessages: object[], pending: Pending}} ConversationData
 * @typedef {ConversationHead & ConversationData & {transcript: TranscriptData, cells: string[], stored: boolean}} ConversationRecord
 */

/** @param {string} session @param {string} id @returns {ConversationHead} */
function newHead(session, id) {
  const now = Date.now() / 1000;
  return { session, id, title: "", created: now, updated: now, asks: 0, steps: 0, deleted: null };
}

/** @param {any} data @returns {ConversationData} */
function dataOf(data) {
  const ok = data && typeof data === "object";
  return {
    agentMessages: ok && Array.isArray(data.agentMessages) ? data.agentMessages : [],
    pending: (ok && data.pending) || null,
  };
}

/** A session's first conversation, until one is stored as open: every tab of a new
 * session agrees on it without writing anything when it opens. */
export const FIRST_CONVERSATION = "c0";

/** The conversation a session had open last (FIRST_CONVERSATION when none was noted).
 * @param {Store} store @param {string} session @returns {Promise<string>} */
export async function currentConversation(store, session) {
  const record = await store.transaction(["sessions"], "readonly", (tx) => {
    const req = tx.objectStore("sessions").get(session);
    return () => req.result;
  }, "could not read the saved conversation");
  return record && typeof record.current === "string" ? /** @type {string} */ (record.current) : FIRST_CONVERSATION;
}

/** @param {Store} store @param {string} session @param {string} id */
export async function setCurrent(store, session, id) {
  await store.transaction(["sessions"], "readwrite", (tx) => {
    tx.objectStore("sessions").put({ id: session, current: id, updated: Date.now() / 1000 });
    return () => undefined;
  }, "could not note which conversation is open");
}

/** Every head of a session's conversations (deleted ones too: `deleted` says when).
 * @param {Store} store @param {string} session @returns {Promise<ConversationHead[]>} */
export function listConversations(store, session) {
  return store.transaction(["conversations"], "readonly", (tx) => {
    const req = tx.objectStore("conversations").getAll(sessionRange(session));
    return () => req.result;
  }, "could not read the list of conversations");
}

/** A conversation whole, with its asks and cell log (`stored`: false for one never written).
 * @param {Store} store @param {string} session @param {string} id @returns {Promise<ConversationRecord>} */
export async function getConversation(store, session, id) {
  const [head, data, asks, cells] = await store.transaction(["conversations", "conversation-data", "conversation-asks", "session-cells"], "readonly", (tx) => {
    const h = tx.objectStore("conversations").get([session, id]);
    const d = tx.objectStore("conversation-data").get([session, id]);
    const a = tx.objectStore("conversation-asks").index("conversation").getAll([session, id]);
    const c = tx.objectStore("session-cells").index("conversation").getAll([session, id]);
    return () => [h.result, d.result, a.result, c.result];
  }, "could not read the saved conversation");
  const code = cells.map((/** @type {{code: string}} */ c) => c.code);
  const transcript = { version: 1, asks: asks.map((/** @type {{ask: object}} */ a) => a.ask) };
  return { ...(head || newHead(session, id)), ...dataOf(data), transcript, cells: code, stored: Boolean(head) };
}

/**
 * Read-modify-write a conversation's data (and its head: counts, time, a title from
 * the first question unless renamed) in one transaction; `change` is synchronous.
 * `asks` (ended asks) are added as records of their own: an ask is written once, and
 * no later write reads or writes it again. Creates the conversation if it was not
 * stored yet. `clearCells` empties its log too.
 * @param {Store} store @param {string} session @param {string} id
 * @param {(data: ConversationData) => ConversationData} change @param {string} what
 * @param {{clearCells?: boolean, asks?: Array<{question?: unknown}>}} [options]
 */
export async function updateConversation(store, session, id, change, what, { clearCells = false, asks = [] } = {}) {
  await store.transaction(["conversations", "conversation-data", "conversation-asks", "session-cells"], "readwrite", (tx) => {
    const heads = tx.objectStore("conversations");
    const datas = tx.objectStore("conversation-data");
    const h = heads.get([session, id]);
    h.onsuccess = () => {
      const d = datas.get([session, id]);
      d.onsuccess = () => {
        const before = dataOf(d.result);
        const next = change(before);
        if (!h.result && next === before && !asks.length) return; // nothing to keep of a conversation never stored
        // Written to (by a tab that still had it open): alive again, so nothing is lost.
        const head = { ...(h.result || newHead(session, id)), updated: Date.now() / 1000, deleted: null };
        if (!head.renamed && !head.asks) head.title = titleOf(asks.length ? asks[0].question : next.pending ? next.pending.question : "");
        heads.put({ ...head, asks: (head.asks || 0) + asks.length, steps: (head.steps || 0) + countSteps(asks) });
        datas.put({ session, id, ...next });
        for (const ask of asks) tx.objectStore("conversation-asks").add({ session, conversation: id, ask });
      };
    };
    if (clearCells) deleteCells(tx, "conversation", [session, id]);
    return () => undefined;
  }, what);
  store.announce({ type: "conversations", session, id });
}

/** Add one cell to the end of a conversation's log (and the conversation to the list,
 * if it was not there yet: counted, not read, whatever its size). Resolves to whether
 * that made it a conversation of the list.
 * @param {Store} store @param {string} session @param {string} id @param {string} code @param {string} what */
export async function appendCell(store, session, id, code, what) {
  const created = await store.transaction(["conversations", "session-cells"], "readwrite", (tx) => {
    const heads = tx.objectStore("conversations");
    const known = heads.count([session, id]);
    known.onsuccess = () => known.result || heads.put(newHead(session, id));
    tx.objectStore("session-cells").add({ session, conversation: id, code });
    return () => known.result === 0;
  }, what);
  store.announce({ type: "session", id: session });
  if (created) store.announce({ type: "conversations", session, id });
  return created;
}

/**
 * Change a stored conversation's head; resolves to it as stored, or null when the
 * session has no conversation of that id.
 * @param {Store} store @param {string} session @param {string} id
 * @param {(head: ConversationHead) => ConversationHead} change @param {string} what
 * @returns {Promise<ConversationHead | null>}
 */
export async function changeHead(store, session, id, change, what) {
  const head = await store.transaction(["conversations"], "readwrite", (tx) => {
    const heads = tx.objectStore("conversations");
    /** @type {ConversationHead | null} */
    let next = null;
    const req = heads.get([session, id]);
    req.onsuccess = () => {
      if (!req.result) return;
      next = change(req.result);
      heads.put(next);
    };
    return () => next;
  }, what);
  if (head) store.announce({ type: "conversations", session, id });
  return head;
}

/** A new conversation uses the files that are there when it starts (all but those only
 * deleted conversations use). @param {Store} store @param {string} session @param {string} id */
export async function adoptFiles(store, session, id) {
  await store.transaction(["session-files", "conversations"], "readwrite", (tx) => {
    const files = tx.objectStore("session-files");
    const heads = tx.objectStore("conversations").getAll(sessionRange(session));
    heads.onsuccess = () => {
      const gone = new Set(heads.result.filter((h) => h.deleted).map((h) => h.id));
      const all = files.getAll(sessionRange(session));
      all.onsuccess = () => {
        for (const file of /** @type {FileRecord[]} */ (all.result)) {
          const users = file.conversations;
          if (!Array.isArray(users) || users.includes(id)) continue; // from before: every conversation's
          if (users.length && users.every((u) => gone.has(u))) continue;
          files.put({ ...file, conversations: [...users, id] });
        }
      };
    };
    return () => undefined;
  }, "could not note which files the new conversation uses");
}

/**
 * Forget the session's deleted conversations for good: heads, data, cell logs, and the
 * files no other conversation uses. Resolves to those files' paths.
 * @param {Store} store @param {string} session @returns {Promise<string[]>}
 */
export async function purgeDeleted(store, session) {
  /** @type {string[]} */
  const paths = [];
  // Read first: most opens have nothing to forget, and then write nothing.
  if (!(await listConversations(store, session)).some((h) => h.deleted)) return paths;
  await store.transaction(["session-files", "conversations", "conversation-data", "conversation-asks", "session-cells"], "readwrite", (tx) => {
    const heads = tx.objectStore("conversations");
    const all = heads.getAll(sessionRange(session));
    all.onsuccess = () => {
      const gone = new Set(all.result.filter((h) => h.deleted).map((h) => h.id));
      if (!gone.size) return;
      for (const id of gone) {
        heads.delete([session, id]);
        tx.objectStore("conversation-data").delete([session, id]);
        deleteCells(tx, "conversation", [session, id]);
        deleteCells(tx, "conversation", [session, id], "conversation-asks");
      }
      const files = tx.objectStore("session-files");
      const stored = files.getAll(sessionRange(session));
      stored.onsuccess = () => {
        for (const file of /** @type {FileRecord[]} */ (stored.result)) {
          const users = file.conversations;
          if (!Array.isArray(users) || !users.some((u) => gone.has(u))) continue;
          const left = users.filter((u) => !gone.has(u));
          if (left.length) files.put({ ...file, conversations: left });
          else {
            files.delete([session, file.path]);
            paths.push(file.path);
          }
        }
      };
    };
    return () => undefined;
  }, "could not forget the deleted conversations");
  for (const path of paths) store.announce({ type: "file", session, action: "delete", path });
  return paths;
}
