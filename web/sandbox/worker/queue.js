"use strict";
// The page's calls, served one at a time in the order sent (web/shared/seam.js).
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.
/* exported servePage */

// Requests run one at a time, in the order sent: a run and a file operation never
// interleave. Nothing else runs in the worker: the rest of the stack is installed
// inside the request that needs it (rest.js). A call is `{type: "call", id, method,
// args}` (PROTOCOL.md §3); the handler gets its args and the call's id.
/**
 * @param {MessagePort} port @param {PageLink} link
 * @param {import("../../shared/seam.js").Handlers<import("../../shared/protocol.js").SandboxApi>} methods
 * @param {Record<string, import("../../shared/seam.js").OnMessage>} [on] the page's notes, read at once, never queued
 */
function servePage(port, link, methods, on = {}) {
  return serve(port, methods, {
    queue: true,
    on,
    // Said at once, before the queue: a page whose request no worker says it received
    // knows this worker is busy with work a cell left running (channel.js, BUSY_MS).
    onCall: (id) => {
      if (typeof id === "number" && id !== 0 && !Number.isNaN(id)) link.post({ type: "received", id });
    },
    // Nothing more is answered once the page is replacing this worker (the fatal handler, boot.js).
    begin: (id) => {
      if (link.fatal) return false;
      link.request = id;
      return true;
    },
    describe: describeError,
  });
}

/** @param {any} err */
function describeError(err) {
  if (err && err.name === "ErrnoError") return `no such file or directory (errno ${err.errno})`;
  return String((err && err.message) || err);
}
