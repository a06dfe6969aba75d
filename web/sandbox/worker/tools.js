"use strict";
// Host tools, the worker's side: a cell's `await tools.get_orders(month=3)` becomes a
// `tool-call` event to the page, `{id: <run id>, call, name, args: <JSON text>}`, and
// the page's `tool-result` note `{call, status, text | message}` resolves it
// (PROTOCOL.md §3, *Host tools*). The page holds the tools, their schemas, policies and
// limits; this side only keeps a cell from flooding the page: one run's calls end with
// the page's first refusal for a cap, a few are in flight at once, and a call's
// arguments are bounded. A part of the sandbox worker (see main.js): the page joins the
// parts into one closure, so nothing here is reachable from a cell.
/* exported ToolBridge */

const TOOL_ARGS_LIMIT = 1_000_000; // characters of JSON arguments a call may send
const TOOL_IN_FLIGHT = 8; // calls of one run waiting for the page at once
const TOOL_POLL_MS = 100; // how often a waiting call looks at the cell's deadline

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
  }

  /** Python's way out (reckon.kernel._tools.set_transport). @param {any} pyodide */
  install(pyodide) {
    const tools = pyodide.pyimport("reckon.kernel._tools");
    tools.set_transport((/** @type {unknown} */ name, /** @type {unknown} */ args) => this.call(String(name), String(args)));
    tools.destroy();
  }

  /** @param {string} message */
  static error(message) {
    return JSON.stringify({ status: "error", message });
  }

  /** One call: the page's reply as JSON text (never rejects); a refusal made here is
   * the text itself, not a promise, so a cell looping on refusals never waits a turn of
   * the event loop for each. @param {string} name @param {string} args @returns {string | Promise<string>} */
  call(name, args) {
    const { link, cell, memory } = this.worker;
    if (!memory.cellRuns) return ToolBridge.error(`tools.${name}: a tool can be called only while its cell runs (not from a task the cell left running)`);
    if (this.run !== cell.id) {
      this.run = cell.id;
      this.refused = null;
    }
    if (this.refused) return ToolBridge.error(this.refused);
    if (name.length > 64) return ToolBridge.error(`tools.${name.slice(0, 64)}…: no tool has a name that long`);
    if (args.length > TOOL_ARGS_LIMIT) return ToolBridge.error(`tools.${name}: the arguments are ${args.length.toLocaleString("en")} characters of JSON; at most ${TOOL_ARGS_LIMIT.toLocaleString("en")} may be sent`);
    if (this.pending.size >= TOOL_IN_FLIGHT) return ToolBridge.error(`tools.${name}: at most ${TOOL_IN_FLIGHT} tool calls may wait at once; await each call (or fewer at a time)`);
    const call = ++this.next;
    const run = cell.id;
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        const due = cell.due();
        if (due) {
          // The cell itself raises KeyboardInterrupt (reckon.kernel._tools), and the
          // interrupt buffer stays quiet for this run: it would fire where Python runs
          // next, the event loop's callback that resolves this very call, which
          // swallows it, and the cell would wait for the page's watchdog (a restart).
          if (cell.reason === null) cell.reason = due;
          end(JSON.stringify({ status: "error", interrupted: true, message: `tools.${name}: the cell was ${due === "timeout" ? "stopped at its time limit" : "interrupted"} while the tool ran` }));
        } else if (link.fatal || cell.id !== run || !memory.cellRuns) end(ToolBridge.error(`tools.${name}: its cell ended before the tool answered`));
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
    if (!end) return;
    if (msg.status === "ok") end(JSON.stringify({ status: "ok", text: typeof msg.text === "string" ? msg.text : "null" }));
    else {
      const message = String(msg.message || "the tool failed");
      if (msg.capped) this.refused = message;
      end(ToolBridge.error(message));
    }
  }
}
