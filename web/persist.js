// Persistence: ties the store (shared/store.js) to one sandbox and one agent, so the
// conversations, the uploads and the files the analysis wrote survive reloads and
// browser restarts, and a sandbox that had to be replaced is rebuilt. Page wiring
// (reckon.js makes it): it listens to the sandbox's events (sandbox/events.js:
// `started`, `ran`, `replaced`) and the agent's, and the sandbox knows nothing of it.
//
// - uploads and files written through the API are stored as they arrive;
// - after each run, the files it wrote under /output (as the worker saw them, within
//   keep.js's caps) are read back and stored, the outputs it deleted are deleted from
//   the store, and a successful cell's code is appended to the open conversation's log;
// - after each ask, the ask and the agent's message history are stored;
// - on start, deleted conversations are forgotten, stored files go back into the
//   sandbox and the agent gets the open conversation's history;
// - after a timeout kill, the memory ceiling or a crash, stored outputs are written
//   back and the cell log is replayed (the killed cell never ran ok, so it is not in it).
// Storage failures never fail the operation: the file or answer is still there for
// this session, and a `storage-error` event says what was not saved and why.

import { DEFAULT_SESSION, Store } from "./shared/store.js";
import { storablePath } from "./shared/keep.js";
import { PersistedConversations, recoveredMessage } from "./persist-conversations.js";
import { appendCell, currentConversation, getConversation, setCurrent, purgeDeleted, updateConversation } from "./shared/conversations.js";

export { storablePath, recoveredMessage };

/** Replacements after which the variables are rebuilt by replaying the cell log. */
const REPLAY_AFTER = new Set(["timeout", "memory", "crash"]);
/**
 * @typedef {import("./sandbox/client.js").Sandbox} Sandbox
 * @typedef {import("./agent/client.js").Agent} Agent
 * @typedef {import("./shared/conversations.js").ConversationRecord} ConversationRecord
 * @typedef {import("./shared/conversations.js").ConversationData} ConversationData
 * @typedef {import("./shared/protocol.js").RunResult} RunResult
 * @typedef {import("./sandbox/events.js").Waitable} Waitable
 * @typedef {{asks: object[], cells: number, files: Array<{path: string, size: number, kind: string}>, interrupted: {question: string, model: string | null, at: number | null} | null, conversation: {id: string, title: string}}} RestoredInfo
 * @typedef {{status: string, replayed: number, failed: number, message?: string}} Replayed
 */

/** An event's detail, as the sandbox sends it. @template T @param {Event} ev @returns {T} */
const detail = (ev) => /** @type {CustomEvent} */ (ev).detail;

export class Persistence extends PersistedConversations {
  /**
   * @param {{sandbox: Sandbox, agent: Agent, emit: (type: string, detail: object) => void,
   *          session?: string, withAgent?: boolean, store?: Store}} options
   */
  constructor({ sandbox, agent, emit, session = DEFAULT_SESSION, withAgent = true, store = new Store() }) {
    super({ sandbox, store, emit, session });
    this.agent = agent;
    this.withAgent = withAgent;
    /** @type {ConversationRecord | null} what was stored when the page opened */
    this.restored = null;
    /** @type {Promise<void>} */
    this.restoring = Promise.resolve();
    /** Which conversation is open, once the store has said (every call reading or
     * writing the open conversation waits for it). */
    this.opening = this.open();
    /** What restore() found: {asks, cells (count), files, interrupted ({question, model, at} or null)}.
     * @type {RestoredInfo} */
    this.restoredInfo = { asks: [], cells: 0, files: [], interrupted: null, conversation: { id: this.conversationId, title: "" } };
    // A replacement's messages say the variables come back (the cell log is replayed).
    sandbox.rebuildsState = true;
    // Each waits: ready() for the files, the waiting requests for the rebuild, a run's
    // result for its outputs to be stored (a note may join its stderr).
    sandbox.addEventListener("started", (ev) => detail(ev).waitUntil(this.restore()));
    sandbox.addEventListener("replaced", (ev) => {
      /** @type {Waitable & {reason: string, nested: boolean}} */
      const { reason, nested, waitUntil } = detail(ev);
      waitUntil(this.rebuild(reason, nested));
    });
    sandbox.addEventListener("ran", (ev) => {
      /** @type {Waitable & {code: string, result: RunResult, deleted: string[]}} */
      const { code, result, deleted, waitUntil } = detail(ev);
      waitUntil(this.recordRun(code, result, { deleted }));
    });
    store.onChange((message) => this.onOtherTab(message));
    // The ask under way is kept until it ends, so a reload in the middle can say
    // which question it cut off (restoredInfo.interrupted) and offer it again.
    if (withAgent) {
      agent.addEventListener("ask", (ev) => {
        /** @type {{question: unknown, model?: string}} */
        const ask = detail(ev);
        this.setPending({ question: String(ask.question), model: ask.model || null, at: Date.now() / 1000 });
      });
      for (const type of ["answer", "error"]) agent.addEventListener(type, () => this.clearPending());
    }
  }

