// A fresh worker for one job that no cell may touch: privacy's value scan. The frame
// starts a second worker from the same files as the sandbox's (the snapshot too), the
// page mounts the person's files in it, runs the one cell, and the frame ends it.
// The cells of the session run in the other worker, another interpreter and another
// JS realm, so nothing they patched (pandas, the kernel, builtins) is here.
// Message shapes: PROTOCOL.md §3 (frame-fresh, frame-fresh-end; the worker's calls).

/** How long a fresh worker may take to boot, on top of the cell's own time. */
const BOOT_MS = 120_000;

/**
 * Run `code` in a fresh worker with `files` mounted under their paths; resolves to the
 * worker's reply to `run` (a run result as data), never rejects.
 * @param {{port: MessagePort, files: Map<string, Blob>, code: string, timeoutMs: number,
 *   kernel: Record<string, unknown>, onNeedFiles: () => void}} options
 * @returns {Promise<Record<string, any>>}
 */
export async function runFresh({ port, files, code, timeoutMs, kernel, onNeedFiles }) {
  const channel = new MessageChannel();
  const worker = channel.port1;
  /** @type {Map<number, (reply: Record<string, any>) => void>} */
  const waiting = new Map();
  let nextId = 1;
  worker.onmessage = (ev) => {
    const msg = ev.data;
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "need-files") onNeedFiles();
    const resolve = msg.type === "reply" ? waiting.get(msg.id) : undefined;
    if (resolve) {
      waiting.delete(msg.id);
      resolve(msg);
    }
  };
  /** @param {number} id @returns {Promise<Record<string, any>>} */
  const replyTo = (id) => new Promise((resolve) => waiting.set(id, resolve));
  /** @param {string} method @param {Record<string, unknown>} args */
  const call = (method, args) => {
    const id = nextId++;
    const reply = replyTo(id);
    worker.postMessage({ type: "call", id, method, args });
    return reply;
  };
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ status: "error", message: `the fresh sandbox did not finish within ${Math.round((BOOT_MS + timeoutMs) / 1000)} s` }), BOOT_MS + timeoutMs);
  });
  const job = (async () => {
    const booted = replyTo(0);
    port.postMessage({ type: "frame-fresh", kernel }, [channel.port2]);
    const boot = await booted;
    if (boot.status !== "ok") return { status: "error", message: `the fresh sandbox did not start: ${boot.message || boot.status}` };
    for (const [path, file] of files) {
      const mounted = await call("mountFile", { path, file });
      if (mounted.status !== "ok") return { status: "error", message: `${path} could not be mounted in the fresh sandbox: ${mounted.message}` };
    }
    return call("run", { code, timeoutMs });
  })();
  try {
    return /** @type {Record<string, any>} */ (await Promise.race([job, late]));
  } finally {
    clearTimeout(timer);
    port.postMessage({ type: "frame-fresh-end" });
    worker.close();
  }
}
