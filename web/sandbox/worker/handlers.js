"use strict";
// What each request does (PROTOCOL.md §3, the sandbox methods).
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.

// Reading these needs pyarrow, from the rest of the stack: it is installed first.
const ARROW_FILES = /\.(parquet|pq|feather|arrow)$/i;

/** @param {{code: string, timeoutMs?: number, id: number}} msg */
async function run(msg) {
  const sql = sqlNeeded(msg.code);
  const needed = restNeeded(msg.code);
  // run_sql reads DuckDB's Arrow results with pyarrow, from the rest of the stack.
  if (sql && !needed.includes("pyarrow")) needed.push("pyarrow");
  if (needed.length) await installNow(needed);
  if (sql) await loadDuckDB();
  // Pyodide's own look at the imports (it parses the cell in Python: not for a cell
  // that cannot import, nor once nothing is left to install): a package restNeeded()
  // missed, or every one if the lock could not be read.
  if (lazyPackages.length && msg.code.includes("import")) await pyodide.loadPackagesFromImports(msg.code, { messageCallback: () => {}, checkIntegrity: false });
  currentRun = msg.id;
  post({ type: "started", id: msg.id }); // the page's watchdog counts from here
  interruptReason = null;
  if (shared) Atomics.store(shared, 0, 0);
  // Over the ceiling already (buffers an earlier cell keeps): the interrupt would
  // land in the kernel's own code before the cell, so the cell does not start.
  if (overCeiling()) return { status: "error", error: memoryError("Before this cell ran, the sandbox held more than"), restartNeeded: true };
  deadline = performance.now() + (msg.timeoutMs || 60000);
  const outputsBefore = outputState();
  let result;
  try {
    cellRuns = true;
    // Most cells await nothing: run at once, without a turn of Pyodide's event loop.
    let text;
    try {
      text = host.run_now(msg.code);
      if (text === undefined || text === null) {
        const stopped = new Promise((resolve) => (stopRun = () => resolve(null)));
        text = await Promise.race([host.run(msg.code), stopped]);
      }
    } catch (err) {
      // A counted constructor refused to allocate past the ceiling inside the
      // runtime's own code (memory.js, stopOverCeiling): over the ceiling, not a bug.
      if (interruptReason !== "memory") throw err;
      text = null;
    }
    if (fatal) return null; // already answered by onFatal
    // Over the ceiling while awaiting, and the KeyboardInterrupt landed in the event
    // loop's own callback, not the cell: the worker is replaced all the same.
    if (text === null) return { status: "error", result: null, figures: [], files: [], error: memoryError("The cell went over"), restartNeeded: true };
    result = JSON.parse(text);
  } finally {
    deadline = Infinity;
    cellRuns = false;
    stopRun = null;
  }
  // What the page stores is what this worker saw change, whatever the kernel says.
  const { files, deleted } = outputChanges(outputsBefore, outputState());
  // The kernel's own view adds what only Python reads: the cells that would run as
  // formulas (_formulas.py), kept by path.
  const flagged = new Map((Array.isArray(result.files) ? result.files : []).filter((/** @type {any} */ f) => f && f.formulas).map((/** @type {any} */ f) => [f.path, f.formulas]));
  result.files = files.map((f) => (flagged.has(f.path) ? { ...f, formulas: flagged.get(f.path) } : f));
  result.outputsDeleted = deleted;
  await finishInstall(result);
  if (!duck && !duckFailure && result.error && String(result.error.message).includes(SQL_NOT_LOADED)) {
    // SQL from a cell that did not name run_sql (a function of an earlier cell): load
    // DuckDB now; the message says to run the cell again.
    await installNow(["pyarrow"]);
    await loadDuckDB();
  }
  // A cell whose last JS call made the buffers ran no Python after it to be stopped;
  // an interrupt that came after the cell's last line landed in the kernel's code.
  if (interruptReason === "memory" || (interruptReason === null && overCeiling())) {
    result.status = "error";
    result.error = { ...memoryError("The cell went over"), traceback: result.error ? result.error.traceback : "", line: result.error ? result.error.line : null };
    result.restartNeeded = true;
  } else if (result.status === "interrupted" && interruptReason === "timeout") {
    result.status = "timeout";
    result.error.message = `The cell ran longer than ${Math.round((msg.timeoutMs || 60000) / 1000)} s and was interrupted; variables are kept. Make it faster, or run it with a larger timeoutMs.`;
  }
  return result;
}