  /** Resolves once the agent has the stored history (ask() and the exports wait for it);
   * the first wait starts the agent for it. */
  get agentRestored() {
    const state = this.pendingState;
    if (state) {
      this.pendingState = null;
      this.restoring = this.agent
        .ready()
        .then(async () => {
          await this.agent.importState(state);
        })
        .catch((err) => this.emit("storage-error", { message: `The saved conversation could not be given back to the agent: ${(err && err.message) || err}`, quota: false }));
    }
    return this.restoring;
  }

  /** @param {{question: string, model: string | null, at: number} | null} pending */
  async setPending(pending) {
    await this.updateSession((s) => ({ ...s, pending }), "the question under way was not noted");
  }

  /** Forget the interrupted question (it was asked again, answered or dismissed). */
  async clearPending() {
    this.restoredInfo = { ...this.restoredInfo, interrupted: null };
    await this.updateSession((s) => (s.pending ? { ...s, pending: null } : s), "the question under way was not noted");
  }

  /** Forget the conversations deleted last time (and the files only they used), and
   * find the one that was open. */
  async open() {
    try {
      await purgeDeleted(this.store, this.sessionId);
      this.conversationId = await currentConversation(this.store, this.sessionId);
    } catch (err) {
      this.report(err, "Your saved conversations could not be read");
    }
  }

  /** On start (before ready() resolves): put the stored files back into the sandbox. */
  async restore() {
    /** @type {import("./shared/store.js").FileRecord[]} */
    let files = [];
    await this.opening;
    try {
      [this.restored, files] = await Promise.all([getConversation(this.store, this.sessionId, this.conversationId), this.store.listFiles(this.sessionId)]);
    } catch (err) {
      this.report(err, "Your saved files and conversation could not be read");
      return;
    }
    await this.writeBack(files, { uploads: true });
    const restored = this.restored;
    if (this.withAgent && (restored.agentMessages.length || restored.transcript.asks.length)) {
      // Given to the agent when it is first needed (agentRestored): its interpreter
      // does not start for a page that only shows the conversation.
      this.pendingState = { messages: restored.agentMessages, transcript: restored.transcript };
    }
    const pending = this.withAgent ? restored.pending : null;
    this.restoredInfo = {
      asks: restored.transcript.asks,
      cells: restored.cells.length,
      files: files.map((f) => ({ path: f.path, size: f.size, kind: f.kind })),
      interrupted: pending && typeof pending.question === "string" ? { question: pending.question, model: pending.model || null, at: pending.at || null } : null,
      conversation: { id: this.conversationId, title: restored.title },
    };
    this.emit("restored", this.restoredInfo);
  }

  /** After the worker was replaced (uploads are already re-mounted by the sandbox).
   * @param {string} reason @param {boolean} nested */
  async rebuild(reason, nested) {
    /** @type {import("./shared/store.js").FileRecord[]} */
    let files = [];
    try {
      files = await this.store.listFiles(this.sessionId);
      const gone = new Set(await this.deletedOnly(files));
      files = files.filter((f) => !gone.has(f.path)); // out of the sandbox until an undo
    } catch (err) {
      this.report(err, "Your saved files could not be read");
    }
    await this.writeBack(files, { uploads: false });
    if (reason === "restart") {
      // A fresh interpreter on request: the old cells no longer describe its state.
      await this.forgetCells();
      return;
    }
    if (!REPLAY_AFTER.has(reason) || nested) return;
    const outcome = await this.replayCells({ direct: true });
    this.emit("recovered", { reason, replayed: outcome.replayed, failed: outcome.failed, message: recoveredMessage(reason, outcome) });
  }

  /** Re-run the session's successful cells, in order (replay() in the JS API). */
  async replay() {
    await this.sandbox.settled();
    return this.replayCells({ direct: false });
  }

