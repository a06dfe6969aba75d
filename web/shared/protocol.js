// Every message shape that crosses between the page and its workers, in one place
// (PROTOCOL.md describes exactly these; tests/build/test_protocol_doc.py checks it).
// The workers are classic scripts started from Blobs and cannot import this module:
// they build the same shapes by hand, and the test checks their method tables
// against the lists here. The Python ends are typed in py/reckon/_protocol.py.

/** Requests both workers answer: one shape each way, matched by id.
 * @typedef {{type: "call", id: number, method: string, args: Record<string, unknown>}} Call
 * @typedef {{type: "reply", id: number, status: string, message?: string, [k: string]: any}} Reply
 */

/** A run result (PROTOCOL.md §1).
 * @typedef {{type: string, message: string, traceback: string, line: number | null}} RunError
 * @typedef {{type: string, text: string, html?: string}} RunValue
 * @typedef {{png: string, width: number, height: number, description: string}} Figure
 * @typedef {{path: string, size: number, change: "created" | "modified"}} FileChange
 * @typedef {{name: string, type: string, text: string}} Assigned
 * @typedef {{status: string, stdout: string, stderr: string, truncated: boolean, result: RunValue | null,
 *   figures: Figure[], files: FileChange[], error: RunError | null, duration_ms: number, restarted: boolean,
 *   assigned?: Assigned[]}} RunResult
 */

/** A file entry (PROTOCOL.md §2).
 * @typedef {{path: string, name: string, size: number, is_dir: boolean, mtime: number}} FileEntry
 */

/** What an agent ask resolves to (PROTOCOL.md §4).
 * @typedef {{status: string, answer: string, steps: unknown[], message?: string, model?: string,
 *   usage?: unknown, sessionUsage?: unknown, privacy?: string, verification?: unknown, grounding?: unknown}} AskOutcome
 */

/** The sandbox worker's methods (PROTOCOL.md §3). */
export const SANDBOX_METHODS = Object.freeze(["boot", "run", "writeFile", "mountFile", "readFile", "listFiles", "inspect", "deleteFile", "reset"]);
/** The page answers these itself: `interrupt` (a soft frame-interrupt or a restart) and
 * `scan` (a run in a fresh worker: web/sandbox/fresh.js). */
export const PAGE_METHODS = Object.freeze(["interrupt", "scan"]);
/** The sandbox methods the agent may call, through the page (the agent-allowed column). */
export const AGENT_ALLOWED = Object.freeze(["run", "listFiles", "inspect", "interrupt", "scan"]);
/** Events from the sandbox worker, each about the request being handled (its id). */
export const SANDBOX_EVENTS = Object.freeze(["stream", "started", "need-files", "received"]);
/** Messages between the page and the sandbox frame (over the frame's own port). */
export const FRAME_MESSAGES = Object.freeze(["frame-connect", "frame-ready", "frame-start", "frame-restart", "frame-snapshot", "frame-fresh", "frame-fresh-end", "frame-interrupt", "frame-ping", "frame-pong", "addRuntime", "crash"]);

/** The agent worker's methods (PROTOCOL.md §4). */
export const AGENT_METHODS = Object.freeze(["start", "ask", "stop", "reset", "transcript", "configure", "decide", "exportState", "importState", "exportSession", "importNotebook"]);
/** Events from the agent worker. */
export const AGENT_EVENTS = Object.freeze(["step", "delta", "waiting", "usage", "proposal"]);

/** What the caller keeps of a pending call: how to end it, and whatever reading its
 * events needs (the sandbox keeps a run's streamed output here).
 * @typedef {{resolve: (reply: Reply) => void, method?: string, [k: string]: any}} Pending
 */

/**
 * The caller's end of a worker channel: ids, the pending calls, their replies. A
 * reply is data from another context: only a `reply` for a call still pending counts.
 */
