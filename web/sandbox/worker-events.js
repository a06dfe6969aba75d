// What the current worker says about its calls, over its private channel, and the
// reply of the call at the head of the line: how the channel (channel.js) hears its
// worker. Still treated as data: the worker handles one call at a time, in order, so
// anything about a call that is not the one being handled is not the worker's own
// doing. Ignored.

import { liveText } from "./results.js";

/** @typedef {import("./channel.js").SandboxChannel} SandboxChannel */

/** The worker's events, for the channel's ordered `connect` (`on`).
 * @param {SandboxChannel} channel @returns {Record<string, (msg: Record<string, any>) => void>} */
export function workerEvents(channel) {
  /** @param {(msg: Record<string, any>) => void} fn */
  const head = (fn) => (/** @type {Record<string, any>} */ msg) => {
    if (msg.id === channel.rpc.head) fn(msg);
  };
  return {
    // Said as soon as a request arrives, before the queue: any id the worker got.
    received: (msg) => {
      if (typeof msg.id === "number") channel.watch.markReceived(msg.id);
    },
    "need-files": head((msg) => {
      if (!Array.isArray(msg.files)) return channel.handHeld();
      // DuckDB's files (sql.js), asked for by name on the first SQL: sent once.
      const sql = channel.runtime.info.sandbox.sql_files || [];
      const wanted = msg.files.filter((/** @type {unknown} */ name) => typeof name === "string" && sql.includes(name) && !channel.handed.includes(name));
      if (wanted.length) channel.handOver(wanted);
    }),
    stream: head((msg) => {
      const entry = channel.rpc.pending.get(msg.id);
      if (!entry || !entry.collected || typeof msg.text !== "string" || (msg.name !== "stdout" && msg.name !== "stderr")) return;
      const text = liveText(entry.collected, msg.name, msg.text);
      if (!text) return;
      if (entry.onStream) entry.onStream(msg.name, text);
      channel.emit("stream", { id: msg.id, name: msg.name, text });
    }),
    started: head((msg) => {
      const entry = channel.rpc.pending.get(msg.id);
      if (entry && entry.started) entry.started();
    }),
    // A cell calls a host tool: only the running request's calls count, and what
    // goes back is a note on this worker's port (web/tools.js). A call made without
    // await (`sync`) waits blocked in the worker, which reads no message: its answer
    // goes to the frame, which writes it where the worker waits (frame.js, answerTool).
    "tool-call": head((msg) => {
      const port = channel.workerPort;
      const entry = channel.rpc.pending.get(msg.id);
      if (!entry || entry.method !== "run") return;
      /** @param {Record<string, unknown>} reply */
      const answer = (reply) => {
        if (!port || port !== channel.workerPort) return; // a worker replaced meanwhile
        if (msg.sync === true) channel.port?.notify("frame-tool-result", { ...reply, call: msg.call });
        else port.postMessage({ ...reply, type: "tool-result" });
      };
      if (!channel.tools) return answer({ call: msg.call, status: "error", message: "no tools are available: this page lends none (createReckon({tools}) or reckon.registerTool)" });
      channel.tools.handle(msg, answer);
    }),
  };
}

/** The head's reply (the channel's `onReply`): ended here, then the next call is watched.
 * @param {SandboxChannel} channel @param {Record<string, any>} msg
 * @param {import("../shared/seam.js").Pending} entry @returns {true} */
export function headReply(channel, msg, entry) {
  if (msg.restartNeeded && entry.method && entry.method !== "run") {
    // The interpreter died under a file request: answer it, then replace the worker.
    channel.rpc.settle(msg.id, { status: "error", message: typeof msg.error === "object" && msg.error ? String(msg.error.message) : "the sandbox crashed" });
    channel.recover("crash", null);
    return true;
  }
  // A run's tool calls go with its result (PROTOCOL.md §1, `tools`).
  const calls = channel.tools && entry.method === "run" ? channel.tools.take(msg.id) : [];
  channel.rpc.settle(msg.id, /** @type {any} */ (calls.length ? { ...msg, tools: calls } : msg));
  channel.watch.watchHead();
  return true;
}