/** The memory interrupt is raised where Python runs next: in an awaiting cell that
 * may be the event loop's own callback, which swallows it, and the cell would wait
 * until the page's watchdog ends it as a timeout. Give the cell a second to fail,
 * then end its run as over the ceiling. */
function memoryInterrupted() {
  const run = currentRun;
  setTimeout(() => {
    if (currentRun === run && stopRun) stopRun();
  }, 1000);
}

/** The MemoryError of a run over the ceiling. @param {string} what */
function memoryError(what) {
  return {
    type: "MemoryError",
    message: `${what} the sandbox memory ceiling (${Math.round(memoryLimit / 1048576)} MB; ${describeMemory()}). The sandbox is restarted: variables are lost, files under /data are kept. For a big file, compute in SQL with run_sql(), which scans the file without loading it (every file under /data is a table by its name), or read only the columns you need with read_table(path, columns=[...]); otherwise keep fewer copies.`,
    traceback: "",
    line: null,
  };
}

/** @param {{path: string, output?: boolean}} msg */
function readFile(msg) {
  if (msg.output) return readOutput(msg); // for the page to keep: only a file a cell wrote
  const data = pyodide.FS.readFile(msg.path); // Uint8Array
  return /** @type {[any, Transferable[]]} */ ([{ status: "ok", path: msg.path, size: data.length, data }, [data.buffer]]);
}

/** @param {string} path */
function ensureDir(path) {
  const parts = path.split("/").filter(Boolean);
  let dir = "";
  for (const part of parts.slice(0, -1)) {
    dir += "/" + part;
    if (!pyodide.FS.analyzePath(dir).exists) pyodide.FS.mkdir(dir);
  }
}

/** @param {{path: string, file: Blob}} msg */
function mountFile(msg) {
  // WORKERFS reads the File lazily, slice by slice: a large upload is never copied
  // whole into the page's or the worker's memory. Each File gets its own mount
  // point; /data/<name> is a symlink to it, so several uploads sit side by side.
  const mountPoint = `/mnt/upload-${++mounts}`;
  const name = msg.path.split("/").pop();
  pyodide.FS.mkdirTree(mountPoint);
  pyodide.FS.mount(pyodide.FS.filesystems.WORKERFS, { blobs: [{ name, data: msg.file }] }, mountPoint);
  ensureDir(msg.path);
  if (pyodide.FS.analyzePath(msg.path).exists) pyodide.FS.unlink(msg.path);
  pyodide.FS.symlink(`${mountPoint}/${name}`, msg.path);
  uploads.set(`${mountPoint}/${name}`, msg.file);
  return { status: "ok", path: msg.path, size: msg.file.size };
}

/** @param {{path: string, data: Uint8Array}} msg */
function writeFile(msg) {
  // In memory, so under the ceiling like a cell's files: restored outputs included.
  const size = msg.data.length;
  if (memoryInUse() + size > memoryLimit) {
    recount();
    if (memoryInUse() + size > memoryLimit) return { status: "error", path: msg.path, message: `${msg.path} (${Math.round(size / 1048576).toLocaleString("en")} MB) would put the sandbox over its memory ceiling (${Math.round(memoryLimit / 1048576)} MB; ${describeMemory()}), so it was not written. Upload big files instead (they are mounted, not copied), or delete files under /output you no longer need.` };
  }
  ensureDir(msg.path);
  if (pyodide.FS.analyzePath(msg.path).exists) pyodide.FS.unlink(msg.path);
  pyodide.FS.writeFile(msg.path, msg.data);
  countFile(pyodide.FS.lookupPath(msg.path).node);
  return { status: "ok", path: msg.path, size };
}

/** @param {{path: string}} msg */
function deleteFile(msg) {
  pyodide.FS.unlink(msg.path);
  return { status: "ok", path: msg.path };
}

/** The sandbox worker's methods (PROTOCOL.md §3; its interface: SandboxApi).
 * @type {import("../../shared/seam.js").Handlers<import("../../shared/protocol.js").SandboxApi>} */
const handlers = {
  boot,
  run: (args, { id }) => run({ ...args, id }),
  readFile,
  writeFile,
  mountFile,
  deleteFile,
  reset: () => JSON.parse(host.reset()),
  listFiles: (msg) => JSON.parse(host.list_files(msg.dir || "/")),
  inspect: async (msg) => {
    if (ARROW_FILES.test(String(msg.path))) await installNow(["pyarrow"]);
    return JSON.parse(host.inspect(msg.path));
  },
};

/** @param {any} err */
function describeError(err) {
  if (err && err.name === "ErrnoError") return `no such file or directory (errno ${err.errno})`;
  return String((err && err.message) || err);
}
