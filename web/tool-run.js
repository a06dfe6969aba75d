// One host tool call within its bounds (web/tools.js makes the checks around it): the
// tool's time limit, and its cell's life (interrupted, its time limit, an ask stopped:
// the page learns it from the run's reply). Whichever ends first aborts the tool's
// `signal`, so what the tool started stops too instead of running on for nobody: for a
// relay tool, the agent worker's request, and with it the relay's call to the tool's
// endpoint (PROTOCOL.md §4, `cancelRelayTool`). The cell is ended by the sandbox worker,
// which raises the interrupt in it (sandbox/worker/tools.js), never from here: an
// answer from here racing the interrupt would let it land in the kernel's own code.

// How often a call looks whether its cell still runs: the cell ends on the worker's
// side first (an interrupt, its time limit), and the page learns it from the run's reply.
const LIVE_POLL_MS = 100;

/** @typedef {import("./tool-spec.js").ToolSpec} ToolSpec */
/** How a call ended: its value, what it threw, its time limit, or its cell first.
 * @typedef {{status: "ok", value: unknown} | {status: "failed", error: unknown} | {status: "late"} | {status: "ended"}} Ran */

/** Run `tool` on a copy of `args`. Never rejects.
 * @param {ToolSpec} tool @param {unknown} args @param {{timeoutMs: number, isLive: () => boolean}} bounds
 * @returns {Promise<Ran>} */
export async function runBounded(tool, args, { timeoutMs, isLive }) {
  const abort = new AbortController();
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let poll;
  /** @type {Promise<Ran>} */
  const cut = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ status: "late" }), timeoutMs);
    poll = setInterval(() => isLive() || resolve({ status: "ended" }), LIVE_POLL_MS);
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
  }
}

/** The message of a call whose cell ended first. @param {string} name */
export const cancelled = (name) => `${name}: cancelled, its cell ended first (interrupted, stopped or out of time)`;

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
