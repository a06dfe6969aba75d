"use strict";
// DuckDB for run_sql (PROTOCOL.md §3, "SQL"): DuckDB-wasm's synchronous ("blocking")
// bindings in this worker, beside Pyodide, so Python calls them directly. Loaded on
// the first cell that runs SQL, never at boot: its two files (the bindings, the wasm)
// are asked of the page then. Uploads are handed to it as the same disk-backed File
// objects the file system mounts, read in place with FileReaderSync: no copy.
// It has no network: extension installing and loading are off, and the frame's CSP
// refuses every request it could make.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell except the module below.
/* global loadScript */
/* exported SqlEngine, SQL_NOT_LOADED */

// A cell that names these runs SQL: DuckDB is loaded before it starts.
const SQL_USES = /\b(?:run_sql|duckdb)\b|\bread_table\s*\([^]*?\b(?:columns|where)\s*=/;
// What run_sql raises when DuckDB is not loaded yet (py/reckon/kernel/_sql.py).
const SQL_NOT_LOADED = "DuckDB loads on the first cell that calls run_sql";
// What the bridge throws when the cell's deadline or interrupt() stopped a query.
const SQL_STOPPED = "the query was stopped";
const BROWSER_FILEREADER = 2; // DuckDBDataProtocol: a File read with FileReaderSync

/** DuckDB, once a cell first runs SQL, and the uploads it reads in place. */
class SqlEngine {
  /** @param {{files: RuntimeFiles, link: PageLink, cell: CellRun, memory: WorkerMemory}} parts */
  constructor({ files, link, cell, memory }) {
    this.files = files;
    this.link = link;
    this.cell = cell;
    this.memory = memory;
    /** @type {any} the interpreter, once booted */
    this.pyodide = null;
    /** @type {string[]} DuckDB's files, handed over by the page only when asked for */
    this.sqlFiles = [];
    this.memoryLimitMB = 0; // DuckDB's memory_limit; 0: half the sandbox's ceiling
    /** @type {{db: any, conn: number, version: string, limitMB: number} | null} DuckDB, once a cell first ran SQL */
    this.duck = null;
    /** @type {string | null} why DuckDB could not be loaded */
    this.failure = null;
    /** @type {Map<string, Blob>} each upload's File by its path in the mount (read in place) */
    this.uploads = new Map();
  }

  /** @param {string} code */
  needed(code) {
    return !this.duck && this.sqlFiles.length > 0 && SQL_USES.test(code);
  }

  // The page holds these files back until asked (PROTOCOL.md §3, need-files `files`).
  async runtime() {
    const files = this.files;
    const missing = this.sqlFiles.filter((name) => !files.runtime[name]);
    if (!missing.length) return;
    const arrived = Promise.all(missing.map((name) => files.arrival(name)));
    this.link.needFiles(missing);
    await arrived;
    const failed = missing.find((name) => !files.runtime[name]);
    if (failed) throw new Error(`${failed} could not be loaded: ${files.refused.get(failed) || "the page did not send it"}`);
  }

  /** Loads DuckDB once; on failure the reason is kept, and run_sql reports it. */
  async load() {
    if (this.duck || this.failure) return;
    const pyodide = this.pyodide;
    try {
      await this.runtime();
      const script = this.sqlFiles.find((name) => name.endsWith(".js"));
      const wasm = this.sqlFiles.find((name) => name.endsWith(".wasm"));
      /** @type {any} */
      const lib = loadScript(script ? this.files.runtime[script] : undefined, "__reckonDuckDB");
      if (!lib) throw new Error(`${script} did not load`);
      // Only the build with WebAssembly exceptions is shipped; a browser without them
      // is sent to the name "mvp", which is not in the build, and says so.
      const indexURL = this.files.indexURL;
      const bundles = { mvp: { mainModule: indexURL + "duckdb-mvp.wasm", mainWorker: null }, eh: { mainModule: indexURL + wasm, mainWorker: null } };
      const db = await lib.createDuckDB(bundles, new lib.VoidLogger(), lib.BROWSER_RUNTIME);
      await db.instantiate(() => {});
      sealRuntime(lib.BROWSER_RUNTIME);
      db.open({ path: ":memory:", query: { castBigIntToDouble: false } });
      const conn = db.connect().useUnsafe((/** @type {unknown} */ _bindings, /** @type {number} */ id) => id);
      const limitMB = this.memoryLimitMB || Math.floor(this.memory.limit / 1048576 / 2);
      // No network and no extensions beyond those built in: DuckDB reads only files of
      // these folders (registered by the bridge below) and loads no extension; then the
      // settings are locked, so a cell cannot turn them back on or raise the memory limit.
      for (const statement of [
        "SET temp_directory = ''", // nothing spills to (memory-backed) files: over the limit is an error
        "SET allowed_directories = ['/data/', '/output/', '/tmp/']",
        "SET enable_external_access = false",
        "SET autoinstall_known_extensions = false",
        "SET autoload_known_extensions = false",
        "SET allow_community_extensions = false",
        `SET memory_limit = '${limitMB}MB'`,
        "SET threads = 1",
        "SET preserve_insertion_order = false",
        "SET lock_configuration = true",
      ]) {
        db.runQuery(conn, statement);
      }
      this.duck = { db, conn, version: db.getVersion(), limitMB };
      pyodide.registerJsModule("_reckon_duckdb", this.bridge(this.duck));
    } catch (err) {
      this.failure = String((err && /** @type {any} */ (err).message) || err).slice(0, 500);
      pyodide.registerJsModule("_reckon_duckdb", { failure: this.failure });
    }
  }

  /** What Python sees as the module _reckon_duckdb (py/reckon/kernel/_sql_engines.py):
   * plain functions, so a cell that holds the module reaches nothing else of the worker.
   * @param {{db: any, conn: number, version: string, limitMB: number}} duck */
  bridge({ db, conn, version, limitMB }) {
    const { cell, uploads } = this;
    const FS = this.pyodide.FS;
    return {
      failure: null,
      version: () => version,
      memoryLimitMB: () => limitMB,
      /** A query's result as Arrow IPC stream bytes; throws DuckDB's message. Run step by
       * step, so the cell's deadline and interrupt() cancel it (then it throws SQL_STOPPED
       * and Python raises KeyboardInterrupt): no Python runs while DuckDB computes.
       * @param {unknown} text */
      query(text) {
        let header = db.startPendingQuery(conn, String(text), false);
        while (header === null) {
          const stop = cell.due();
          if (stop) {
            db.cancelPendingQuery(conn);
            if (cell.reason === null) cell.reason = stop; // the run's result says which
            throw new Error(SQL_STOPPED);
          }
          header = db.pollPendingQuery(conn);
        }
        const parts = [header];
        // Then the record batches, until an empty (or null) one.
        for (let batch; (batch = db.fetchQueryResults(conn)) && batch.length; ) parts.push(batch);
        if (parts.length === 1) return header;
        const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
        let at = 0;
        for (const part of parts) {
          bytes.set(part, at);
          at += part.length;
        }
        return bytes;
      },
      /** Makes the file at `path` readable by DuckDB under that same name: an upload as
       * its File (read in place), a file written in the sandbox as a copy of its bytes.
       * @param {unknown} name */
      register(name) {
        const path = String(name);
        const real = FS.lookupPath(path, { follow: true }).path;
        const file = uploads.get(real);
        if (file) {
          db.registerFileHandle(path, file, BROWSER_FILEREADER, true);
          return "file";
        }
        db.registerFileBuffer(path, FS.readFile(path));
        return "copy";
      },
      /** A table made from Arrow IPC stream bytes (a file DuckDB cannot read itself).
       * @param {unknown} name @param {any} bytes */
      insertArrow(name, bytes) {
        const data = bytes && typeof bytes.toJs === "function" ? bytes.toJs() : bytes;
        db.insertArrowFromIPCStream(conn, data, { name: String(name), create: true });
      },
    };
  }
}

/** DuckDB's compiled code calls `globalThis.DUCKDB_RUNTIME.<function>(Module, …)`: a
 * cell that swapped one through `js` would be handed DuckDB's module, and could reopen
 * the database its settings were locked on. The functions and the global stay as they
 * are (their data fields change as files come and go). @param {any} runtime */
function sealRuntime(runtime) {
  for (const key of Object.keys(runtime)) {
    if (typeof runtime[key] === "function") Object.defineProperty(runtime, key, { writable: false, configurable: false });
  }
  Object.defineProperty(globalThis, "DUCKDB_RUNTIME", { value: runtime, writable: false, configurable: false });
}
