"use strict";
// The worker's way to the page, and the cell that runs now: two small holders the
// worker (handlers.js, SandboxWorker) owns and hands to the parts that need them.
// A part of the sandbox worker: the page joins the parts into one closure, so
// nothing here is reachable from a cell (main.js).
/* exported PageLink, CellRun */

// Everything goes to the page over a MessagePort that the page created for this
// worker and that arrives with the boot message (queue.js serves the calls on it). It
// lives only in this closure: a cell can call self.postMessage, replace it or dispatch
// fake "message" events, but it cannot write to this port, so it cannot answer for
// any request (SECURITY.md, F1).
class PageLink {
  constructor() {
    /** @type {import("../../shared/seam.js").Endpoint | null} the page's port, served once boot arrives */
    this.page = null;
    /** @type {number | null} the id of the request being handled (one at a time) */
    this.request = null;
    /** The interpreter cannot go on: the page is replacing this worker. */
    this.fatal = false;
  }

  /** @param {Record<string, unknown>} msg @param {Transferable[]} [transfer] */
  post(msg, transfer) {
    if (this.page) this.page.post(msg, transfer || []);
  }

  /** Ask the page for the files it holds back (all of them, or `files`). @param {string[]} [files] */
  needFiles(files) {
    if (files) this.post({ type: "need-files", id: this.request, files });
    else this.post({ type: "need-files", id: this.request });
  }
}

/** The cell that runs now: its id, when it is interrupted, and why it was. */
class CellRun {
  constructor() {
    this.id = 0; // the id of the run whose output streams now
    this.deadline = Infinity; // when the running cell is interrupted (performance.now())
    /** @type {string | null} why the running cell was interrupted */
    this.reason = null;
    /** @type {(() => void) | null} ends the awaiting run now (SandboxWorker.memoryInterrupted) */
    this.stop = null;
    /** @type {Int32Array | null} over a SharedArrayBuffer, when the page could make one */
    this.shared = null;
  }

  /** Why the cell is to stop now, if it is: the page's interrupt, or its deadline. */
  due() {
    if (this.shared && Atomics.load(this.shared, 0) === 2) return "interrupted";
    if (performance.now() > this.deadline) return "timeout";
    return null;
  }
}
