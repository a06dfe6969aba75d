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

// A cell that names these runs SQL: DuckDB is loaded before it starts.
const SQL_USES = /\b(?:run_sql|duckdb)\b|\bread_table\s*\([^]*?\b(?:columns|where)\s*=/;
// What run_sql raises when DuckDB is not loaded yet (py/reckon/kernel/_sql.py).
const SQL_NOT_LOADED = "DuckDB loads on the first cell that calls run_sql";
// What the bridge throws when the cell's deadline or interrupt() stopped a query.
const SQL_STOPPED = "the query was stopped";
const BROWSER_FILEREADER = 2; // DuckDBDataProtocol: a File read with FileReaderSync

function sqlNeeded(code) {
  return !duck && sqlFiles.length > 0 && SQL_USES.test(code);
}

// The page holds these files back until asked (PROTOCOL.md §3, need-files `files`).
async function sqlRuntime() {
  const missing = sqlFiles.filter((name) => !runtime[name]);
  if (!missing.length) return;
  const arrived = Promise.all(missing.map((name) => new Promise((resolve) => waiting.set(name, [...(waiting.get(name) || []), resolve]))));
  post({ type: "need-files", id: currentRequest, files: missing });
  await arrived;
  const failed = missing.find((name) => !runtime[name]);
  if (failed) throw new Error(`${failed} could not be loaded: ${refused.get(failed) || "the page did not send it"}`);
}

/** Loads DuckDB once; on failure the reason is kept, and run_sql reports it. */
async function loadDuckDB() {
  if (duck || duckFailure) return;
  try {
    await sqlRuntime();
    const script = sqlFiles.find((name) => name.endsWith(".js"));
    const wasm = sqlFiles.find((name) => name.endsWith(".wasm"));
    /** @type {any} */
    const lib = loadScript(runtime[script], "__reckonDuckDB");
    if (!lib) throw new Error(`${script} did not load`);
    // Only the build with WebAssembly exceptions is shipped; a browser without them
    // is sent to the name "mvp", which is not in the build, and says so.
    const bundles = { mvp: { mainModule: indexURL + "duckdb-mvp.wasm", mainWorker: null }, eh: { mainModule: indexURL + wasm, mainWorker: null } };
    const db = await lib.createDuckDB(bundles, new lib.VoidLogger(), lib.BROWSER_RUNTIME);
    await db.instantiate(() => {});
    db.open({ path: ":memory:", query: { castBigIntToDouble: false } });
    const conn = db.connect().useUnsafe((_bindings, id) => id);
    const limitMB = sqlMemoryLimitMB || Math.floor(memoryLimit / 1048576 / 2);
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
    duck = { db, conn, version: db.getVersion(), limitMB };
    pyodide.registerJsModule("_reckon_duckdb", sqlBridge);
  } catch (err) {
    duckFailure = String((err && err.message) || err).slice(0, 500);
    pyodide.registerJsModule("_reckon_duckdb", { failure: duckFailure });
  }
}

// What Python sees as the module _reckon_duckdb (py/reckon/kernel/_sql_engines.py).
const sqlBridge = {
  failure: null,
  version: () => duck.version,
  memoryLimitMB: () => duck.limitMB,
  /** A query's result as Arrow IPC stream bytes; throws DuckDB's message. Run step by
   * step, so the cell's deadline and interrupt() cancel it (then it throws SQL_STOPPED
   * and Python raises KeyboardInterrupt): no Python runs while DuckDB computes. */
  query(text) {
    const { db, conn } = duck;
    let header = db.startPendingQuery(conn, String(text), false);
    while (header === null) {
      const stop = shared && Atomics.load(shared, 0) === 2 ? "interrupted" : performance.now() > deadline ? "timeout" : null;
      if (stop) {
        db.cancelPendingQuery(conn);
        if (interruptReason === null) interruptReason = stop; // the run's result says which
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
   * its File (read in place), a file written in the sandbox as a copy of its bytes. */
  register(path) {
    path = String(path);
    const real = pyodide.FS.lookupPath(path, { follow: true }).path;
    const file = uploads.get(real);
    if (file) {
      duck.db.registerFileHandle(path, file, BROWSER_FILEREADER, true);
      return "file";
    }
    duck.db.registerFileBuffer(path, pyodide.FS.readFile(path));
    return "copy";
  },
  /** A table made from Arrow IPC stream bytes (a file DuckDB cannot read itself). */
  insertArrow(name, bytes) {
    const data = bytes && typeof bytes.toJs === "function" ? bytes.toJs() : bytes;
    duck.db.insertArrowFromIPCStream(duck.conn, data, { name: String(name), create: true });
  },
};
