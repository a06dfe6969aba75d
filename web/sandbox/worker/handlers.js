"use strict";
// The sandbox worker: one object, whose methods are what each request does
// (PROTOCOL.md §3, the sandbox methods; main.js serves them) and whose fields are all
// its state, some of it in the parts it owns.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.
/* global PageLink, CellRun, WorkerMemory, RuntimeFiles, RestOfStack, SqlEngine, ToolBridge, SQL_NOT_LOADED, bootInterpreter, outputState, outputChanges, readOutput */
/* exported SandboxWorker */

// Reading these needs pyarrow, from the rest of the stack: it is installed first.
const ARROW_FILES = /\.(parquet|pq|feather|arrow)$/i;

class SandboxWorker {
  constructor() {
    this.link = new PageLink();
    this.cell = new CellRun();
    this.memory = new WorkerMemory(() => {
      if (this.cell.reason !== null) return;
      this.cell.reason = "memory";
      this.memoryInterrupted();
    });
    this.files = new RuntimeFiles(this.link);
    this.files.hook();
    this.rest = new RestOfStack(this.files);
    this.sql = new SqlEngine(this);
    this.tools = new ToolBridge(this);
    /** @type {any} the interpreter, once booted */
    this.pyodide = null;
    /** @type {any} the Python module reckon.kernel._host */
    this.host = null;
    this.mounts = 0; // upload mount points made so far
  }

  /** The interpreter is up: the parts that use it get it. @param {any} pyodide */
  setInterpreter(pyodide) {
    this.pyodide = this.rest.pyodide = this.sql.pyodide = this.memory.pyodide = pyodide;
  }

  /** @param {{runtime: Record<string, Blob>, config: Record<string, any>}} msg */
  boot(msg) {
    return bootInterpreter(this, msg); // boot.js
  }

  /** @param {{code: string, timeoutMs?: number, id: number}} msg */
  async run(msg) {
    const { cell, memory, rest, sql, link, host, pyodide } = this;
    const useSql = sql.needed(msg.code);
    const needed = rest.needed(msg.code);
    // run_sql reads DuckDB's Arrow results with pyarrow, from the rest of the stack.
    if (useSql && !needed.includes("pyarrow")) needed.push("pyarrow");
    if (needed.length) await rest.installNow(needed);
    if (useSql) await sql.load();
    // Pyodide's own look at the imports (it parses the cell in Python: not for a cell
    // that cannot import, nor once nothing is left to install): a package rest.needed()
    // missed, or every one if the lock could not be read.
    if (rest.lazyPackages.length && msg.code.includes("import")) await pyodide.loadPackagesFromImports(msg.code, { messageCallback: () => {}, checkIntegrity: false });
    cell.id = msg.id;
    link.post({ type: "started", id: msg.id }); // the page's watchdog counts from here
    cell.reason = null;
    if (cell.shared) Atomics.store(cell.shared, 0, 0);
    // Over the ceiling already (buffers an earlier cell keeps): the interrupt would
    // land in the kernel's own code before the cell, so the cell does not start.
    if (memory.overCeiling()) return { status: "error", error: this.memoryError("Before this cell ran, the sandbox held more than"), restartNeeded: true };
    cell.deadline = performance.now() + (msg.timeoutMs || 60000);
    const outputsBefore = outputState(pyodide);
    /** @type {any} */
    let result;
    try {
      memory.cellRuns = true;
      // Most cells await nothing: run at once, without a turn of Pyodide's event loop.
      let text;
      try {
        text = host.run_now(msg.code);
        if (text === undefined || text === null) {
          const stopped = new Promise((resolve) => (cell.stop = () => resolve(null)));
          text = await Promise.race([host.run(msg.code), stopped]);
        }
      } catch (err) {
        // A counted constructor refused to allocate past the ceiling inside the
        // runtime's own code (memory.js, stopOverCeiling): over the ceiling, not a bug.
        if (cell.reason !== "memory") throw err;
        text = null;
      }
      if (link.fatal) return null; // already answered by the fatal handler (boot.js)
      // Over the ceiling while awaiting, and the KeyboardInterrupt landed in the event
      // loop's own callback, not the cell: the worker is replaced all the same.
      if (text === null) return { status: "error", result: null, figures: [], files: [], error: this.memoryError("The cell went over"), restartNeeded: true };
      result = JSON.parse(text);
    } finally {
      cell.deadline = Infinity;
      memory.cellRuns = false;
      cell.stop = null;
    }
    // What the page stores is what this worker saw change, whatever the kernel says.
    const { files, deleted } = outputChanges(outputsBefore, outputState(pyodide));
    // The kernel's own view adds what only Python reads: the cells that would run as
    // formulas (_formulas.py), kept by path.
    const flagged = new Map((Array.isArray(result.files) ? result.files : []).filter((/** @type {any} */ f) => f && f.formulas).map((/** @type {any} */ f) => [f.path, f.formulas]));
    result.files = files.map((f) => (flagged.has(f.path) ? { ...f, formulas: flagged.get(f.path) } : f));
    result.outputsDeleted = deleted;
    await rest.finish(result);
    if (!sql.duck && !sql.failure && result.error && String(result.error.message).includes(SQL_NOT_LOADED)) {
      // SQL from a cell that did not name run_sql (a function of an earlier cell): load
      // DuckDB now; the message says to run the cell again.
      await rest.installNow(["pyarrow"]);
      await sql.load();
    }
    // A cell whose last JS call made the buffers ran no Python after it to be stopped;
    // an interrupt that came after the cell's last line landed in the kernel's code.
    if (cell.reason === "memory" || (cell.reason === null && memory.overCeiling())) {
      result.status = "error";
      result.error = { ...this.memoryError("The cell went over"), traceback: result.error ? result.error.traceback : "", line: result.error ? result.error.line : null };
      result.restartNeeded = true;
    } else if (result.status === "interrupted" && cell.reason === "timeout") {
      result.status = "timeout";
      result.error.message = `The cell ran longer than ${Math.round((msg.timeoutMs || 60000) / 1000)} s and was interrupted; variables are kept. Make it faster, or run it with a larger timeoutMs.`;
    }
    return result;
  }

