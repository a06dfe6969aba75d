"use strict";
// The rest of the stack (scipy, scikit-learn, pyarrow, sympy…): installed only when a
// request needs it, never in the background (README "Fast starts": nothing burns CPU
// after ready). A part of the sandbox worker (see main.js): the page joins the parts
// into one closure, so nothing here is reachable from a cell.
/* exported RestOfStack */

// pandas imports pyarrow itself for these: no import line names it.
const ARROW_USES = /\b(?:read|to)_(?:parquet|feather|orc)\b/;

// The bytecode the build compiled for the rest of the stack (sitebuild/precompile.mjs)
// is one zip: only the files of installed sources are unpacked from it, so a package
// not installed yet leaves no __pycache__ folder behind (that would make its name an
// empty namespace package). Kept in the file system once read.
const REST_BYTECODE = `
def _reckon_unpack_rest(path):
    import os, zipfile
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            folder, pyc = os.path.split(name)
            source = os.path.join("/", os.path.dirname(folder), pyc.split(".")[0] + ".py")
            if os.path.exists(source) and not os.path.exists("/" + name):
                z.extract(name, "/")
_reckon_unpack_rest
`;
const REST_ZIP = "/tmp/reckon-pycache-rest.zip";

/** The packages of the stack not installed yet, and how to install them. */
class RestOfStack {
  /** @param {RuntimeFiles} files */
  constructor(files) {
    this.files = files;
    /** @type {any} the interpreter, once booted */
    this.pyodide = null;
    /** @type {string[]} the rest of the stack not installed yet (installed when a request needs it) */
    this.lazyPackages = [];
    /** @type {any} web/sandbox/install.js, when the page handed it over */
    this.installer = null;
    /** @type {any} pyodide-lock.json, parsed */
    this.lock = null;
    /** @type {Map<string, string>} top-level module name -> its package, for the rest of the stack (from the lock) */
    this.packages = new Map();
    /** @type {any} the Python function that unpacks the rest's bytecode, once made */
    this.bytecode = null;
  }

  /** What the lock says of the packages not installed yet. @param {string[]} lazyPackages */
  async readLock(lazyPackages) {
    this.lazyPackages = lazyPackages;
    try {
      this.lock = JSON.parse(await this.files.runtime["pyodide-lock.json"].text());
      const lock = this.lock;
      this.packages = new Map(lazyPackages.flatMap((name) => ((lock.packages[name] && lock.packages[name].imports) || []).map((/** @type {string} */ module) => /** @type {[string, string]} */ ([module, name]))));
    } catch {
      this.packages = new Map(); // no hint then; the cell's own error still says what is missing
    }
  }

  // web/sandbox/install.js when the page handed it over (it skips loadPackage's clearing
  // of every import cache); else, or if it fails, Pyodide's loadPackage, which installs
  // over whatever it left.
  /** @param {string} name */
  async installPackage(name) {
    if (this.installer && this.lock) {
      try {
        return await this.installer.installPackage(this.pyodide, this.lock, this.files.runtime, name);
      } catch {
        // fall through
      }
    }
    await this.pyodide.loadPackage([name], { messageCallback: () => {}, checkIntegrity: false });
  }

  // The packages of the rest of the stack, not installed yet, that a cell may import:
  // those whose modules it names anywhere, not only in an import line
  // (`importlib.import_module("scipy")`, `exec("import sklearn")`, DS-1000-style code),
  // and pyarrow for the pandas calls that import it. They are installed before the cell
  // runs, with what they depend on, so the import works the first time.
  /** @param {string} code */
  needed(code) {
    if (!this.lazyPackages.length) return [];
    const names = new Set(ARROW_USES.test(code) ? ["pyarrow"] : []);
    for (const match of code.matchAll(/[A-Za-z_]\w*/g)) {
      const name = this.packages.get(match[0]);
      if (name) names.add(name);
    }
    return [...names];
  }

  // Installs ``names`` and what they depend on now, inside the current request, with the
  // bytecode the build compiled for them. True if anything was installed.
  /** @param {string[]} names */
  async installNow(names) {
    const lock = this.lock;
    const wanted = new Set();
    const add = (/** @type {string} */ name) => {
      if (wanted.has(name)) return;
      wanted.add(name);
      for (const dep of (lock && lock.packages[name] && lock.packages[name].depends) || []) add(dep);
    };
    names.forEach(add);
    // In lazyPackages' order, which is the lock's: a package after what it depends on.
    const now = this.lazyPackages.filter((name) => wanted.has(name));
    if (!now.length) return false;
    await this.files.whenAllHere();
    for (const name of now) {
      await this.installPackage(name).catch(() => {}); // the cell's own import error says the rest
      this.lazyPackages = this.lazyPackages.filter((n) => n !== name);
    }
    await this.unpackBytecode().catch(() => {}); // without it, imports compile from source
    return true;
  }

  async unpackBytecode() {
    const pyodide = this.pyodide;
    if (!this.bytecode) {
      const resp = await self.fetch(this.files.indexURL + "pycache-rest.zip");
      if (!resp.ok) return;
      pyodide.FS.writeFile(REST_ZIP, new Uint8Array(await resp.arrayBuffer()));
      this.bytecode = pyodide.runPython(REST_BYTECODE, { globals: pyodide.toPy({}) });
    }
    this.bytecode(REST_ZIP);
  }

  // A cell that failed to import a module of the rest of the stack that no line of it
  // names (a library's own lazy import, a name built at run time): install it now, and
  // say so (the model, or the person, runs it again).
  /** @param {any} result */
  async finish(result) {
    const type = result.error && result.error.type;
    if (result.status !== "error" || (type !== "ModuleNotFoundError" && type !== "ImportError")) return;
    // Only for a module the rest of the stack provides ("No module named 'scipy'",
    // pandas' "Missing optional dependency 'pyarrow'"): not for one nobody ships.
    const named = [...String(result.error.message).matchAll(/'([A-Za-z_][\w.]*)'/g)].map((m) => this.packages.get(m[1].split(".")[0])).filter((name) => name !== undefined);
    if (named.length && (await this.installNow(named))) result.error.message += " (The sandbox had not installed that package yet, since no line of the cell names it; it is installed now: run the cell again.)";
  }
}
