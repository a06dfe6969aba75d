// Makes the sandbox's start-up memory snapshot once, at build time, so that even a
// first visit skips installing and importing pandas and matplotlib (README "Fast
// starts"). It runs the very recipe the browser uses (web/sandbox/snapshot/, its
// parts joined as the page joins them: packages unpacked without loadPackage,
// `import pandas, matplotlib.pyplot`, side modules recorded for re-linking) in the
// same Pyodide under Node.js, reading the packages from the built site. The browser
// checks what it restores (table layout, a smoke test) and boots cold if anything differs.
//
// Writes <out>/heap.bin, <out>/fs.bin and <out>/meta.json.
//
// Usage: node sitebuild/snapshot.mjs <pyodide.mjs> <site/pyodide/> <web/> <packages,csv> <out>
// Called by the build's assemble stage (sitebuild/_node.py); not meant to be run by hand.
import fs from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";

const [pyodideModule, indexURL, web, packages, out] = process.argv.slice(2);
// web/ has no package.json saying its .js files are modules; as a data: URL this one
// is a module whatever the Node.js version.
const partsModule = fs.readFileSync(`${web}sandbox/parts.js`).toString("base64");
const { RECIPE_PARTS, joinParts } = await import(`data:text/javascript;base64,${partsModule}`);
// The recipe is a worker script: it hooks `self._createPyodideModule`, which Pyodide
// calls as a global. pyodide.asm.js is loaded first so that global exists to hook.
globalThis.self = globalThis;
const { loadPyodide } = await import(pathToFileURL(pyodideModule).href);
await import(pathToFileURL(indexURL + "pyodide.asm.js").href);
const recipe = joinParts(RECIPE_PARTS.map((name) => fs.readFileSync(web + name, "utf8")));
vm.runInThisContext(recipe, { filename: `${web}sandbox/snapshot/ (joined)` });
const lib = globalThis.__reckonSnapshot;

// The recipe fetches the lock and the package files; here they come from the disk.
// What it fetches says how far it is (lines starting "progress: " are shown by build.py).
const names = packages.split(",");
let unpacked = 0;
const progress = (what) => console.log(`progress: ${what}`);
const readLocal = async (url) => {
  const path = url.startsWith("file:") ? fileURLToPath(url) : url;
  const file = path.split("/").pop();
  if (file === "pycache-eager.zip") progress("importing pandas and matplotlib");
  else if (file.endsWith(".whl") || file.endsWith(".zip")) {
    unpacked += 1;
    if (unpacked === 1 || unpacked % 5 === 0 || unpacked === names.length) {
      progress(`unpacking packages: ${unpacked}/${names.length} (${file.split("-")[0]})`);
    }
  }
  try {
    return new Response(fs.readFileSync(path));
  } catch {
    return new Response("", { status: 404 });
  }
};
progress("starting Pyodide");
const made = await lib.makeSnapshot({
  loadPyodide,
  indexURL,
  packages: packages.split(","),
  env: { HOME: "/home/pyodide", MPLBACKEND: "Agg" }, // as the sandbox worker boots
  fetch: readLocal,
});
progress("writing the snapshot");
fs.writeFileSync(`${out}/heap.bin`, new Uint8Array(made.snap));
fs.writeFileSync(`${out}/fs.bin`, new Uint8Array(made.fs));
fs.writeFileSync(`${out}/meta.json`, JSON.stringify(made.meta));
progress(`heap ${(made.snap.byteLength / 1e6).toFixed(0)} MB, files ${(made.fs.byteLength / 1e6).toFixed(0)} MB`);
