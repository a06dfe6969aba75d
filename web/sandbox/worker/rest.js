"use strict";
// The rest of the stack (scipy, scikit-learn, pyarrow, sympy…): installed in the
// background, one package per task, or at once when a cell or inspect() needs it.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.

function installRest() {
  if (lazyFiles.size === 0 && lazyPackages.length) {
    // Installed one package at a time while no request waits (see enqueue), so that
    // `pd.read_parquet` or `import scipy` finds it without holding up anyone's cell.
    const names = lazyPackages;
    lazyPackages = [];
    for (const name of names) enqueue(() => installPackage(name).then(() => null), { background: true, name });
    enqueue(() => unpackBytecode("pycache-rest.zip").then(() => null), { background: true });
  }
}

// web/sandbox/install.js when the page handed it over (it skips loadPackage's clearing
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

// pandas imports pyarrow itself for these: no import line names it.
const ARROW_USES = /\b(?:read|to)_(?:parquet|feather|orc)\b/;

// The packages of the rest of the stack, still on their way, that a cell may import:
// those whose modules it names anywhere, not only in an import line
// (`importlib.import_module("scipy")`, `exec("import sklearn")`, DS-1000-style code),
// and pyarrow for the pandas calls that import it. They are installed before the cell
// runs, with what they depend on, so the import works the first time.
function restNeeded(code) {
  if (!lazyFiles.size && !lazyPackages.length && !queue.some((t) => t.background)) return [];
  const names = new Set(ARROW_USES.test(code) ? ["pyarrow"] : []);
  for (const match of code.matchAll(/[A-Za-z_]\w*/g)) {
    const name = restPackages.get(match[0]);
    if (name) names.add(name);
  }
  return [...names];
}

// Installs ``names`` and what they depend on now, inside the current request; the rest
// stays in the background.
async function installNow(names) {
  await restFiles();
  const wanted = new Set();
  const add = (/** @type {string} */ name) => {
    if (wanted.has(name)) return;
    wanted.add(name);
    for (const dep of (lock && lock.packages[name] && lock.packages[name].depends) || []) add(dep);
  };
  names.forEach(add);
  // In the queue's order, which is the lock's: a package after what it depends on.
  for (let i; (i = queue.findIndex((t) => t.background && wanted.has(t.name))) >= 0; ) {
    await queue.splice(i, 1)[0].task().catch(() => {});
  }
}

// A cell that failed to import something while the rest of the stack was still being
// installed: finish installing now, and say so (the model, or the person, runs it again).
async function finishBackground(result) {
  const type = result.error && result.error.type;
  if (result.status !== "error" || (type !== "ModuleNotFoundError" && type !== "ImportError")) return;
  // Only for a module the rest of the stack provides ("No module named 'scipy'",
  // pandas' "Missing optional dependency 'pyarrow'"): not for one nobody ships.
  const named = [...String(result.error.message).matchAll(/'([A-Za-z_][\w.]*)'/g)].map((m) => m[1].split(".")[0]);
  if (!named.some((name) => restPackages.has(name))) return;
  if (await drainBackground()) result.error.message += " (The sandbox was still installing the rest of its packages in the background when this cell ran; they are installed now: run the cell again.)";
}

async function readRestImports() {
  try {
    lock = JSON.parse(await runtime["pyodide-lock.json"].text());
    restPackages = new Map(lazyPackages.flatMap((name) => ((lock.packages[name] && lock.packages[name].imports) || []).map((module) => [module, name])));
  } catch {
    restPackages = new Map(); // no hint then; the cell's own error still says what is missing
  }
}

// Runs the queued background work now, inside the current request. True if there was any.
async function drainBackground() {
  await restFiles();
  let any = false;
  for (let i; (i = queue.findIndex((t) => t.background)) >= 0; any = true) await queue.splice(i, 1)[0].task().catch(() => {});
  return any;
}

// The page holds the rest of the stack's files back until it is quiet: ask for them
// now, and wait until they are all here (the background installs are then queued).
async function restFiles() {
  if (!lazyFiles.size) return;
  post({ type: "need-files", id: currentRequest });
  await new Promise((resolve) => restWaiters.push(resolve));
}
