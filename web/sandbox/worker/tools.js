"use strict";
// Host tools, the worker's side: a cell's `await tools.get_orders(month=3)` becomes a
// `tool-call` event to the page, `{id: <run id>, call, name, args: <JSON text>}`, and
// the page's `tool-result` note `{call, status, text | message}` resolves it
// (PROTOCOL.md §3, *Host tools*). The page holds the tools, their schemas, policies and
// limits; this side only keeps a cell from flooding the page: one run's calls end with
// the page's first refusal for a cap, a few are in flight at once, and a call's
// arguments are bounded. A part of the sandbox worker (see main.js): the page joins the
// parts into one closure, so nothing here is reachable from a cell.
//
// A call made without await (`rows = tools.get_orders(month=3)`) blocks this thread
// until its answer comes (callNow): the same event, marked `sync: true`, and the same
// page-side handling, but the page answers it to the sandbox frame, which writes it
// into memory it shares with this worker (frame.js, answerTool; the layout is there):
// a blocked worker reads no message. Only a cross-origin-isolated frame can share
// memory; elsewhere the kernel gets no blocking transport and says to await.
/* exported ToolBridge */

const TOOL_ARGS_LIMIT = 1_000_000; // characters of JSON arguments a call may send
const TOOL_IN_FLIGHT = 8; // calls of one run waiting for the page at once
const TOOL_POLL_MS = 100; // how often a waiting call looks at the cell's deadline
const TOOL_WORDS = 8; // the reply buffer's header, in 32-bit words (frame.js, answerTool)

class ToolBridge {
  /** @param {{link: PageLink, cell: CellRun, memory: {cellRuns: boolean}}} worker */
  constructor(worker) {
    this.worker = worker;
    this.next = 0;
    /** @type {Map<number, (reply: string) => void>} calls waiting for the page */
    this.pending = new Map();
    /** @type {number | null} the run whose calls are counted */
    this.run = null;
    /** @type {string | null} why this run may call no more tools (the page's cap) */
    this.refused = null;
    /** @type {SharedArrayBuffer | null} where the frame writes the replies to calls made
     * without await (boot's config.toolReplies; null when not cross-origin isolated) */
    this.replies = null;
  }

  /** Python's ways out (reckon.kernel._tools.set_transport): the blocking one only with
   * a reply buffer. @param {any} pyodide */
  install(pyodide) {
    const tools = pyodide.pyimport("reckon.kernel._tools");
    const blocking = this.replies ? (/** @type {unknown} */ name, /** @type {unknown} */ args) => this.callNow(String(name), String(args)) : null;
    tools.set_transport((/** @type {unknown} */ name, /** @type {unknown} */ args) => this.call(String(name), String(args)), blocking);
    tools.destroy();
  }

  /** Why this call is refused here, before the page sees it (as the reply's text), or
   * null. @param {string} name @param {string} args */
  refusal(name, args) {
    const { cell, memory } = this.worker;
    if (!memory.cellRuns) return ToolBridge.error(`tools.${name}: a tool can be called only while its cell runs (not from a task the cell left running)`);
    if (this.run !== cell.id) {
      this.run = cell.id;
      this.refused = null;
    }
    if (this.refused) return ToolBridge.error(this.refused);
    if (name.length > 64) return ToolBridge.error(`tools.${name.slice(0, 64)}…: no tool has a name that long`);
    if (args.length > TOOL_ARGS_LIMIT) return ToolBridge.error(`tools.${name}: the arguments are ${args.length.toLocaleString("en")} characters of JSON; at most ${TOOL_ARGS_LIMIT.toLocaleString("en")} may be sent`);
    if (this.pending.size >= TOOL_IN_FLIGHT) return ToolBridge.error(`tools.${name}: at most ${TOOL_IN_FLIGHT} tool calls may wait at once; await each call (or fewer at a time)`);
    return null;
  }

