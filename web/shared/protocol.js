// Every message shape that crosses between the page and its workers, in one place
// (PROTOCOL.md describes exactly these; tests/build/test_protocol_doc.py checks its
// tables against the interfaces below, field by field). Every port speaks through
// web/shared/seam.js: `serve(port, methods)` at one end, `connect(port)` at the other,
// each typed by one interface here (the classic scripts name them in JSDoc too).
// The Python ends are typed in py/reckon/_protocol.py.

/** Calls, one shape each way, matched by id (web/shared/seam.js).
 * @typedef {{type: "call", id: number, method: string, args: Record<string, unknown>}} Call
 * @typedef {{type: "reply", id: number, status: string, message?: string, [k: string]: any}} Reply
 */

/** A run result (PROTOCOL.md §1).
 * @typedef {{type: string, message: string, traceback: string, line: number | null}} RunError
 * @typedef {{type: string, text: string, html?: string}} RunValue
 * @typedef {{png: string, width: number, height: number, description: string}} Figure
 * @typedef {{path: string, size: number, change: "created" | "modified",
 *   formulas?: {count: number, first: string, checked: boolean}}} FileChange
 * @typedef {{name: string, type: string, text: string}} Assigned
 * @typedef {{call: number, runId: number, name: string, args: unknown, status: string, size: number, ms: number, message?: string, request?: string,
 *   result?: string, resultOmitted?: "too large" | "privacy"}} ToolCallRecord
 * @typedef {{status: string, stdout: string, stderr: string, truncated: boolean, result: RunValue | null,
 *   figures: Figure[], files: FileChange[], error: RunError | null, duration_ms: number, restarted: boolean,
 *   assigned?: Assigned[], notes?: string[], tools?: ToolCallRecord[]}} RunResult
 */

/** A file entry (PROTOCOL.md §2).
 * @typedef {{path: string, name: string, size: number, is_dir: boolean, mtime: number}} FileEntry
 */

/** What an agent ask resolves to (PROTOCOL.md §4).
 * @typedef {{status: string, answer: string, steps: unknown[], message?: string, model?: string,
 *   usage?: unknown, sessionUsage?: unknown, privacy?: string, verification?: unknown, grounding?: unknown}} AskOutcome
 */

/** What `inspect` gives (PROTOCOL.md §2): a file entry's details, or an error as data.
 * @typedef {{status: string, message?: string, [k: string]: any}} InspectResult
 */
/** A reply that may ask the page to replace the worker (PROTOCOL.md §3).
 * @typedef {{restartNeeded?: boolean | "crash", outputsDeleted?: string[]}} Restart
 */

// The interfaces: one per port, each method `(args) => reply` (the reply's fields
// besides `type` and `id`). PROTOCOL.md's tables list exactly these names and fields.

/** The sandbox worker's methods (PROTOCOL.md §3), answered by sandbox/worker/handlers.js.
 * @typedef {{
 *   boot: (args: {runtime: Record<string, Blob>, config: Record<string, any>}) => {status: string, versions?: Record<string, string>, ms?: number, marks?: Record<string, number>, snapshot?: any, message?: string},
 *   run: (args: {code: string, timeoutMs: number}) => RunResult & Restart,
 *   writeFile: (args: {path: string, data: Uint8Array}) => {status: string, path: string, size?: number, message?: string},
 *   mountFile: (args: {path: string, file: Blob}) => {status: string, path: string, size: number},
 *   readFile: (args: {path: string, output?: boolean}) => {status: string, path?: string, size?: number, data?: Uint8Array, message?: string},
 *   listFiles: (args: {dir: string}) => {status: string, files: FileEntry[], message?: string},
 *   inspect: (args: {path: string}) => InspectResult,
 *   deleteFile: (args: {path: string}) => {status: string, path: string},
 *   reset: (args: {}) => {status: string},
 * }} SandboxApi
 */
/** A host tool as the agent and the person are told of it (web/tools.js).
 * @typedef {{name: string, description: string, parameters: Record<string, unknown>, returns?: Record<string, unknown>, policy: string, relay?: boolean}} ToolInfo
 */
/** The sandbox methods the page answers itself (PROTOCOL.md §3).
 * @typedef {{
 *   interrupt: (args: {}) => {status: string, running: boolean, soft?: boolean},
 *   scan: (args: {code: string, timeoutMs: number}) => RunResult,
 *   tools: (args: {}) => {status: string, tools: ToolInfo[]},
 * }} PageApi
 */
