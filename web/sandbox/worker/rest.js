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
    for (const name of names) enqueue(() => installPackage(name).then(() => null), { background: true });
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
