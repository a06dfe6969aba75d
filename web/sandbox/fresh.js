// A fresh worker for one job that no cell may touch: privacy's value scan. The frame
// starts a second worker from the same files as the sandbox's (the snapshot too), the
// page mounts the person's files in it, runs the one cell, and the frame ends it.
// The cells of the session run in the other worker, another interpreter and another
// JS realm, so nothing they patched (pandas, the kernel, builtins) is here.
// Message shapes: PROTOCOL.md §3 (frame-fresh, frame-fresh-end; the worker's calls).

import { connect } from "../shared/seam.js";

/** How long a fresh worker may take to boot, on top of the cell's own time. */
const BOOT_MS = 120_000;

/**
 * Run `code` in a fresh worker with `files` mounted under their paths; resolves to the
 * worker's reply to `run` (a run result as data), never rejects.
 * @param {{port: import("../shared/seam.js").Endpoint, files: Map<string, Blob>, code: string, timeoutMs: number,
 *   kernel: Record<string, unknown>, onNeedFiles: () => void}} options
 * @returns {Promise<Record<string, any>>}
 */
export async function runFresh({ port, files, code, timeoutMs, kernel, onNeedFiles }) {
  const channel = new MessageChannel();
  /** @type {import("../shared/seam.js").Caller<import("../shared/protocol.js").SandboxApi>} */
  const worker = connect(channel.port1, { on: { "need-files": () => onNeedFiles() } });
  const limit = BOOT_MS + timeoutMs;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ status: "error", message: `the fresh sandbox did not finish within ${Math.round(limit / 1000)} s` }), limit);
  });
  const job = (async () => {
    const booted = worker.expect(0); // the frame sends the boot call, with this port
    port.notify("frame-fresh", { kernel }, [channel.port2]);
    const boot = await booted;
    if (boot.status !== "ok") return { status: "error", message: `the fresh sandbox did not start: ${boot.message || boot.status}` };
    for (const [path, file] of files) {
      const mounted = await worker.call("mountFile", { path, file });
      if (mounted.status !== "ok") return { status: "error", message: `${path} could not be mounted in the fresh sandbox: ${mounted.message}` };
    }
    return worker.call("run", { code, timeoutMs });
  })();
  try {
    return /** @type {Record<string, any>} */ (await Promise.race([job, late]));
  } finally {
    clearTimeout(timer);
    port.notify("frame-fresh-end");
    channel.port1.close();
  }
}
