// The conversations side of persistence (persist.js builds on it): a session keeps
// many conversations (shared/conversations.js stores them); one is open at a time.
// Deleting one marks it deleted: until a page of the session next opens (which forgets
// it for good, with the files only it used), restore() brings it back whole. The files
// only a deleted conversation used leave the sandbox at once and come back with it.

import { PersistedFiles } from "./persist-files.js";
import { adoptFiles, changeHead, getConversation, listConversations, setCurrent } from "./shared/conversations.js";
import { newConversationId } from "./shared/store-schema.js";

/**
 * @typedef {import("./shared/conversations.js").ConversationHead} ConversationHead
 * @typedef {import("./shared/conversations.js").ConversationRecord} ConversationRecord
 * @typedef {import("./shared/store.js").FileRecord} FileRecord
 * @typedef {{id: string, title: string, created: number, updated: number, asks: number, steps: number, current: boolean}} ConversationEntry
 */

const UNTITLED = "Untitled conversation";

/** @param {ConversationHead} head @param {string} current @returns {ConversationEntry} */
const entry = (head, current) => ({
  id: head.id, title: head.title || UNTITLED, created: head.created, updated: head.updated, asks: head.asks, steps: head.steps, current: head.id === current,
});

export class PersistedConversations extends PersistedFiles {
  /** @param {ConstructorParameters<typeof PersistedFiles>[0]} options */
  constructor(options) {
    super(options);
    /** The stored history of the open conversation, until the agent is given it. @type {{messages: object[], transcript: object} | null} */
    this.pendingState = null;
  }

  /** The session's conversations, newest first (deleted ones left out). */
  async conversations() {
    await this.opening;
    const heads = await listConversations(this.store, this.sessionId);
    const shown = heads.filter((h) => !h.deleted).sort((a, b) => b.updated - a.updated);
    return { status: "ok", current: this.conversationId, conversations: shown.map((h) => entry(h, this.conversationId)) };
  }

  /** A live (not deleted) conversation's head, or an error reply naming what to do.
   * @param {unknown} id */
  async find(id) {
    if (typeof id !== "string") throw new TypeError("pass a conversation's id (a string, from conversations())");
    await this.opening;
    const heads = await listConversations(this.store, this.sessionId);
    const head = heads.find((h) => h.id === id);
    if (head && !head.deleted) return { head, heads };
    const what = head ? "was deleted" : "is not kept in this browser";
    return { error: { status: "error", message: `The conversation ${JSON.stringify(id.slice(0, 80))} ${what}; conversations() lists the ones there are.` }, heads };
  }

  /** What is stored, for the pages and tests: file entries (with the conversations that
   * use them), the open conversation's cell log and asks. */
  async saved() {
    await this.opening;
    const [session, files] = await Promise.all([getConversation(this.store, this.sessionId, this.conversationId), this.store.listFiles(this.sessionId)]);
    return {
      status: "ok",
      conversation: this.conversationId,
      files: files.map((f) => ({ path: f.path, size: f.size, mtime: f.mtime, kind: f.kind, conversations: f.conversations || null })).sort((a, b) => a.path.localeCompare(b.path)),
      cells: session.cells,
      asks: session.transcript.asks.map((/** @type {Record<string, any>} */ a) => ({ question: a.question, status: a.status, answer: a.answer })),
      updated: session.updated,
    };
  }

  /** Which conversations use each stored file, read without any conversation's history
   * (the file list asks after every run). @returns {Promise<{conversation: string, files: Array<{path: string, conversations: string[]}>}>} */
  async fileUses() {
    await this.opening;
    const files = await this.store.listFiles(this.sessionId);
    return { conversation: this.conversationId, files: files.map((f) => ({ path: f.path, conversations: f.conversations || [] })) };
  }

  /** A kept conversation's history, as the agent's importState() takes it; rejects with
   * what to do for an unknown or deleted id. @param {unknown} id */
  async stateOf(id) {
    const found = await this.find(id);
    if (found.error) throw new Error(found.error.message);
    const record = await getConversation(this.store, this.sessionId, /** @type {string} */ (id));
    return { messages: record.agentMessages, transcript: record.transcript };
  }

  /** Make `id` the open conversation: its stored history goes to the agent when it is
   * next needed (agentRestored). The caller resets the namespace and replays its cells.
   * @param {string} id @returns {Promise<ConversationRecord>} */
  async switchTo(id) {
    const record = await getConversation(this.store, this.sessionId, id);
    this.conversationId = id;
    this.pendingState = record.agentMessages.length || record.transcript.asks.length ? { messages: record.agentMessages, transcript: record.transcript } : null;
    await setCurrent(this.store, this.sessionId, id);
    return record;
  }