  /** @param {{direct: boolean}} options @returns {Promise<Replayed>} */
  async replayCells({ direct }) {
    /** @type {string[]} */
    let cells = [];
    await this.opening;
    try {
      cells = (await getConversation(this.store, this.sessionId, this.conversationId)).cells;
    } catch (err) {
      this.report(err, "The saved cells could not be read");
      return { status: "error", replayed: 0, failed: 0, message: String((err && /** @type {any} */ (err).message) || err) };
    }
    let replayed = 0;
    let failed = 0;
    for (const [index, code] of cells.entries()) {
      const result = await this.sandbox.run(code, { direct, record: false });
      if (result.restarted) {
        // This cell killed the sandbox again: stop here rather than loop.
        failed += cells.length - index;
        break;
      }
      if (result.status === "ok") replayed++;
      else failed++;
    }
    return { status: failed ? "error" : "ok", replayed, failed };
  }

  /** After a run: store the files it wrote under /output (within keep.js's caps: the
   * result says what was not kept), forget the ones it deleted, log the cell if it
   * succeeded. @param {string} code @param {RunResult} result
   * @param {{deleted?: string[]}} [changes] */
  async recordRun(code, result, { deleted = [] } = {}) {
    const files = (result.files || []).filter((f) => f && storablePath(f.path, "output"));
    const gone = deleted.filter((path) => storablePath(path, "output"));
    if (files.length || gone.length) await this.keepOutputs(result, files, gone);
    if (result.status === "ok" && code.trim()) {
      await this.opening;
      const what = "the cell was not logged, so it cannot be replayed after a restart";
      try {
        const listed = await appendCell(this.store, this.sessionId, this.conversationId, code, what);
        if (listed) this.emit("conversations", { id: this.conversationId });
      } catch (err) {
        this.report(err, what);
      }
    }
  }

  /** After an ask: add it to the stored asks, and keep the agent's history.
   * @param {string} question the ask just answered (an ask that failed before the
   * agent recorded it leaves nothing new to store) @param {string} [conversation] the
   * conversation that was open when it was asked @param {number} [count] how many asks
   * it ends (an imported conversation adds all of its asks at once) */
  async saveAsk(question, conversation = this.conversationId, count = 1) {
    if (!this.withAgent) return;
    let state;
    try {
      state = await this.agent.exportState();
    } catch (err) {
      this.emit("storage-error", { message: `The conversation could not be read from the agent: ${(err && /** @type {any} */ (err).message) || err}`, quota: false });
      return;
    }
    const added = state.transcript.asks.slice(-Math.max(1, count));
    const last = added[added.length - 1];
    if (!last || last.question !== question) return;
    // The asks are added as records of their own; the agent's messages (text) replace
    // the stored ones.
    const kept = await this.updateSession(
      (s) => ({ ...s, agentMessages: state.messages }),
      "this answer was not saved for next time (it is still shown here)",
      { conversation, asks: added },
    );
    if (kept) this.emit("conversations", { id: conversation });
  }

  /** A new, empty conversation (the open one stays in the list); files stay. */
  async newConversation() {
    try {
      await this.startNew();
    } catch (err) {
      this.report(err, "the new conversation was not noted (the last one opens after a reload)");
    }
  }

  async forgetCells() {
    await this.updateSession((s) => s, undefined, { clearCells: true });
  }

  /** Empty this session's part of the store (its files and record; other sessions keep
   * theirs) and the sandbox's list of files to re-mount. */
  async clearAll() {
    const paths = await this.store.clear(this.sessionId);
    this.pendingState = null;
    this.restored = null;
    await setCurrent(this.store, this.sessionId, this.conversationId).catch(() => {}); // a reload opens this one
    this.sandbox.files.clear();
    return paths;
  }

  /** Change the open conversation's stored data (or `conversation`'s).
   * @param {(record: ConversationData) => ConversationData} change @param {string} [what]
   * @param {{clearCells?: boolean, conversation?: string, asks?: Array<{question?: unknown}>}} [options] */
  async updateSession(change, what = "the conversation was not saved", { conversation, ...options } = {}) {
    await this.opening;
    try {
      await updateConversation(this.store, this.sessionId, conversation || this.conversationId, change, what, options);
      return true;
    } catch (err) {
      this.report(err, what);
      return false;
    }
  }
}
