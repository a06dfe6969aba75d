// One host tool call within its bounds (web/tools.js makes the checks around it): the
// tool's time limit, and its cell's life. Whichever ends first aborts the tool's
// `signal`, so what the tool started stops too instead of running on for nobody: for a
// relay tool, the agent worker's request, and with it the relay's call to the tool's
// endpoint (PROTOCOL.md §4, `cancelRelayTool`).

// How often a call looks whether its cell still runs: the cell ends on the worker's
// side first (an interrupt, its time limit), and the page learns it from the run's reply.
const LIVE_POLL_MS = 100;

/** @typedef {import("./tool-spec.js").ToolSpec} ToolSpec */
/** How a call ended: its value, what it threw, its time limit, or its cell (or stop()) first.
 * @typedef {{status: "ok", value: unknown} | {status: "failed", error: unknown} | {status: "late"} | {status: "ended"}} Ran */

/** Run `tool` on a copy of `args`; `calls` holds its AbortController while it runs (stop()
 * aborts them all). Never rejects.
 * @param {ToolSpec} tool @param {unknown} args
 * @param {{timeoutMs: number, isLive: () => boolean, calls: Set<AbortController>}} bounds
 * @returns {Promise<Ran>} */
export async function runBounded(tool, args, { timeoutMs, isLive, calls }) {
  const abort = new AbortController();
  calls.add(abort);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let poll;
  /** @type {Promise<Ran>} */
  const cut = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ status: "late" }), timeoutMs);
    poll = setInterval(() => isLive() || resolve({ status: "ended" }), LIVE_POLL_MS);
    abort.signal.addEventListener("abort", () => resolve({ status: "ended" }), { once: true });
  });
  /** @type {Promise<Ran>} */
  const ran = Promise.resolve()
    .then(() => tool.run(structuredClone(args), { signal: abort.signal }))
    .then((value) => ({ status: "ok", value }), (error) => ({ status: "failed", error }));
  try {
    const out = await Promise.race([ran, cut]);
    if (out.status === "late" || out.status === "ended") abort.abort();
    return out;
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
    calls.delete(abort);
  }
}

export const OVER = Symbol("over");

/** JSON text of `value`, given up (OVER thrown) as soon as it is sure to pass `limit`
 * characters: a 100 MB result is refused before it is copied, and the page stays
 * responsive. @param {unknown} value @param {number} limit */
export function boundedJson(value, limit) {
  let total = 0;
  return JSON.stringify(value, (key, item) => {
    total += key.length + (typeof item === "string" ? item.length + 3 : 4);
    if (total > limit) throw OVER;
    return item;
  });
}

/** @param {number} bytes */
export function megabytes(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.ceil(bytes / 1e3)} kB`;
}
