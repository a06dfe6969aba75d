"use strict";
// The sandbox worker: Pyodide + the scientific stack + reckon.kernel. It runs the
// model's code and holds nothing worth stealing. Message shapes: PROTOCOL.md §3.
//
// It boots from Blobs handed over by the page (through the frame), so it never
// needs the network: Pyodide's own fetches of its files are answered from memory,
// and every other request is refused by the frame's Content-Security-Policy.
//
// It is one object, SandboxWorker (handlers.js), made here once: its methods are the
// protocol, its fields all its state. Its code is in parts, each one job, that the page
// joins into one Blob, in this order, inside one closure (sandbox/parts.js,
// WORKER_PARTS): top-level names of a classic worker script would be reachable from a
// cell through js.eval("..."); closure variables are not. Each part names what it uses
// of the others (`/* global */`) and what it gives them (`/* exported */`), which lint
// checks; no part keeps state of its own.
//   state.js     PageLink (the port to the page) and CellRun (the cell running now)
//   memory.js    WorkerMemory: what a cell holds, counted against the memory ceiling
//   memory-apis.js, wasm-exports.js  the browser APIs that make memory, counted
//   fetch.js     RuntimeFiles: Pyodide's fetches answered from the handed-over files
//   boot.js      boot (snapshot or cold), interrupts, fatal errors
//   rest.js      RestOfStack: the rest of the stack, installed when a request needs it
//   sql.js       SqlEngine: DuckDB for run_sql, loaded on the first SQL
//   outputs.js   the files a run wrote under /output
//   tools.js     ToolBridge: a cell's calls of the page's tools (host tools)
//   handlers.js  SandboxWorker: what each request does
//   queue.js     the page's calls, served one at a time, in order
//   main.js      this entry: the worker, its methods, the boot call with the page's port
// Before them all runs web/shared/seam.js (SEAM_SOURCE): serve() and connect().
/* global SandboxWorker, servePage */

const worker = new SandboxWorker();

/** The sandbox worker's methods (PROTOCOL.md §3; its interface: SandboxApi): the
 * worker's own, and nothing else of it.
 * @type {import("../../shared/seam.js").Handlers<import("../../shared/protocol.js").SandboxApi>} */
const handlers = {
  boot: (args) => worker.boot(args),
  run: (args, { id }) => worker.run({ ...args, id }),
  readFile: (args) => worker.readFile(args),
  writeFile: (args) => worker.writeFile(args),
  mountFile: (args) => worker.mountFile(args),
  deleteFile: (args) => worker.deleteFile(args),
  reset: () => worker.reset(),
  listFiles: (args) => worker.listFiles(args),
  inspect: (args) => worker.inspect(args),
};

// From the frame: the boot call with the page's port, then runtime files. Only
// real messages count (a cell's dispatchEvent makes untrusted ones), and only one boot:
// it is answered over the page's port, like every call after it.
/** @type {import("../../shared/seam.js").Handlers<{boot: (args: {runtime: Record<string, Blob>, config: Record<string, any>}) => null}>} */
const fromFrame = {
  boot: (args, { id, ports }) => {
    const { link } = worker;
    if (!link.page && ports[0]) (link.page = servePage(ports[0], link, handlers, { "tool-result": (msg) => worker.tools.settle(msg) })).answer({ type: "call", id, method: "boot", args });
    return null;
  },
};
serve(/** @type {any} */ (self), fromFrame, { accept: (ev) => ev.isTrusted, on: { addRuntime: (msg) => worker.files.add(msg) } }); // never behind a running cell
