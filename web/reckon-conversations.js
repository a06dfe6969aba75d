// The JS API's conversation calls (reckon.js adds them to createReckon()'s object;
// documented in docs/javascript.md and PROTOCOL.md §6): list, open, rename, delete and
// bring back the conversations this browser keeps. Each resolves to data with a
// `status`; a bad id is an error reply that changes nothing.

/**
 * @typedef {import("./sandbox/client.js").Sandbox} Sandbox
 * @typedef {import("./agent/client.js").Agent} Agent
 * @typedef {import("./persist.js").Persistence} Persistence
 * @typedef {{status: string, message?: string, id?: string, title?: string, asks?: number, cells?: number,
 *            replayed?: number, failed?: number, opened?: string, files?: string[], [key: string]: unknown}} Reply
 */

/** Switching while an answer is being written would cut it off from its conversation.
 * @returns {Reply} */
export function busyError() {
  return { status: "error", message: "An answer is still being written in this conversation: wait for it or stop it (stop()), then switch." };
}

const NOT_KEPT = { status: "error", message: "This Reckon keeps no conversations (it was made with persist: false)." };

/** @param {unknown} err */
const failed = (err) => ({ status: "error", message: `The browser's storage failed: ${(err && /** @type {any} */ (err).message) || err}` });

/** @param {unknown} value @param {string} call */
function mustBeId(value, call) {
  if (typeof value !== "string") throw new TypeError(`${call}: pass a conversation's id (a string, from conversations())`);
}

/**
 * @param {{sandbox: Sandbox, agent: Agent, persist: Persistence | null,
 *          emit: (type: string, detail: object) => void, busy: () => boolean}} parts
 */
export function conversationCalls({ sandbox, agent, persist, emit, busy }) {
  /** Storage errors become replies; TypeErrors (a wrong argument) are thrown.
   * @param {() => Promise<Reply>} body @returns {Promise<Reply>} */
  const guarded = async (body) => {
    if (!persist) return NOT_KEPT;
    try {
      return await body();
    } catch (err) {
      if (err instanceof TypeError) throw err;
      return failed(err);
    }
  };

  /** After a change of the list: a `conversations` event (lists refresh on it).
   * @param {Promise<Reply>} call */
  const changed = async (call) => {
    const reply = await call;
    if (reply.status === "ok") emit("conversations", { id: reply.id });
    return reply;
  };

  /** Make `id` the open conversation: a fresh namespace, its history to the agent, its
   * cells replayed to rebuild its variables. @param {Persistence} kept @param {string} id */
  const open = async (kept, id) => {
    await sandbox.ready();
    agent.reset();
    await sandbox.reset();
    const record = await kept.switchTo(id);
    const outcome = await kept.replayCells({ direct: false });
    const shown = { id, title: record.title, asks: record.transcript.asks, cells: record.cells.length, replayed: outcome.replayed, failed: outcome.failed };
    emit("conversation", shown);
    return { status: "ok", id, title: record.title, asks: record.transcript.asks.length, cells: record.cells.length, replayed: outcome.replayed, failed: outcome.failed };
  };

  return {
    /** The conversations kept in this browser, newest first:
     * {status, current, conversations: [{id, title, created, updated, asks, steps, current}]}. */
    conversations: () => guarded(() => /** @type {Persistence} */ (persist).conversations()),

    /** Open a kept conversation, as a reload would, and rebuild its variables by replay.
     * @param {unknown} id */
    openConversation(id) {
      mustBeId(id, "openConversation(id)");
      return guarded(async () => {
        const kept = /** @type {Persistence} */ (persist);
        const found = await kept.find(id);
        if (found.error) return found.error;
        if (busy()) return busyError();
        if (id === kept.conversationId) return { status: "ok", id, title: found.head.title, asks: found.head.asks, cells: 0, replayed: 0, failed: 0, already: true };
        return open(kept, /** @type {string} */ (id));
      });
    },

    /** @param {unknown} id @param {unknown} title */
    renameConversation(id, title) {
      mustBeId(id, "renameConversation(id, title)");
      if (typeof title !== "string") throw new TypeError("renameConversation(id, title): the title is a string");
      return guarded(() => changed(/** @type {Persistence} */ (persist).rename(/** @type {string} */ (id), title)));
    },

    /** Delete a conversation; restoreConversation(id) brings it back whole until a page
     * of this session next opens. Deleting the open one starts a new one.
     * @param {unknown} id */
    deleteConversation(id) {
      mustBeId(id, "deleteConversation(id)");
      return guarded(async () => {
        const kept = /** @type {Persistence} */ (persist);
        const current = id === kept.conversationId;
        if (current && busy()) return busyError();
        const reply = await changed(kept.markDeleted(/** @type {string} */ (id)));
        if (reply.status !== "ok" || !current) return reply;
        agent.reset();
        await kept.startNew({ fresh: true });
        emit("conversation", { id: kept.conversationId, title: "", asks: [], cells: 0, replayed: 0, failed: 0 });
        return { ...reply, current: false, opened: kept.conversationId };
      });
    },

    /** Undo deleteConversation(id): {status, id, title, ..., files} (the files it brought back).
     * @param {unknown} id */
    restoreConversation(id) {
      mustBeId(id, "restoreConversation(id)");
      return guarded(() => changed(/** @type {Persistence} */ (persist).undelete(/** @type {string} */ (id))));
    },
  };
}