/** What the agent worker may call on the page (the agent-allowed column, AGENT_ALLOWED).
 * @typedef {Pick<SandboxApi, "run" | "listFiles" | "inspect"> & PageApi} AgentSandboxApi
 */

/** The sandbox frame's one call (PROTOCOL.md §3); the rest of what crosses its port are
 * notes, one way (FRAME_MESSAGES).
 * @typedef {{
 *   "frame-ping": (args: {}) => {status: string},
 * }} FrameApi
 */

/** The sandbox worker's methods (PROTOCOL.md §3). */
export const SANDBOX_METHODS = Object.freeze(["boot", "run", "writeFile", "mountFile", "readFile", "listFiles", "inspect", "deleteFile", "reset"]);
/** The page answers these itself: `interrupt` (a soft frame-interrupt or a restart) and
 * `scan` (a run in a fresh worker: web/sandbox/fresh.js). */
export const PAGE_METHODS = Object.freeze(["interrupt", "scan", "tools"]);
/** The sandbox methods the agent may call, through the page (the agent-allowed column). */
export const AGENT_ALLOWED = Object.freeze(["run", "listFiles", "inspect", "interrupt", "scan", "tools"]);
/** Events from the sandbox worker, each about the request being handled (its id). */
export const SANDBOX_EVENTS = Object.freeze(["stream", "started", "need-files", "received", "tool-call"]);
/** Messages between the page and the sandbox frame (over the frame's own port). */
export const FRAME_MESSAGES = Object.freeze(["frame-connect", "frame-ready", "frame-start", "frame-restart", "frame-snapshot", "frame-fresh", "frame-fresh-end", "frame-interrupt", "frame-tool-result", "frame-ping", "addRuntime", "crash"]);

/** The agent worker's methods (PROTOCOL.md §4), answered by agent/worker.js.
 * @typedef {{
 *   start: (args: {config: Record<string, unknown>}) => {status: string, ms?: number, message?: string},
 *   ask: (args: {question: string, model: string, options: {tokenBudget?: number, verify?: boolean, modelOptions?: Record<string, unknown>}}) => AskReply,
 *   stop: (args: {}) => {status: string},
 *   reset: (args: {}) => {status: string},
 *   transcript: (args: {}) => {status: string, transcript: any},
 *   configure: (args: {settings: unknown}) => {status: string, settings?: Record<string, unknown>, message?: string},
 *   decide: (args: {proposal: string, decision: unknown}) => {status: string, message?: string},
 *   exportState: (args: {}) => {status: string, state: any, message?: string},
 *   importState: (args: {state: unknown}) => {status: string, asks?: number, message?: string},
 *   exportSession: (args: {format: string}) => {status: string, format: string, text: string, message?: string},
 *   importNotebook: (args: {text: string, name: string}) => {status: string, question?: string, cells: number, ok: number, failed: number, asks?: number, conversation?: boolean, message?: string},
 *   relayTools: (args: {relay: string, token: string | null}) => {status: string, tools: Record<string, unknown>[], message?: string},
 *   relayTool: (args: {relay: string, token: string | null, name: string, args: string}) => {status: string, text?: string, message?: string},
 *   cancelRelayTool: (args: {call: number}) => {status: string, cancelled: boolean},
 * }} AgentApi
 */
/** The reply to `ask` (PROTOCOL.md §4, the `done` shape).
 * @typedef {{status: string, answer: string, steps: unknown[], message?: string, usage?: unknown, sessionUsage?: unknown,
 *   privacy?: string, verification?: unknown, grounding?: unknown}} AskReply
 */

/** The agent worker's methods (PROTOCOL.md §4). */
export const AGENT_METHODS = Object.freeze(["start", "ask", "stop", "reset", "transcript", "configure", "decide", "exportState", "importState", "exportSession", "importNotebook", "relayTools", "relayTool", "cancelRelayTool"]);
/** Events from the agent worker. */
export const AGENT_EVENTS = Object.freeze(["step", "delta", "waiting", "usage", "proposal"]);

/** A reply's payload: the reply without its envelope.
 * @template {{type?: string, id?: number}} R @param {R} reply @returns {Omit<R, "type" | "id"> & Record<string, any>} */
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
