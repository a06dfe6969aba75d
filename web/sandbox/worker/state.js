"use strict";
// The sandbox worker's state, all of it, declared before any part uses it (see
// main.js), and post(), its one way to the page.
// A part of the sandbox worker: the page joins the parts into one closure, so
// nothing here is reachable from a cell.

/** @type {any} the interpreter, once booted */
let pyodide = null;
/** @type {any} the Python module reckon.kernel._host */
let host = null;
/** @type {Record<string, Blob>} runtime files by name, handed over by the page */
let runtime = {};
let indexURL = "";
let currentRun = 0; // the id of the run whose output streams now
let deadline = Infinity; // when the running cell is interrupted (performance.now())
/** @type {string | null} why the running cell was interrupted */
let interruptReason = null;
/** @type {(() => void) | null} ends the awaiting run now (memoryInterrupted, handlers.js) */
let stopRun = null;
/** @type {Int32Array | null} over a SharedArrayBuffer, when the page could make one */
let shared = null;
let memoryLimit = 2048 * 1024 * 1024;
/** @type {string[]} the rest of the stack not installed yet (installed when a request needs it) */
let lazyPackages = [];
/** @type {any} web/sandbox/install.js, when the page handed it over */
let installer = null;
/** @type {Set<string>} named by the lock, still on their way from the page */
let lazyFiles = new Set();
/** @type {Map<string, Array<(value?: unknown) => void>>} file name -> who waits for it */
const waiting = new Map();
/** @type {Map<string, string>} file name -> why the page could not fetch it */
const refused = new Map();
/** @type {Array<(value?: unknown) => void>} restFiles() calls waiting for the rest of the files */
const restWaiters = [];
/** @type {Map<string, string>} top-level module name -> its package, for the rest of the stack (from the lock) */
let restPackages = new Map();
/** @type {any} pyodide-lock.json, parsed */
let lock = null;
/** @type {any} the Python function that unpacks the rest's bytecode (rest.js), once made */
let restBytecode = null;
let mounts = 0; // upload mount points made so far
/** @type {Map<string, Blob>} each upload's File by its path in the mount (sql.js reads it in place) */
const uploads = new Map();
/** @type {string[]} DuckDB's files (sql.js), handed over by the page only when asked for */
let sqlFiles = [];
let sqlMemoryLimitMB = 0; // DuckDB's memory_limit; 0: half the sandbox's ceiling
/** @type {any} DuckDB, once a cell first ran SQL: {db, conn, version, limitMB} */
let duck = null;
/** @type {string | null} why DuckDB could not be loaded */
let duckFailure = null;
let fatal = false; // the interpreter cannot go on: the page is replacing this worker
/** @type {number | null} the id of the request being handled (one at a time) */
let currentRequest = null;

// Everything goes to the page over a MessagePort that the page created for this
// worker and that arrives with the boot message (queue.js serves the calls on it). It
// lives only in this closure: a cell can call self.postMessage, replace it or dispatch
// fake "message" events, but it cannot write to this port, so it cannot answer for
// any request (SECURITY.md, F1).
/** @type {import("../../shared/seam.js").Endpoint | null} */
let page = null;
/** @param {Record<string, unknown>} msg @param {Transferable[]} [transfer] */
function post(msg, transfer) {
  if (page) page.post(msg, transfer || []);
}