  /** Start a new conversation (the open one stays in the list, unless it is empty:
   * then it is the new one; `fresh`: never). Files stay, and the new conversation uses
   * them too. @param {{fresh?: boolean}} [options] */
  async startNew({ fresh = false } = {}) {
    this.pendingState = null;
    const open = fresh ? null : await getConversation(this.store, this.sessionId, this.conversationId);
    if (!open || (open.stored && (open.transcript.asks.length || open.cells.length))) this.conversationId = newConversationId();
    await setCurrent(this.store, this.sessionId, this.conversationId);
    await adoptFiles(this.store, this.sessionId, this.conversationId);
  }

  /** @param {string} id @param {string} title */
  async rename(id, title) {
    const found = await this.find(id);
    if (found.error) return found.error;
    const clean = title.replace(/\s+/g, " ").trim().slice(0, 200);
    if (!clean) return { status: "error", message: "A conversation's title needs at least one letter; nothing was renamed." };
    const head = await changeHead(this.store, this.sessionId, id, (h) => ({ ...h, title: clean, renamed: true }), "could not rename the conversation");
    return head ? { status: "ok", ...entry(head, this.conversationId) } : { status: "error", message: "The conversation was deleted meanwhile; nothing was renamed." };
  }

  /** Mark a conversation deleted and take the files only deleted conversations use out
   * of the sandbox (the store keeps them until the session's next page opens).
   * @param {string} id */
  async markDeleted(id) {
    const found = await this.find(id);
    if (found.error) return found.error;
    await changeHead(this.store, this.sessionId, id, (h) => ({ ...h, deleted: Date.now() / 1000 }), "could not delete the conversation");
    const files = await this.onlyUsedBy(id, found.heads);
    for (const file of files) await this.sandbox.deleteFile(file.path).catch(() => {});
    return { status: "ok", ...entry(found.head, this.conversationId), files: files.map((f) => f.path) };
  }

  /** Undo a deletion (until the session's next page opens): the conversation is back in
   * the list, whole, with its files. @param {string} id */
  async undelete(id) {
    if (typeof id !== "string") throw new TypeError("restoreConversation(id): pass the id deleteConversation() deleted");
    const heads = await listConversations(this.store, this.sessionId);
    const head = heads.find((h) => h.id === id);
    if (!head) return { status: "error", message: `There is no deleted conversation ${JSON.stringify(id.slice(0, 80))} to bring back (a deleted conversation is gone for good once a page of this session opens again).` };
    if (!head.deleted) return { status: "ok", ...entry(head, this.conversationId) };
    const files = await this.onlyUsedBy(id, heads);
    const back = await changeHead(this.store, this.sessionId, id, (h) => ({ ...h, deleted: null }), "could not bring the conversation back");
    await this.writeBack(files, { uploads: true });
    return { status: "ok", ...entry(back || head, this.conversationId), files: files.map((f) => f.path) };
  }

  /** The paths of `files` that only deleted conversations use.
   * @param {FileRecord[]} files @returns {Promise<string[]>} */
  async deletedOnly(files) {
    const heads = await listConversations(this.store, this.sessionId);
    const gone = new Set(heads.filter((h) => h.deleted).map((h) => h.id));
    const only = (/** @type {FileRecord} */ f) => Array.isArray(f.conversations) && f.conversations.length > 0 && f.conversations.every((u) => gone.has(u));
    return files.filter(only).map((f) => f.path);
  }

  /** The stored files that only `id` and deleted conversations use.
   * @param {string} id @param {ConversationHead[]} heads @returns {Promise<FileRecord[]>} */
  async onlyUsedBy(id, heads) {
    const gone = new Set(heads.filter((h) => h.deleted || h.id === id).map((h) => h.id));
    const files = await this.store.listFiles(this.sessionId);
    return files.filter((f) => Array.isArray(f.conversations) && f.conversations.includes(id) && f.conversations.every((u) => gone.has(u)));
  }
}

/** The status line after an automatic rebuild.
 * @param {string} reason @param {{replayed: number, failed: number}} outcome */
export function recoveredMessage(reason, { replayed, failed }) {
  /** @type {Record<string, string>} */
  const whys = { timeout: "after a timeout", memory: "after it ran out of memory", crash: "after a crash" };
  const why = whys[reason] || `(${reason})`;
  const cells = (/** @type {number} */ n) => `${n} cell${n === 1 ? " was" : "s were"}`;
  if (!replayed && !failed) return `The sandbox was restarted ${why}; your files are kept.`;
  const rebuilt = `${cells(replayed)} replayed to rebuild your variables`;
  return `The sandbox was restarted ${why}; ${rebuilt}${failed ? ` (${failed} failed)` : ""}.`;
}