  /** The memory interrupt is raised where Python runs next: in an awaiting cell that
   * may be the event loop's own callback, which swallows it, and the cell would wait
   * until the page's watchdog ends it as a timeout. Give the cell a second to fail,
   * then end its run as over the ceiling. */
  memoryInterrupted() {
    const { cell } = this;
    const run = cell.id;
    setTimeout(() => {
      if (cell.id === run && cell.stop) cell.stop();
    }, 1000);
  }

  /** The MemoryError of a run over the ceiling. @param {string} what */
  memoryError(what) {
    const { memory } = this;
    return {
      type: "MemoryError",
      message: `${what} the sandbox memory ceiling (${Math.round(memory.limit / 1048576)} MB; ${memory.describe()}). The sandbox is restarted: variables are lost, files under /data are kept. For a big file, compute in SQL with run_sql(), which scans the file without loading it (every file under /data is a table by its name), or read only the columns you need with read_table(path, columns=[...]); otherwise keep fewer copies.`,
      traceback: "",
      line: null,
    };
  }

  /** @param {{path: string, output?: boolean}} msg */
  readFile(msg) {
    if (msg.output) return readOutput(this.pyodide.FS, msg); // for the page to keep: only a file a cell wrote
    const data = this.pyodide.FS.readFile(msg.path); // Uint8Array
    return /** @type {[any, Transferable[]]} */ ([{ status: "ok", path: msg.path, size: data.length, data }, [data.buffer]]);
  }

  /** @param {string} path */
  ensureDir(path) {
    const FS = this.pyodide.FS;
    const parts = path.split("/").filter(Boolean);
    let dir = "";
    for (const part of parts.slice(0, -1)) {
      dir += "/" + part;
      if (!FS.analyzePath(dir).exists) FS.mkdir(dir);
    }
  }

  /** @param {{path: string, file: Blob}} msg */
  mountFile(msg) {
    // WORKERFS reads the File lazily, slice by slice: a large upload is never copied
    // whole into the page's or the worker's memory. Each File gets its own mount
    // point; /data/<name> is a symlink to it, so several uploads sit side by side.
    const FS = this.pyodide.FS;
    const mountPoint = `/mnt/upload-${++this.mounts}`;
    const name = msg.path.split("/").pop();
    FS.mkdirTree(mountPoint);
    FS.mount(FS.filesystems.WORKERFS, { blobs: [{ name, data: msg.file }] }, mountPoint);
    this.ensureDir(msg.path);
    if (FS.analyzePath(msg.path).exists) FS.unlink(msg.path);
    FS.symlink(`${mountPoint}/${name}`, msg.path);
    this.sql.uploads.set(`${mountPoint}/${name}`, msg.file);
    return { status: "ok", path: msg.path, size: msg.file.size };
  }

  /** @param {{path: string, data: Uint8Array}} msg */
  writeFile(msg) {
    // In memory, so under the ceiling like a cell's files: restored outputs included.
    const { memory } = this;
    const FS = this.pyodide.FS;
    const size = msg.data.length;
    if (memory.inUse() + size > memory.limit) {
      memory.recount();
      if (memory.inUse() + size > memory.limit) return { status: "error", path: msg.path, message: `${msg.path} (${Math.round(size / 1048576).toLocaleString("en")} MB) would put the sandbox over its memory ceiling (${Math.round(memory.limit / 1048576)} MB; ${memory.describe()}), so it was not written. Upload big files instead (they are mounted, not copied), or delete files under /output you no longer need.` };
    }
    this.ensureDir(msg.path);
    if (FS.analyzePath(msg.path).exists) FS.unlink(msg.path);
    FS.writeFile(msg.path, msg.data);
    memory.countFile(FS.lookupPath(msg.path).node);
    return { status: "ok", path: msg.path, size };
  }

  /** @param {{path: string}} msg */
  deleteFile(msg) {
    this.pyodide.FS.unlink(msg.path);
    return { status: "ok", path: msg.path };
  }

  reset() {
    return JSON.parse(this.host.reset());
  }

  /** @param {{dir?: string}} msg */
  listFiles(msg) {
    return JSON.parse(this.host.list_files(msg.dir || "/"));
  }

  /** @param {{path: string}} msg */
  async inspect(msg) {
    if (ARROW_FILES.test(String(msg.path))) await this.rest.installNow(["pyarrow"]);
    return JSON.parse(this.host.inspect(msg.path));
  }
}
