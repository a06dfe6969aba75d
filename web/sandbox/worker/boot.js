"use strict";
// Boot: Pyodide from the handed-over files, restored from a snapshot or cold, its
// interrupt buffer and fatal-error hook; or, with config.makeSnapshot, only a snapshot.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.
/* exported bootInterpreter, loadScript */

/** Pyodide polls this "signal buffer" every few bytecodes. A getter lets the worker
 * interrupt itself at the deadline without SharedArrayBuffer; when the page could
 * share one (cross-origin isolated), interrupt() writes into it. Pyodide keeps it, so
 * it holds nothing but the getter. @param {SandboxWorker} worker */
function signalBuffer(worker) {
  const { cell, memory } = worker;
  return {
    get 0() {
      if (cell.reason === null) {
        const due = cell.due();
        if (due) cell.reason = due;
        else if (memory.overCeiling()) {
          cell.reason = "memory";
          worker.memoryInterrupted();
        }
        else return 0;
        return 2; // SIGINT, once per run: a cell that swallows it is ended by the watchdog
      }
      return 0;
    },
    set 0(_value) {},
  };
}

// Pyodide calls this when the interpreter cannot go on: os._exit(), a wasm stack
// overflow, a refused lazy file read. The run that was going on never returns, so
// it is answered here, truthfully, and the page replaces the worker. A cell can reach
// the function (pyodide._api), so it holds nothing but its closure.
/** @param {SandboxWorker} worker */
function fatalHandler(worker) {
  const { link, cell } = worker;
  return (/** @type {any} */ err) => {
    const exited = err && err.name === "Exit";
    const code = exited && typeof err.status === "number" ? err.status : null;
    if (!exited && cell.reason === "memory") {
      // A counted constructor refused to allocate past the ceiling inside the runtime's
      // own code (memory.js, stopOverCeiling): say that, not "crashed".
      link.fatal = true;
      link.post({ type: "reply", id: link.request, status: "error", error: worker.memoryError("The cell went over"), restartNeeded: "crash" });
      return;
    }
    const message = exited
      ? `The cell ended the Python interpreter itself (exit status ${code}, e.g. os._exit()), so the sandbox was restarted: variables are lost, files under /data are kept. Use sys.exit() or return from the cell instead.`
      : `The Python interpreter crashed (${String((err && err.name) || "Error")}: ${String((err && err.message) || err).slice(0, 300)}), so the sandbox was restarted: variables are lost, files under /data are kept.`;
    link.fatal = true;
    link.post({
      type: "reply",
      id: link.request,
      status: "error",
      error: { type: exited ? "InterpreterExit" : "SandboxCrash", message, traceback: "", line: null },
      restartNeeded: "crash",
    });
  };
}

/** Boot the interpreter into `worker` (its `boot` call).
 * @param {SandboxWorker} worker @param {{runtime: Record<string, Blob>, config: Record<string, any>}} msg */