  /** Why a waiting call of run `run` ends now without its answer (the reply's text), or
   * null. @param {string} name @param {number} run */
  ended(name, run) {
    const { link, cell, memory } = this.worker;
    const due = cell.due();
    if (due) {
      // The cell itself raises KeyboardInterrupt (reckon.kernel._tools), and the
      // interrupt buffer stays quiet for this run: it would fire where Python runs
      // next, the event loop's callback that resolves this very call, which
      // swallows it, and the cell would wait for the page's watchdog (a restart).
      if (cell.reason === null) cell.reason = due;
      return JSON.stringify({ status: "error", interrupted: true, message: `tools.${name}: the cell was ${due === "timeout" ? "stopped at its time limit" : "interrupted"} while the tool ran` });
    }
    if (link.fatal || cell.id !== run || !memory.cellRuns) return ToolBridge.error(`tools.${name}: its cell ended before the tool answered`);
    return null;
  }

  /** A call made without await: this thread waits, in short slices, for the frame to
   * write the page's answer (never longer than the cell may run: its deadline and its
   * interrupt end the wait as they end an awaited call). @param {string} name @param {string} args @returns {string} */
  callNow(name, args) {
    const refused = this.refusal(name, args);
    if (refused) return refused;
    const buffer = /** @type {SharedArrayBuffer} */ (this.replies);
    const words = new Int32Array(buffer, 0, TOOL_WORDS);
    const call = ++this.next;
    const run = this.worker.cell.id;
    Atomics.store(words, 0, 0);
    Atomics.store(words, 1, call);
    this.worker.link.post({ type: "tool-call", id: run, call, name, args, sync: true });
    try {
      for (;;) {
        Atomics.wait(words, 0, 0, TOOL_POLL_MS);
        const answered = Atomics.load(words, 0);
        if (answered === call) return this.readReply(name, words);
        // An answer to an earlier call, written as this one began: cleared, unless this
        // call's came meanwhile (the frame writes one answer at a time).
        if (answered !== 0) Atomics.compareExchange(words, 0, answered, 0);
        const ended = this.ended(name, run);
        if (ended) return ended;
      }
    } finally {
      Atomics.store(words, 1, 0); // an answer that comes later is dropped by the frame
    }
  }

  /** The answer in the buffer, as the reply's JSON text (as `settle` makes it).
   * @param {string} name @param {Int32Array} words */
  readReply(name, words) {
    const [kind, length, capped] = [words[2], words[3], words[4]];
    if (kind === 3) return ToolBridge.error(`tools.${name}: its result is ${(length / 1e6).toFixed(1)} MB of JSON, more than a call without await can take; write await tools.${name}(...)`);
    // A copy: TextDecoder reads no shared memory.
    const bytes = new Uint8Array(length);
    bytes.set(new Uint8Array(words.buffer, words.byteLength, length));
    const text = new TextDecoder().decode(bytes);
    return this.reply(kind === 1 ? { status: "ok", text } : { status: "error", message: text, capped: capped === 1 });
  }

  /** @param {string} message */
  static error(message) {
    return JSON.stringify({ status: "error", message });
  }

  /** One call: the page's reply as JSON text (never rejects); a refusal made here is
   * the text itself, not a promise, so a cell looping on refusals never waits a turn of
   * the event loop for each. @param {string} name @param {string} args @returns {string | Promise<string>} */
  call(name, args) {
    const { link, cell } = this.worker;
    const refused = this.refusal(name, args);
    if (refused) return refused;
    const call = ++this.next;
    const run = cell.id;
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        const ended = this.ended(name, run);
        if (ended) end(ended);
      }, TOOL_POLL_MS);
      /** @param {string} reply */
      const end = (reply) => {
        clearInterval(timer);
        this.pending.delete(call);
        resolve(reply);
      };
      this.pending.set(call, end);
      link.post({ type: "tool-call", id: run, call, name, args });
    });
  }

  /** The page's `tool-result` note. @param {Record<string, any>} msg */
  settle(msg) {
    const end = this.pending.get(msg.call);
    if (end) end(this.reply(msg));
  }

  /** The page's answer as the kernel's reply text; a cap ends the run's later calls.
   * @param {Record<string, any>} msg */
  reply(msg) {
    if (msg.status === "ok") return JSON.stringify({ status: "ok", text: typeof msg.text === "string" ? msg.text : "null" });
    const message = String(msg.message || "the tool failed");
    if (msg.capped) this.refused = message;
    return ToolBridge.error(message);
  }
}
