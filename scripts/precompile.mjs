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
// Usage: node scripts/precompile.mjs <pyodide.mjs> <site/pyodide/> <eager,names> <rest,names> <out>
// Called by build.py (stage "precompile"); not meant to be run by hand.
import { pathToFileURL } from "node:url";
import fs from "node:fs";

const [pyodideModule, indexURL, eager, rest, out] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(pyodideModule).href);
const py = await loadPyodide({
  indexURL,
  lockFileURL: indexURL + "pyodide-lock.json",
  env: { HOME: "/home/pyodide", MPLBACKEND: "Agg" },
  stdout: (line) => line.startsWith("font cache:") && console.log(line),
  stderr: () => {},
});

const BUNDLE = `
import compileall, io, os, py_compile, site, zipfile

SITE = site.getsitepackages()[0]

def pyc_files():
    found = set()
    for root, _dirs, files in os.walk(SITE):
        found.update(os.path.join(root, f) for f in files if f.endswith(".pyc"))
    return found

def bundle(path, skip, extra=()):
    compileall.compile_dir(
        SITE, quiet=2, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    files = sorted(pyc_files() - skip)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for full in [*files, *extra]:
            z.write(full, full.lstrip("/"))
    return set(files)
`;
py.runPython(BUNDLE);
await py.loadPackage(eager.split(","), { messageCallback: () => {} });
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
done = bundle("/tmp/pycache-eager.zip", set(), fonts)
`);
fs.writeFileSync(`${out}/pycache-eager.zip`, py.FS.readFile("/tmp/pycache-eager.zip"));
if (rest) await py.loadPackage(rest.split(","), { messageCallback: () => {} });
py.runPython(`bundle("/tmp/pycache-rest.zip", done)`);
fs.writeFileSync(`${out}/pycache-rest.zip`, py.FS.readFile("/tmp/pycache-rest.zip"));
