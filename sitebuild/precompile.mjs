// Precompiles the sandbox's Python packages to bytecode, once, at build time.
//
// Pyodide's wheels ship .py sources only, so every fresh sandbox would compile
// pandas, matplotlib & co. before it could import them (seconds of WebAssembly).
// This runs the same Pyodide under Node.js, installs the packages from the built
// site, compiles them with unchecked-hash .pyc files (valid whatever the files'
// mtimes are after unpacking), builds matplotlib's font cache (matplotlib/fontlist.json), and writes two
// bundles the sandbox worker unpacks over its site-packages:
//   <out>/pycache-eager.zip  the packages loaded before "ready" + the font cache
//   <out>/pycache-rest.zip   the packages installed in the background later
//
// Usage: node sitebuild/precompile.mjs <pyodide.mjs> <site/pyodide/> <eager,names> <rest,names> <out>
// Called by the build's assemble stage (sitebuild/_node.py); not meant to be run by hand.
import { pathToFileURL } from "node:url";
import fs from "node:fs";

const [pyodideModule, indexURL, eager, rest, out] = process.argv.slice(2);
// Lines starting "progress: " are shown by the build (sitebuild/_node.py).
const progress = (what) => console.log(`progress: ${what}`);
const { loadPyodide } = await import(pathToFileURL(pyodideModule).href);
const py = await loadPyodide({
  indexURL,
  lockFileURL: indexURL + "pyodide-lock.json",
  env: { HOME: "/home/pyodide", MPLBACKEND: "Agg" },
  stdout: (line) => (line.startsWith("font cache:") || line.startsWith("progress: ")) && console.log(line),
  stderr: () => {},
});

// Each pass compiles only the sources no earlier pass compiled (the rest bundle
// skips the eager packages' files), and says how far it is every few seconds.
const BUNDLE = `
import compileall, os, py_compile, site, time, zipfile

SITE = site.getsitepackages()[0]
compiled = set()

def sources():
    found = []
    for root, dirs, files in os.walk(SITE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return found

def pyc_files():
    found = set()
    for root, _dirs, files in os.walk(SITE):
        found.update(os.path.join(root, f) for f in files if f.endswith(".pyc"))
    return found

def bundle(path, label, skip, extra=()):
    todo = [f for f in sources() if f not in compiled]
    shown = time.monotonic()
    for done, source in enumerate(todo, 1):
        compileall.compile_file(
            source, quiet=2, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
        )
        compiled.add(source)
        if time.monotonic() - shown >= 3 or done == len(todo):
            print(f"progress: compiling {label}: {done:,}/{len(todo):,} files", flush=True)
            shown = time.monotonic()
    files = sorted(pyc_files() - skip)
    print(f"progress: writing {os.path.basename(path)} ({len(files):,} files)", flush=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for full in [*files, *extra]:
            z.write(full, full.lstrip("/"))
    return set(files)
`;
py.runPython(BUNDLE);
const eagerNames = eager.split(",");
progress(`installing the ${eagerNames.length} packages loaded before "ready" (${eagerNames.slice(0, 4).join(", ")}, ...)`);
await py.loadPackage(eagerNames, { messageCallback: () => {} });
progress("importing matplotlib to build its font cache");
py.runPython(`
import matplotlib, matplotlib.pyplot  # builds the font cache
from matplotlib import font_manager
# Pyodide's matplotlib writes it next to the package (matplotlib/fontlist.json), not
# under get_cachedir(): take both, or every sandbox boot rebuilds it.
cache = matplotlib.get_cachedir()
fonts = {os.path.join(cache, f) for f in os.listdir(cache) if f.endswith(".json")}
fmcache = os.path.join(os.path.dirname(font_manager.__file__), "fontlist.json")
fonts |= {fmcache} if os.path.exists(fmcache) else set()
fonts = sorted(fonts)
print("font cache:", ", ".join(fonts) or "none found")
if not fonts:
    raise SystemExit("precompile: matplotlib built no font cache; the sandbox would rebuild it at every boot")
done = bundle("/tmp/pycache-eager.zip", "the packages loaded before ready", set(), fonts)
`);
fs.writeFileSync(`${out}/pycache-eager.zip`, py.FS.readFile("/tmp/pycache-eager.zip"));
if (rest) {
  const restNames = rest.split(",");
  progress(`installing the ${restNames.length} packages installed in the background (${restNames.slice(0, 4).join(", ")}, ...)`);
  await py.loadPackage(restNames, { messageCallback: () => {} });
}
py.runPython(`bundle("/tmp/pycache-rest.zip", "the background packages", done)`);
fs.writeFileSync(`${out}/pycache-rest.zip`, py.FS.readFile("/tmp/pycache-rest.zip"));
