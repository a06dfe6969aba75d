// What a run's reply becomes on the page: held to the page's own output limit (the
// kernel's lives inside the sandbox, where a cell can raise it), the live stream's
// cap, and the messages of requests that a worker replacement cut off. Plain functions.

/** @typedef {import("../shared/protocol.js").RunResult} RunResult */
/** A reply as it came, or a result being shaped: data, read field by field.
 * @typedef {Record<string, any>} Loose */

export const CLOSED = "this Reckon was closed (close()); create a new one to run code";

// The kernel keeps `outputLimit` characters and then says what it cut: room for that.
export const MARKER_ROOM = 1000;
// The live view stops here: past it a runaway print only slows the page (the result
// keeps its own, smaller limit).
const LIVE_LIMIT = 1_000_000;

// A run's figures, as the kernel caps them (reckon.kernel._figures): at most 20, and
// 8 MB of PNG together (base64 text: 4/3 of that). Held here too, whatever the sandbox
// says: they go into the chat, the model's context and the saved conversation.
const MAX_FIGURES = 20;
const FIGURE_CHARS = Math.ceil(((8 * 1024 * 1024) / 3) * 4) + 1024;

/** Why a request ended when its worker was replaced.
 * @param {string} reason @param {string | null} message @param {boolean} [rebuilds] */
export function explain(reason, message, rebuilds = false) {
  switch (reason) {
    case "timeout":
      return rebuilds
        ? "The cell did not stop after its time limit, so the sandbox was restarted: files are kept, and variables are rebuilt by re-running the earlier successful cells (not this one)."
        : "The cell did not stop after its time limit, so the sandbox was restarted: variables are lost, uploaded files are kept.";
    case "interrupted":
      return "The cell was stopped by restarting the sandbox: variables are lost, uploaded files are kept.";
    case "restart":
      return "The sandbox was restarted.";
    case "busy":
      return "The sandbox was busy with work an earlier cell left running (a setTimeout or setInterval callback, or an asyncio task, that never lets go), so it did not take this request; it was restarted: variables are lost (replaying the cells would start that work again); uploads and the files kept in the browser are back.";
    default:
      return rebuilds
        ? `The sandbox crashed (${message || "no detail"}) and was restarted: files are kept, and variables are rebuilt by re-running the earlier successful cells.`
        : `The sandbox crashed (${message || "no detail"}) and was restarted: variables are lost, uploaded files are kept.`;
  }
}

/** What of a streamed batch still goes to the live view, with a marker where it stops;
 * "" after that. `collected` keeps what was shown, per stream.
 * @param {{stdout: string, stderr: string}} collected @param {"stdout" | "stderr"} name @param {string} text */
export function liveText(collected, name, text) {
  const room = LIVE_LIMIT - collected[name].length;
  if (room <= 0) return "";
  const shown = text.length <= room ? text : `${text.slice(0, room)}\n[live output stopped after ${LIVE_LIMIT.toLocaleString("en")} characters]\n`;
  collected[name] += shown;
  return shown;
}

/** `text` within `limit` characters, with a marker saying how much was cut.
 * @param {unknown} text @param {number} limit */
function capped(text, limit) {
  if (typeof text !== "string" || text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[output truncated by the page: ${(text.length - limit).toLocaleString("en")} more characters not shown]`;
}

/** The figures that fit the page's limits, and a line about the rest.
 * @param {Loose} result @returns {Loose} */
function withinFigures(result) {
  if (!Array.isArray(result.figures)) return { ...result, figures: [] };
  let chars = 0;
  const kept = [];
  for (const figure of result.figures) {
    const png = figure && typeof figure === "object" && typeof figure.png === "string" ? figure.png : null;
    if (png === null || kept.length >= MAX_FIGURES || chars + png.length > FIGURE_CHARS) continue;
    chars += png.length;
    kept.push(figure);
  }
  const dropped = result.figures.length - kept.length;
  if (!dropped) return result;
  const note = `[${dropped} figure${dropped === 1 ? "" : "s"} not shown: a run shows at most ${MAX_FIGURES} figures and 8 MB of them (the page's limit); draw fewer or smaller ones, or save them to files under /output]\n`;
  return { ...result, figures: kept, stderr: `${typeof result.stderr === "string" ? result.stderr : ""}${note}` };
}

/** The sandbox's result held to the page's own limit, whatever the sandbox says.
 * @param {Loose} result @param {number} limit @returns {Loose} */
function withinLimit(result, limit) {
  const over = (/** @type {unknown} */ t) => typeof t === "string" && t.length > limit;
  const value = result.result && typeof result.result === "object" ? result.result : null;
  const error = result.error && typeof result.error === "object" ? result.error : null;
  // Made by the kernel, inside the sandbox, like the rest: held to the limit too.
  const assigned = Array.isArray(result.assigned) ? result.assigned.filter((/** @type {unknown} */ a) => a && typeof a === "object") : null;
  const notes = Array.isArray(result.notes) ? result.notes.filter((/** @type {unknown} */ n) => typeof n === "string") : null;
  const anyOver = over(result.stdout) || over(result.stderr) || over(value && value.text) || over(error && error.traceback) || over(error && error.message) || (assigned || []).some((a) => over(a.text)) || (notes || []).some(over);
  if (!anyOver) return result;
  return {
    ...result,
    ...(assigned ? { assigned: assigned.map((a) => ({ ...a, text: capped(a.text, limit) })) } : {}),
    ...(notes ? { notes: notes.map((n) => capped(n, limit)) } : {}),
    stdout: capped(result.stdout, limit),
    stderr: capped(result.stderr, limit),
    result: value ? { ...value, text: capped(value.text, limit) } : result.result,
    error: error ? { ...error, traceback: capped(error.traceback, limit), message: capped(error.message, limit) } : result.error,
    truncated: true,
  };
}

/** The worker's reply (or the page's own, `restartedByClient`) as a run result.
 * @param {Loose} reply @param {{collected: {stdout: string, stderr: string}}} entry @param {number} started @param {number} [limit]
 * @returns {RunResult} */
export function toRunResult(reply, entry, started, limit = Infinity) {
  const base = {
    status: "error",
    stdout: entry.collected.stdout,
    stderr: entry.collected.stderr,
    truncated: false,
    result: null,
    figures: [],
    files: [],
    error: null,
    duration_ms: performance.now() - started,
    restarted: false,
  };
  if (reply.restartedByClient) return /** @type {RunResult} */ (withinLimit({ ...base, status: reply.status, error: reply.error, restarted: true }, limit));
  const { type, id, restartNeeded, outputsDeleted, ...result } = reply;
  void type;
  void id;
  void restartNeeded;
  void outputsDeleted; // for persistence only (client.js): not part of the run result
  if (typeof result.status !== "string") return { ...base, error: { type: "ProtocolError", message: "malformed reply from the sandbox", traceback: "", line: null } };
  return /** @type {RunResult} */ (withinLimit(withinFigures({ ...base, ...result }), limit));
}
