"use strict";
// The sandbox worker: Pyodide + the scientific stack + reckon.kernel. It runs the
// model's code and holds nothing worth stealing. Message shapes: PROTOCOL.md §3.
//
// It boots from Blobs handed over by the page (through the frame), so it never
// needs the network: Pyodide's own fetches of its files are answered from memory,
// and every other request is refused by the frame's Content-Security-Policy.
//
// It is made of parts, each one job, that the page joins into one Blob, in this
// order, inside one closure (sandbox/parts.js, WORKER_PARTS): top-level
// let/const/function of a classic worker script would be reachable from a cell
// through js.eval("post(...)"); closure variables are not.
//   state.js     all the state, and post() to the page
//   memory.js    JS buffers a cell makes, counted against the memory ceiling
//   fetch.js     Pyodide's fetches answered from the handed-over files
//   boot.js      boot (snapshot or cold), interrupts, fatal errors
//   rest.js      the rest of the stack, installed when a request needs it
//   handlers.js  what each request does
//   queue.js     the page's calls, served one at a time, in order
//   main.js      this entry: the boot call with the page's port
// Before them all runs web/shared/seam.js (SEAM_SOURCE): serve() and connect().

// From the frame: the boot call with the page's port, then runtime files. Only
// real messages count (a cell's dispatchEvent makes untrusted ones), and only one boot:
// it is answered over the page's port, like every call after it.
/** @type {import("../../shared/seam.js").Handlers<{boot: (args: {runtime: Record<string, Blob>, config: Record<string, any>}) => null}>} */
const fromFrame = {
  boot: (args, { id, ports }) => {
    if (!page && ports[0]) (page = servePage(ports[0])).answer({ type: "call", id, method: "boot", args });
    return null;
  },
};
serve(/** @type {any} */ (self), fromFrame, { accept: (ev) => ev.isTrusted, on: { addRuntime: (msg) => addRuntime(msg) } }); // never behind a running cell
