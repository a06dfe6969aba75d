// What the browser may keep of what a run wrote: which paths, and how much. A cell
// runs in the interpreter that lists the files it wrote, and the third outside attack
// stored 1 GB in IndexedDB from 20 links to one upload, and 4,617 files from /output
// replaced by a link to / (SECURITY.md, M1). The worker now lists only files a cell
// wrote (web/sandbox/worker/outputs.js); these caps bound what even those may take.
// Kept outputs are written back into the sandbox's memory on every start, so a
// session keeps at most half the memory ceiling of them.

const STORED_DIRS = ["/data/", "/output/"];
const DIR_OF_KIND = { upload: "/data/", output: "/output/" };

const MB = 1024 * 1024;
/** The caps on outputs kept in the browser (uploads are the person's own: not capped). */
export const KEEP_LIMITS = Object.freeze({
  runBytes: 256 * MB, // what one run may add
  runFiles: 200,
  sessionBytes: 1024 * MB, // what a session may keep in all (and at most half the memory ceiling)
  sessionFiles: 2000,
});

/**
 * `path` if it may be stored as a file of `kind` ("upload", "output", or any of the
 * two), else null. The path must lie inside the kind's folder with no "", "." or ".."
 * segment: a cell runs in the interpreter that lists the files it wrote, so it can
 * report any path, and "/output/../home/pyodide/openpyxl.py" written back on every
 * start would shadow a module for good.
 * @param {unknown} path @param {string} [kind]
 * @returns {string | null}
 */
export function storablePath(path, kind) {
  if (typeof path !== "string" || /[\0\\]/.test(path)) return null;
  const dirs = kind ? [/** @type {Record<string, string>} */ (DIR_OF_KIND)[kind]].filter(Boolean) : STORED_DIRS;
  const dir = dirs.find((d) => path.startsWith(d));
  if (!dir) return null;
  const segments = path.slice(dir.length).split("/");
  return segments.some((s) => s === "" || s === "." || s === "..") ? null : path;
}

/** @param {number} bytes */
export function megabytes(bytes) {
  return `${Math.max(1, Math.round(bytes / MB)).toLocaleString("en")} MB`;
}

/**
 * Which of a run's files to keep: in the order listed, each while the run's and the
 * session's caps allow; a file already kept counts only by how much it grows.
 * @param {Array<{path: string, size: number}>} files the run's files (storable paths)
 * @param {Map<string, number>} kept path -> size of the session's kept outputs
 * @param {{memoryLimitMB?: number, limits?: typeof KEEP_LIMITS}} [options]
 * @returns {{keep: Array<{path: string, size: number}>, skipped: Array<{path: string, size: number, why: string}>}}
 */
export function planKeep(files, kept, { memoryLimitMB = 2048, limits = KEEP_LIMITS } = {}) {
  const sessionBytes = Math.min(limits.sessionBytes, (memoryLimitMB * MB) / 2);
  let total = [...kept.values()].reduce((sum, size) => sum + size, 0);
  let count = kept.size;
  let runBytes = 0;
  let runFiles = 0;
  const keep = [];
  const skipped = [];
  for (const file of files) {
    const size = Math.max(0, Number(file.size) || 0);
    const before = kept.get(file.path);
    const grows = size - (before === undefined ? 0 : before);
    const why =
      runFiles + 1 > limits.runFiles ? `a run may keep at most ${limits.runFiles} files`
      : runBytes + size > limits.runBytes ? `a run may keep at most ${megabytes(limits.runBytes)}`
      : before === undefined && count + 1 > limits.sessionFiles ? `a session may keep at most ${limits.sessionFiles} files`
      : total + grows > sessionBytes ? `a session may keep at most ${megabytes(sessionBytes)} of outputs (half the sandbox's memory ceiling, at most ${megabytes(limits.sessionBytes)})`
      : null;
    if (why) {
      skipped.push({ path: file.path, size, why });
      continue;
    }
    keep.push({ path: file.path, size });
    runFiles += 1;
    runBytes += size;
    total += grows;
    if (before === undefined) count += 1;
    kept.set(file.path, size);
  }
  return { keep, skipped };
}

/** The line a run result gets for the files it wrote that were not kept: the person
 * and the model both read it. @param {Array<{path: string, size: number, why: string}>} skipped */
export function notKeptNote(skipped) {
  if (!skipped.length) return "";
  const shown = skipped.slice(0, 5).map((f) => `${f.path} (${megabytes(f.size)})`).join(", ");
  const more = skipped.length > 5 ? ` and ${skipped.length - 5} more` : "";
  return `[Not kept in the browser for next time: ${shown}${more}: ${skipped[0].why}. They are still here for this session (download what you need); what was kept before stays kept. Write fewer or smaller files under /output.]\n`;
}