export class Rpc {
  /** @param {(msg: Call, transfer: Transferable[]) => void} post */
  constructor(post) {
    this.post = post;
    this.nextId = 1;
    /** @type {Map<number, Pending>} */
    this.pending = new Map();
  }

  /** An id for a call made later (events about it may name it first). */
  reserve() {
    return this.nextId++;
  }

  /** Wait for the reply to call `id`, sent by another context (the sandbox frame sends
   * the worker its boot call). @param {number} id @param {Record<string, any>} [about]
   * kept with the call (see Pending; a shallow copy: set what it holds before the call)
   * @returns {Promise<Reply>} */
  expect(id, about = {}) {
    return new Promise((resolve) => this.pending.set(id, { ...about, resolve }));
  }

  /** @param {string} method @param {Record<string, unknown>} [args] @param {Transferable[]} [transfer]
   * @param {number} [id] one from reserve() @param {Record<string, any>} [about] kept with the call (see Pending)
   * @returns {Promise<Reply>} */
  call(method, args = {}, transfer = [], id = this.reserve(), about = {}) {
    const reply = this.expect(id, { ...about, method });
    this.post({ type: "call", id, method, args }, transfer);
    return reply;
  }

  /** Take a reply if it answers a pending call; true when it did. @param {unknown} msg */
  take(msg) {
    if (!isMessage(msg) || msg.type !== "reply" || typeof msg.id !== "number") return false;
    return this.settle(msg.id, /** @type {Reply} */ (msg));
  }

  /** End pending call `id` with `reply` (the worker's, or one made here when the worker
   * cannot answer); true when it was pending. @param {number} id @param {{status: string, [k: string]: any}} reply */
  settle(id, reply) {
    const pending = this.pending.get(id);
    if (!pending) return false;
    this.pending.delete(id);
    pending.resolve({ ...reply, type: "reply", id });
    return true;
  }

  /** End every pending call with `reply` (the worker is gone). @param {{status: string, message?: string}} reply */
  failAll(reply) {
    for (const id of [...this.pending.keys()]) this.settle(id, reply);
  }
}

/**
 * The caller's end of a worker that handles its calls one at a time, in the order
 * sent (the sandbox worker): only the call at the head of the line may be answered
 * or be what an event is about; anything else did not come from the worker's own doing.
 */
export class OrderedRpc extends Rpc {
  /** @param {(msg: Call, transfer: Transferable[]) => void} post */
  constructor(post) {
    super(post);
    /** @type {number[]} ids in the order sent to the current worker */
    this.order = [];
  }

  /** The id of the call the worker is handling. */
  get head() {
    return this.order[0];
  }

  /** A new worker, whose first call `id` another context sends: nothing else is in line. @param {number} id */
  begin(id) {
    this.order = [id];
    return this.expect(id);
  }

  /** @param {string} method @param {Record<string, unknown>} [args] @param {Transferable[]} [transfer]
   * @param {number} [id] @param {Record<string, any>} [about] @returns {Promise<Reply>} */
  call(method, args = {}, transfer = [], id = this.reserve(), about = {}) {
    this.order.push(id);
    return super.call(method, args, transfer, id, about);
  }

  /** @param {unknown} msg */
  take(msg) {
    return isMessage(msg) && msg.id === this.head && super.take(msg);
  }

  /** @param {number} id @param {{status: string, [k: string]: any}} reply */
  settle(id, reply) {
    if (!super.settle(id, reply)) return false;
    if (id === this.head) this.order.shift();
    return true;
  }

  /** Forget every call, answering none (the caller answers them first). */
  clear() {
    this.pending.clear();
    this.order = [];
  }
}

/** A reply's payload: the reply without its envelope. @param {Reply} reply @returns {Record<string, any>} */
export function payload(reply) {
  const { type, id, ...rest } = reply;
  void type;
  void id;
  return rest;
}

/** @param {unknown} msg @returns {msg is Record<string, unknown>} */
export function isMessage(msg) {
  return Boolean(msg) && typeof msg === "object";
}