async function bootInterpreter(worker, msg) {
  const { files, rest, sql, cell, memory, link } = worker;
  const started = performance.now();
  const runtime = (files.runtime = msg.runtime);
  const config = msg.config;
  const indexURL = (files.indexURL = config.indexURL);
  files.lazy = new Set((config.lazyFiles || []).filter((/** @type {string} */ name) => !runtime[name]));
  await rest.readLock(config.lazyPackages || []);
  memory.limit = (config.memoryLimitMB || 2048) * 1024 * 1024;
  sql.sqlFiles = config.sqlFiles || [];
  sql.memoryLimitMB = config.sqlMemoryLimitMB || 0;
  if (config.interruptBuffer) cell.shared = new Int32Array(config.interruptBuffer);
  // Where the frame answers the tool calls made without await (tools.js): in this
  // closure only. (Not cross-origin isolated, a worker has no SharedArrayBuffer at all.)
  if (config.toolReplies && self.crossOriginIsolated) worker.tools.replies = config.toolReplies;
  // Without JSPI (stack switching), as in Node.js, Firefox and Safari: with it Pyodide
  // boots with another function-table layout, and the build's snapshot (made under
  // Node.js) would not fit. No cell needs it: the kernel awaits with runPythonAsync.
  delete WebAssembly.Suspending;
  delete WebAssembly.Suspender;
  for (const name of ["pyodide.asm.js", "pyodide.js"]) {
    const url = URL.createObjectURL(runtime[name]);
    importScripts(url); // pyodide.asm.js first, so loadPyodide skips its own script load
    URL.revokeObjectURL(url);
  }
  // workerStart is in epoch ms here: the page turns it into its own clock (bootMarks).
  /** @type {Record<string, any>} */
  const marks = { scripts: performance.now() - started, workerStart: performance.timeOrigin + started };
  const options = {
    indexURL,
    lockFileURL: indexURL + "pyodide-lock.json",
    stdout: (/** @type {string} */ text) => link.post({ type: "stream", id: cell.id, name: "stdout", text: text + "\n" }),
    stderr: (/** @type {string} */ text) => link.post({ type: "stream", id: cell.id, name: "stderr", text: text + "\n" }),
    env: { HOME: "/home/pyodide", MPLBACKEND: "Agg" },
  };
  rest.installer = loadScript(config.installSource, "__reckonInstall");
  // Warm start (web/sandbox/snapshot/): a snapshot the page kept from an earlier visit.
  const snapshotLib = loadScript(config.snapshotSource, "__reckonSnapshot");
  if (config.makeSnapshot) return makeSnapshotAndEnd(snapshotLib, config, options);
  /** @type {{restored: boolean, error: string | null}} */
  const snapshot = { restored: false, error: null };
  /** @type {any} */
  let pyodide = null;
  if (snapshotLib && config.snapshot) {
    try {
      const { meta, snap, fs } = config.snapshot;
      config.snapshot = null; // the blobs are read once; keep no reference to them
      // The heap is read while the main module compiles (a promise, not awaited here);
      // the file image stays a Blob, read as Python opens its files.
      const images = { meta, snap: snap.arrayBuffer(), fs };
      marks.restore = {};
      const smoke = meta.checkedIn !== navigator.userAgent; // passed it here before: skip
      pyodide = await snapshotLib.restoreSnapshot({ loadPyodide, options, snapshot: images, wasm: self.fetch(indexURL + "pyodide.asm.wasm"), marks: marks.restore, smoke });
      snapshot.restored = true;
    } catch (err) {
      // Pyodide's own module is bad (a spoiled copy): a cold boot would only hang on it.
      if (err instanceof WebAssembly.CompileError) throw err;
      snapshot.error = String((err && /** @type {any} */ (err).message) || err).slice(0, 500);
      pyodide = null; // boot cold below, with the same results
    }
  }
  marks.interpreter = performance.now() - started;
  if (!snapshot.restored) {
    // The page held the package files back for the snapshot: ask for them now.
    const missing = (config.heldBack || []).filter((/** @type {string} */ name) => !runtime[name]);
    for (const name of missing) files.lazy.add(name);
    if (missing.length) link.needFiles();
    pyodide = await loadPyodide(options);
    marks.interpreter = performance.now() - started;
    await pyodide.loadPackage(config.packages, { messageCallback: () => {}, checkIntegrity: false });
    marks.packages = performance.now() - started;
    await unpackBytecode(pyodide, indexURL, "pycache-eager.zip");
    marks.bytecode = performance.now() - started;
  }
  worker.setInterpreter(pyodide);
  pyodide.setInterruptBuffer(signalBuffer(worker));
  // Not writable: a cell cannot unhook it to turn a crash back into a silent hang.
  Object.defineProperty(pyodide._api, "on_fatal", { value: fatalHandler(worker), writable: false, configurable: false });
  const host = (worker.host = pyodide.pyimport("reckon.kernel._host"));
  host.start((/** @type {string} */ name, /** @type {string} */ text) => link.post({ type: "stream", id: cell.id, name, text }), config.kernel || {});
  if (config.warm !== false) host.warm();
  worker.tools.install(pyodide);
  memory.start(pyodide);
  marks.imports = performance.now() - started;
  const versions = JSON.parse(host.versions());
  return { status: "ok", versions, ms: performance.now() - started, marks, snapshot };
}

// A helper script the page handed over as a Blob (web/sandbox/snapshot/,
// web/sandbox/install.js): it leaves one object on `self`, taken from there at once.
/** @param {unknown} source @param {string} name */
function loadScript(source, name) {
  if (!(source instanceof Blob)) return null;
  const url = URL.createObjectURL(source);
  try {
    importScripts(url);
  } catch {
    return null; // a broken helper: the worker goes on without it
  } finally {
    URL.revokeObjectURL(url);
  }
  const lib = /** @type {any} */ (self)[name];
  delete (/** @type {any} */ (self)[name]); // before any cell runs: only this closure keeps it
  return lib || null;
}

// A worker started only to make the snapshot (PROTOCOL.md §3, frame-snapshot): it runs
// no cell, hands the buffers to the page, and ends.
/** @param {any} lib @param {Record<string, any>} config @param {{env: Record<string, string>}} options */
async function makeSnapshotAndEnd(lib, config, options) {
  if (!lib) return { status: "error", message: "no snapshot module" };
  try {
    const out = await lib.makeSnapshot({ loadPyodide, indexURL: config.indexURL, packages: config.packages, env: options.env, fetch: self.fetch });
    return /** @type {[any, Transferable[]]} */ ([{ status: "ok", snapshot: out }, [out.snap, out.fs]]);
  } finally {
    setTimeout(() => self.close(), 0); // after the reply is posted
  }
}

// Bytecode compiled at build time (sitebuild/precompile.mjs): unpacked over
// site-packages so imports skip compiling from source. Absent bundle: no-op.
/** @param {any} pyodide @param {string} indexURL @param {string} name */
async function unpackBytecode(pyodide, indexURL, name) {
  const resp = await self.fetch(indexURL + name);
  if (!resp.ok) return;
  pyodide.unpackArchive(await resp.arrayBuffer(), "zip", { extractDir: "/" });
}
