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
/* global loadScript, DUCKDB_THREAD_WORKER */
/* exported SqlEngine, SQL_NOT_LOADED */

// A cell that names these runs SQL: DuckDB is loaded before it starts.
const SQL_USES = /\b(?:run_sql|duckdb)\b|\bread_table\s*\([^]*?\b(?:columns|where)\s*=/;
// What run_sql raises when DuckDB is not loaded yet (py/reckon/kernel/_sql.py).
const SQL_NOT_LOADED = "DuckDB loads on the first cell that calls run_sql";
// What the bridge throws when the cell's deadline or interrupt() stopped a query.
const SQL_STOPPED = "the query was stopped";
const BROWSER_FILEREADER = 2; // DuckDBDataProtocol: a File read with FileReaderSync
// DuckDB's threads each hold a worker, a copy of the wasm instance's JS side and their
// own buffers: more than this many buys little on a laptop and costs memory.
const SQL_MAX_THREADS = 8;
const SQL_THREADS_START_MS = 30_000;

/** The build of DuckDB this worker runs (sitebuild/_duckdb.py ships both): the one with
 * threads where shared memory is allowed (a cross-origin isolated frame: `reckon serve`),
 * else the single-threaded one.
 * @param {string[]} names the site's DuckDB files
 * @returns {{threads: number, script: string, wasm: string, pthread: string | null} | null} */
function sqlBuild(names) {
  const named = (/** @type {string} */ end) => names.find((name) => name.endsWith(end));
  const [script, wasm, pthread] = [named("-coi.js"), named("-coi.wasm"), named("-coi-pthread.js")];
  const shared = self.crossOriginIsolated === true && typeof SharedArrayBuffer === "function";
  const cores = Math.min(Math.max(1, navigator.hardwareConcurrency || 1), SQL_MAX_THREADS);
  if (shared && cores > 1 && script && wasm && pthread) return { threads: cores, script, wasm, pthread };
  const [single, ehWasm] = [named("-blocking.js"), named("-eh.wasm")];
  return single && ehWasm ? { threads: 1, script: single, wasm: ehWasm, pthread: null } : null;
}

/** Waits until every thread DuckDB started runs in its worker: Emscripten starts one
 * by making a worker and posting it the wasm module, and the worker says "loaded"
 * (which sets `loaded` on it) through this worker's event loop. No threads: no wait.
 * @param {any} db */
async function threadsStarted(db) {
  const pool = db.mod && db.mod.PThread;
  const deadline = performance.now() + SQL_THREADS_START_MS;
  while (pool && pool.runningWorkers.some((/** @type {any} */ worker) => !worker.loaded)) {
    if (performance.now() > deadline) throw new Error(`DuckDB's threads did not start within ${SQL_THREADS_START_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

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
    /** @type {{db: any, conn: number, version: string, limitMB: number, threads: number} | null} DuckDB, once a cell first ran SQL */
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
  /** @param {string[]} names */
  async runtime(names) {
    const files = this.files;
    const missing = names.filter((name) => !files.runtime[name]);
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
      const build = sqlBuild(this.sqlFiles);
      if (!build) throw new Error("this site ships no DuckDB build");
      const names = [build.script, build.wasm, ...(build.pthread ? [build.pthread] : [])];
      await this.runtime(names);
      const db = build.pthread ? await this.threaded(build) : await this.single(build);
      // The build with threads starts its threads as it opens (4 unless told): each a
      // worker that starts only once this worker returns to its event loop, so nothing
      // may wait on them (a query, or SET threads joining them) before they are up.
      db.open({ path: ":memory:", maximumThreads: build.threads, query: { castBigIntToDouble: false } });
      await threadsStarted(db);
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
        `SET threads = ${build.threads}`,
        "SET preserve_insertion_order = false",
        "SET lock_configuration = true",
      ]) {
        db.runQuery(conn, statement);
      }
      await threadsStarted(db);
      this.duck = { db, conn, version: db.getVersion(), limitMB, threads: build.threads };
      pyodide.registerJsModule("_reckon_duckdb", this.bridge(this.duck));
    } catch (err) {
      this.failure = String((err && /** @type {any} */ (err).message) || err).slice(0, 500);
      pyodide.registerJsModule("_reckon_duckdb", { failure: this.failure });
    }
  }

  /** The single-threaded build: the package's synchronous bindings.
   * @param {{script: string, wasm: string}} build */
  async single({ script, wasm }) {
    /** @type {any} */
    const lib = loadScript(this.files.runtime[script], "__reckonDuckDB");
    if (!lib) throw new Error(`${script} did not load`);
    // Only the build with WebAssembly exceptions is shipped; a browser without them
    // is sent to the name "mvp", which is not in the build, and says so.
    const indexURL = this.files.indexURL;
    const bundles = { mvp: { mainModule: indexURL + "duckdb-mvp.wasm", mainWorker: null }, eh: { mainModule: indexURL + wasm, mainWorker: null } };
    const db = await lib.createDuckDB(bundles, new lib.VoidLogger(), lib.BROWSER_RUNTIME);
    await db.instantiate(() => {});
    return db;
  }

  /** The build with threads: the same synchronous calls on the bindings class of the
   * package's threaded worker (sitebuild/_duckdb.py takes it out of its dispatcher).
   * Each of DuckDB's threads runs in a worker of this worker's own, from a blob: URL
   * (the frame's CSP allows workers from blob: only) that the threads started later
   * (SET threads) need too, so it is kept for the worker's life.
   * @param {{script: string, wasm: string, pthread: string | null}} build */
  async threaded({ script, wasm, pthread }) {
    /** @type {any} */
    const make = loadScript(this.files.runtime[script], "__reckonDuckDBThreads");
    const lib = typeof make === "function" ? make(DUCKDB_THREAD_WORKER) : null;
    if (!lib || !pthread) throw new Error(`${script} did not load`);
    const threadURL = URL.createObjectURL(this.files.runtime[pthread]);
    const logger = { log() {} };
    const db = new lib.Bindings(logger, lib.runtime, this.files.indexURL + wasm, threadURL);
    await db.instantiate(() => {});
    return db;
  }

  /** What Python sees as the module _reckon_duckdb (py/reckon/kernel/_sql_engines.py):
   * plain functions, so a cell that holds the module reaches nothing else of the worker.
   * @param {{db: any, conn: number, version: string, limitMB: number, threads: number}} duck */
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
