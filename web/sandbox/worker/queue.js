"use strict";
// Requests one at a time, in the order sent.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.

// Requests run one at a time, in the order sent: a run and a file operation never
// interleave. Nothing else runs in the worker: the rest of the stack is installed
// inside the request that needs it (rest.js).
/** @param {() => Promise<unknown>} task */
function enqueue(task) {
  queue.push(task);
  if (!pumping) pump();
}

async function pump() {
  pumping = true;
  while (queue.length) {
    const next = /** @type {() => Promise<unknown>} */ (queue.shift());
    try {
      await next();
    } catch {
      // a task answers for itself; the queue goes on
    }
  }
  pumping = false;
}

// A call `{type: "call", id, method, args}` (PROTOCOL.md §3); the handler sees its
// args with the call's id.
function onRequest(msg) {
  // Said at once, before the queue: a page whose request no worker says it received
  // knows this worker is busy with work a cell left running (channel.js, BUSY_MS).
  if (msg && typeof msg.id === "number" && msg.id !== 0) post({ type: "received", id: msg.id });
  const ok = msg && msg.type === "call" && typeof msg.method === "string";
  const handler = ok && Object.hasOwn(handlers, msg.method) ? handlers[msg.method] : null;
  const request = { ...(ok && msg.args && typeof msg.args === "object" ? msg.args : {}), id: msg && msg.id };
  enqueue(async () => {
    if (fatal) return; // the page is replacing this worker
    currentRequest = request.id;
    if (!handler) {
      post({ type: "reply", id: request.id, status: "error", message: `unknown method ${ok ? msg.method : msg && msg.type}` });
      return;
    }
    try {
      const out = await handler(request);
      if (out === null) return;
      const [reply, transfer] = Array.isArray(out) ? out : [out, []];
      post({ ...reply, type: "reply", id: request.id }, transfer);
    } catch (err) {
      if (!fatal) post({ type: "reply", id: request.id, status: "error", message: describeError(err) });
    }
  });
}
