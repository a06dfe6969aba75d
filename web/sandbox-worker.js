"use strict";
// The sandbox worker: Pyodide + the scientific stack + reckon.kernel. It runs the
// model's code and holds nothing worth stealing. Message shapes: PROTOCOL.md §3.
//
// It boots from Blobs handed over by the page (through the frame), so it never
// needs the network: Pyodide's own fetches of its files are answered from memory,
// and every other request is refused by the frame's Content-Security-Policy.

// All of it in one closure: top-level let/const/function of a classic worker script
// would be reachable from a cell through js.eval("post(...)"); closure variables are not.
(() => {
"use strict";
let pyodide = null;
let host = null; // the Python module reckon.kernel._host
let runtime = {};
let indexURL = "";
let currentRun = 0;
let deadline = Infinity;
let interruptReason = null;
/** @type {Int32Array | null} */
let shared = null; // Int32Array over a SharedArrayBuffer, when the page could make one
let memoryLimit = 2048 * 1024 * 1024;
let lazyPackages = [];
let installer = null; // web/sandbox-install.js, when the page handed it over

const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };

let lazyFiles = new Set(); // named by the lock, still on their way from the page
const waiting = new Map(); // file name -> [resolve]
const refused = new Map(); // file name -> why the page could not fetch it

async function serveRuntime(url) {
  const name = decodeURIComponent(url.slice(indexURL.length).split(/[?#]/)[0]);
  if (!runtime[name] && lazyFiles.has(name)) {
    // The page may be holding it back (the boot's package files, or the rest of the
    // stack until the sandbox is idle): ask for it now.
    post({ type: "need-files", id: currentRequest });
    await new Promise((resolve) => waiting.set(name, [...(waiting.get(name) || []), resolve]));
  }
  const blob = runtime[name];
  if (!blob && refused.has(name)) return new Response(`${name} could not be loaded: ${refused.get(name)}`, { status: 503 });
  if (!blob) return new Response(`not in this build: ${name}`, { status: 404 });
  const ext = name.split(".").pop();
  return new Response(blob, { headers: { "Content-Type": MIME[ext] || "application/octet-stream" } });
}

// Nothing a cell starts may outlive it: no worker of its own, which would keep running
// after the run, a restart or reset() (the second outside attack). Nothing here needs
// one, and a worker has no other realm to fetch the constructors back from.
for (const name of ["Worker", "SharedWorker"]) {
  delete self[name];
  Object.defineProperty(self, name, { value: undefined, writable: false, configurable: false });
}

const networkFetch = self.fetch.bind(self);
self.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (indexURL && url.startsWith(indexURL)) return serveRuntime(url);
  return networkFetch(input, init); // refused by CSP: the sandbox has no network
};

// Pyodide polls this "signal buffer" every few bytecodes. A getter lets the worker
// interrupt itself at the deadline without SharedArrayBuffer; when the page could
// share one (cross-origin isolated), interrupt() writes into it.
const signalBuffer = {
  get 0() {
    if (interruptReason === null) {
      if (shared && Atomics.load(shared, 0) === 2) interruptReason = "interrupted";
      else if (performance.now() > deadline) interruptReason = "timeout";
      else if (pyodide && pyodide._module.HEAP8.buffer.byteLength > memoryLimit) interruptReason = "memory";
      else return 0;
      return 2; // SIGINT, once per run: a cell that swallows it is ended by the watchdog
    }
    return 0;
  },
  set 0(_value) {},
};

// Everything goes to the page over a MessagePort that the page created for this
// worker and that arrives with the boot message. It lives only in this closure: a
// cell can call self.postMessage, replace it or dispatch fake "message" events, but
// it cannot write to this port, so it cannot answer for any request (SECURITY.md, F1).
let pagePort = null;
function post(msg, transfer) {
  if (pagePort) pagePort.postMessage(msg, transfer || []);
}

// Pyodide calls this when the interpreter cannot go on: os._exit(), a wasm stack
// overflow, a refused lazy file read. The run that was going on never returns, so
// it is answered here, truthfully, and the page replaces the worker.
function onFatal(err) {
  const exited = err && err.name === "Exit";
  const code = exited && typeof err.status === "number" ? err.status : null;
  const message = exited
    ? `The cell ended the Python interpreter itself (exit status ${code}, e.g. os._exit()), so the sandbox was restarted: variables are lost, files under /data are kept. Use sys.exit() or return from the cell instead.`
    : `The Python interpreter crashed (${String((err && err.name) || "Error")}: ${String((err && err.message) || err).slice(0, 300)}), so the sandbox was restarted: variables are lost, files under /data are kept.`;
  fatal = true;
  post({
    type: "reply",
    id: currentRequest,
    status: "error",
    error: { type: exited ? "InterpreterExit" : "SandboxCrash", message, traceback: "", line: null },
    restartNeeded: "crash",
  });
}
let fatal = false;
let currentRequest = null; // the id of the request being handled (one at a time)

async function boot(msg) {
  const started = performance.now();
  runtime = msg.runtime;
  const config = msg.config;
  indexURL = config.indexURL;
  lazyFiles = new Set((config.lazyFiles || []).filter((name) => !runtime[name]));
  lazyPackages = config.lazyPackages || [];
  await readRestImports();
  memoryLimit = (config.memoryLimitMB || 2048) * 1024 * 1024;
  if (config.interruptBuffer) shared = new Int32Array(config.interruptBuffer);
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
  const marks = { scripts: performance.now() - started, workerStart: performance.timeOrigin + started };
  const options = {
    indexURL,
    lockFileURL: indexURL + "pyodide-lock.json",
    stdout: (text) => post({ type: "stream", id: currentRun, name: "stdout", text: text + "\n" }),
    stderr: (text) => post({ type: "stream", id: currentRun, name: "stderr", text: text + "\n" }),
    env: { HOME: "/home/pyodide", MPLBACKEND: "Agg" },
  };
  installer = loadScript(config.installSource, "__reckonInstall");
  // Warm start (web/sandbox-snapshot.js): a snapshot the page kept from an earlier visit.
  const snapshotLib = loadScript(config.snapshotSource, "__reckonSnapshot");
  if (config.makeSnapshot) return makeSnapshot(snapshotLib, config, options);
  const snapshot = { restored: false, error: null };
  if (snapshotLib && config.snapshot) {
    try {
      const { meta, snap, fs } = config.snapshot;
      config.snapshot = null; // the blobs are read once; keep no reference to them
      // The heap is read while the main module compiles (a promise, not awaited here);
      // the file image stays a Blob, read as Python opens its files.
      const images = { meta, snap: snap.arrayBuffer(), fs };
      marks.restore = {};
      const smoke = meta.checkedIn !== navigator.userAgent; // passed it here before: skip
      pyodide = await /** @type {any} */ (snapshotLib).restoreSnapshot({ loadPyodide, options, snapshot: images, wasm: self.fetch(indexURL + "pyodide.asm.wasm"), marks: marks.restore, smoke });
      snapshot.restored = true;
    } catch (err) {
      // Pyodide's own module is bad (a spoiled copy): a cold boot would only hang on it.
      if (err instanceof WebAssembly.CompileError) throw err;
      snapshot.error = String((err && err.message) || err).slice(0, 500);
      pyodide = null; // boot cold below, with the same results
    }
  }
  marks.interpreter = performance.now() - started;
  if (!snapshot.restored) {
    // The page held the package files back for the snapshot: ask for them now.
    const missing = (config.heldBack || []).filter((name) => !runtime[name]);
    for (const name of missing) lazyFiles.add(name);
    if (missing.length) post({ type: "need-files", id: currentRequest });
    pyodide = await loadPyodide(options);
    marks.interpreter = performance.now() - started;
    await pyodide.loadPackage(config.packages, { messageCallback: () => {}, checkIntegrity: false });
    marks.packages = performance.now() - started;
    await unpackBytecode("pycache-eager.zip");
    marks.bytecode = performance.now() - started;
  }
  pyodide.setInterruptBuffer(signalBuffer);
  // Not writable: a cell cannot unhook it to turn a crash back into a silent hang.
  Object.defineProperty(pyodide._api, "on_fatal", { value: onFatal, writable: false, configurable: false });
  host = pyodide.pyimport("reckon.kernel._host");
  host.start((name, text) => post({ type: "stream", id: currentRun, name, text }), config.kernel || {});
  if (config.warm !== false) host.warm();
  marks.imports = performance.now() - started;
  const versions = JSON.parse(host.versions());
  installRest(); // after a restart every file is already here
  return { status: "ok", versions, ms: performance.now() - started, marks, snapshot };
}

// A helper script the page handed over as a Blob (web/sandbox-snapshot.js,
// web/sandbox-install.js): it leaves one object on `self`, taken from there at once.
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
  const lib = self[name];
  delete self[name]; // before any cell runs: only this closure keeps it
  return lib || null;
}

// A worker started only to make the snapshot (PROTOCOL.md §3, frame-snapshot): it runs
// no cell, hands the buffers to the page, and ends.
async function makeSnapshot(lib, config, options) {
  if (!lib) return { status: "error", message: "no snapshot module" };
  try {
    const out = await lib.makeSnapshot({ loadPyodide, indexURL, packages: config.packages, env: options.env, fetch: self.fetch });
    return [{ status: "ok", snapshot: out }, [out.snap, out.fs]];
  } finally {
    setTimeout(() => self.close(), 0); // after the reply is posted
  }
}

const restWaiters = []; // drainBackground() calls waiting for the rest of the files

function addRuntime(msg) {
  Object.assign(runtime, msg.files);
  for (const name of Array.isArray(msg.failed) ? msg.failed : []) {
    if (runtime[name]) continue;
    refused.set(name, String(msg.message || "it could not be downloaded"));
    for (const resolve of waiting.get(name) || []) resolve();
    waiting.delete(name);
    lazyFiles.delete(name);
  }
  for (const name of Object.keys(msg.files)) {
    for (const resolve of waiting.get(name) || []) resolve();
    waiting.delete(name);
    lazyFiles.delete(name);
  }
  installRest();
  if (lazyFiles.size === 0) for (const resolve of restWaiters.splice(0)) resolve();
}

// Bytecode compiled at build time (scripts/precompile.mjs): unpacked over
// site-packages so imports skip compiling from source. Absent bundle: no-op.
async function unpackBytecode(name) {
  const resp = await self.fetch(indexURL + name);
  if (!resp.ok) return;
  pyodide.unpackArchive(await resp.arrayBuffer(), "zip", { extractDir: "/" });
}

function installRest() {
  if (lazyFiles.size === 0 && lazyPackages.length) {
    // Installed one package at a time while no request waits (see enqueue), so that
    // `pd.read_parquet` or `import scipy` finds it without holding up anyone's cell.
    const names = lazyPackages;
    lazyPackages = [];
    for (const name of names) enqueue(() => installPackage(name).then(() => null), { background: true });
    enqueue(() => unpackBytecode("pycache-rest.zip").then(() => null), { background: true });
  }
}

// web/sandbox-install.js when the page handed it over (it skips loadPackage's clearing
// of every import cache); else, or if it fails, Pyodide's loadPackage, which installs
// over whatever it left.
async function installPackage(name) {
  if (installer && lock) {
    try {
      return await installer.installPackage(pyodide, lock, runtime, name);
    } catch {
      // fall through
    }
  }
  await pyodide.loadPackage([name], { messageCallback: () => {}, checkIntegrity: false });
}

// A cell that failed to import something while the rest of the stack was still being
// installed: finish installing now, and say so (the model, or the person, runs it again).
async function finishBackground(result) {
  const type = result.error && result.error.type;
  if (result.status !== "error" || (type !== "ModuleNotFoundError" && type !== "ImportError")) return;
  // Only for a module the rest of the stack provides ("No module named 'scipy'",
  // pandas' "Missing optional dependency 'pyarrow'"): not for one nobody ships.
  const named = [...String(result.error.message).matchAll(/'([A-Za-z_][\w.]*)'/g)].map((m) => m[1].split(".")[0]);
  if (!named.some((name) => restImports.has(name))) return;
  if (await drainBackground()) result.error.message += " (The sandbox was still installing the rest of its packages in the background when this cell ran; they are installed now: run the cell again.)";
}

// Top-level module names of the packages installed after the start (from the lock).
let restImports = new Set();
let lock = null; // pyodide-lock.json, parsed
async function readRestImports() {
  try {
    lock = JSON.parse(await runtime["pyodide-lock.json"].text());
    restImports = new Set(lazyPackages.flatMap((name) => (lock.packages[name] && lock.packages[name].imports) || []));
  } catch {
    restImports = new Set(); // no hint then; the cell's own error still says what is missing
  }
}

// Runs the queued background work now, inside the current request. True if there was any.
async function drainBackground() {
  if (lazyFiles.size) {
    // The page still holds the rest back: ask for it, and wait until it is all here.
    post({ type: "need-files", id: currentRequest });
    await new Promise((resolve) => restWaiters.push(resolve));
  }
  let any = false;
  for (let i; (i = queue.findIndex((t) => t.background)) >= 0; any = true) await queue.splice(i, 1)[0].task().catch(() => {});
  return any;
}

// Reading these needs pyarrow, from the rest of the stack: it is installed first.
const ARROW_FILES = /\.(parquet|pq|feather|arrow)$/i;

async function run(msg) {
  // Packages a cell imports that are not installed yet (no-op once they are).
  await pyodide.loadPackagesFromImports(msg.code, { messageCallback: () => {}, checkIntegrity: false });
  currentRun = msg.id;
  post({ type: "started", id: msg.id }); // the page's watchdog counts from here
  interruptReason = null;
  if (shared) Atomics.store(shared, 0, 0);
  deadline = performance.now() + (msg.timeoutMs || 60000);
  let result;
  try {
    const text = await host.run(msg.code);
    if (fatal) return null; // already answered by onFatal
    result = JSON.parse(text);
  } finally {
    deadline = Infinity;
  }
  await finishBackground(result);
  if (result.status === "interrupted" && interruptReason === "timeout") {
    result.status = "timeout";
    result.error.message = `The cell ran longer than ${Math.round((msg.timeoutMs || 60000) / 1000)} s and was interrupted; variables are kept. Make it faster, or run it with a larger timeoutMs.`;
  } else if (result.status === "interrupted" && interruptReason === "memory") {
    result.status = "error";
    result.error = {
      type: "MemoryError",
      message: `The cell went over the sandbox memory ceiling (${Math.round(memoryLimit / 1048576)} MB). The sandbox is restarted: variables are lost, files under /data are kept. Process the data in chunks or keep fewer copies.`,
      traceback: result.error ? result.error.traceback : "",
      line: result.error ? result.error.line : null,
    };
    result.restartNeeded = true;
  }
  return result;
}

function readFile(msg) {
  const data = pyodide.FS.readFile(msg.path); // Uint8Array
  return [{ status: "ok", path: msg.path, size: data.length, data }, [data.buffer]];
}

function ensureDir(path) {
  const parts = path.split("/").filter(Boolean);
  let dir = "";
  for (const part of parts.slice(0, -1)) {
    dir += "/" + part;
    if (!pyodide.FS.analyzePath(dir).exists) pyodide.FS.mkdir(dir);
  }
}

let mounts = 0;
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
  return { status: "ok", path: msg.path, size: msg.file.size };
}

function writeFile(msg) {
  ensureDir(msg.path);
  if (pyodide.FS.analyzePath(msg.path).exists) pyodide.FS.unlink(msg.path);
  pyodide.FS.writeFile(msg.path, msg.data);
  return { status: "ok", path: msg.path, size: msg.data.length };
}

function deleteFile(msg) {
  pyodide.FS.unlink(msg.path);
  return { status: "ok", path: msg.path };
}

const handlers = {
  boot,
  run,
  readFile,
  writeFile,
  mountFile,
  deleteFile,
  reset: () => JSON.parse(host.reset()),
  listFiles: (msg) => JSON.parse(host.list_files(msg.dir || "/")),
  inspect: async (msg) => {
    if (ARROW_FILES.test(String(msg.path))) await drainBackground();
    return JSON.parse(host.inspect(msg.path));
  },
};

// Requests run one at a time, in the order sent: a run and a file operation never
// interleave. Background work (installing the rest
// of the stack, one package per task) runs only when no request waits and none came in
// for QUIET_MS: a task that has started cannot be paused, and a cell sent meanwhile
// would wait for it (an agent's steps come in bursts, a person types).
const QUIET_MS = 3000;
const queue = [];
let pumping = false;
let lastRequest = -Infinity; // when the last request was answered
let quietTimer = null;
function enqueue(task, { background = false } = {}) {
  queue.push({ task, background });
  if (!pumping) pump();
}
async function pump() {
  pumping = true;
  clearTimeout(quietTimer);
  while (queue.length) {
    const first = queue.findIndex((t) => !t.background);
    const quiet = lastRequest + QUIET_MS - performance.now();
    if (first < 0 && quiet > 0) {
      quietTimer = setTimeout(() => pumping || pump(), quiet);
      break;
    }
    const [next] = queue.splice(first >= 0 ? first : 0, 1);
    try {
      await next.task();
    } catch {
      // a task answers for itself; the queue goes on
    }
    if (!next.background) lastRequest = performance.now();
  }
  pumping = false;
}

// A call `{type: "call", id, method, args}` (PROTOCOL.md §3); the handler sees its
// args with the call's id.
function onRequest(msg) {
  const ok = msg && msg.type === "call" && typeof msg.method === "string";
  const handler = ok && Object.hasOwn(handlers, msg.method) ? handlers[msg.method] : null;
  const request = { ...(ok && msg.args && typeof msg.args === "object" ? msg.args : {}), id: msg && msg.id };
  enqueue(async () => {
    if (fatal) return; // the page is replacing this worker
    currentRequest = request.id;
    if (!handler) {
      post({ type: "reply", id: request.id, status: "error", message: `unknown method ${ok ? msg.method : msg && msg.type}` });
      return;
    }
    try {
      const out = await handler(request);
      if (out === null) return;
      const [reply, transfer] = Array.isArray(out) ? out : [out, []];
      post({ ...reply, type: "reply", id: request.id }, transfer);
    } catch (err) {
      if (!fatal) post({ type: "reply", id: request.id, status: "error", message: describeError(err) });
    }
  });
}

// From the frame: the boot call with the page's port, then runtime files. Only
// real messages count (a cell's dispatchEvent makes untrusted ones), and only one boot.
self.addEventListener("message", (ev) => {
  const msg = ev.data;
  if (!ev.isTrusted || !msg) return;
  if (msg.type === "addRuntime") return addRuntime(msg); // never behind a running cell
  if (msg.type === "call" && msg.method === "boot" && !pagePort && ev.ports && ev.ports[0]) {
    pagePort = ev.ports[0];
    // Calls come over the same port, in the order the page sent them.
    pagePort.onmessage = (e) => onRequest(e.data);
    onRequest(msg);
  }
});

function describeError(err) {
  if (err && err.name === "ErrnoError") return `no such file or directory (errno ${err.errno})`;
  return String((err && err.message) || err);
}
})();
