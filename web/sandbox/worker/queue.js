"use strict";
// Requests one at a time, in the order sent; background work only when quiet.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.

// Requests run one at a time, in the order sent: a run and a file operation never
// interleave. Background work (installing the rest
// of the stack, one package per task) runs only when no request waits and none came in
// for QUIET_MS: a task that has started cannot be paused, and a cell sent meanwhile
// would wait for it (an agent's steps come in bursts, a person types).
const QUIET_MS = 3000;

/** @param {() => Promise<unknown>} task @param {{background?: boolean, name?: string}} [options] */
function enqueue(task, { background = false, name } = {}) {
  queue.push({ task, background, name });
  if (!pumping) pump();
}

async function pump() {
  pumping = true;
  clearTimeout(quietTimer);
  while (queue.length) {
    const first = queue.findIndex((t) => !t.background);
    const quiet = lastRequest + QUIET_MS - performance.now();
    if (first < 0 && quiet > 0) {
      quietTimer = setTimeout(() => pumping || pump(), quiet);
      break;
    }
    const [next] = queue.splice(first >= 0 ? first : 0, 1);
    try {
      await next.task();
    } catch {
      // a task answers for itself; the queue goes on
    }
    if (!next.background) lastRequest = performance.now();
  }
  pumping = false;
}

// A call `{type: "call", id, method, args}` (PROTOCOL.md §3); the handler sees its
// args with the call's id.
function onRequest(msg) {
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
