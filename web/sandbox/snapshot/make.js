"use strict";
// Fast starts for the sandbox worker: a Pyodide 0.27.7 memory snapshot taken after
// `import pandas, matplotlib.pyplot`, with the native side modules (.so) re-linked on
// restore. Loaded into the worker with importScripts(); it leaves one object on
// `self`, which the worker takes and deletes before any cell runs. The build runs
// this same recipe under Node.js (sitebuild/snapshot.mjs) for the snapshot it ships.
//
// It is made of parts, each one job, that the page (and the build) joins into one
// script, in this order, inside one closure (sandbox/parts.js, RECIPE_PARTS):
//   make.js     this part: an interpreter of its own, set up, and what a restore needs
//   image.js    the in-memory file system as one image, and read back from it
//   restore.js  the restore: files, side modules re-linked, the heap, a smoke test
//
// Why the re-link: loadPyodide({_loadSnapshot}) restores the wasm heap, but the side
// modules' instances, their table slots and the GOT live outside it. So the snapshot
// records each side module's memory/table base, every GOT value and every other table
// slot; the restore instantiates each module again at the same bases (through
// Emscripten's own loadWebAssemblyModule, with a handle whose "already loaded" flag
// makes it reuse them) before the heap copy, then checks that the table matches.
// It relies on 0.27.7 internals: any mismatch throws, and the caller boots cold.
/* global packFiles */
/* exported RECIPE, SnapshotError, makeSnapshot */

// Bump when what is recorded, or how, changes. 2: no JSPI, the C-call helper's slot
// reserved; 3: native modules first in the file image (the rest is read lazily).
const RECIPE = 3;
const IMPORTS = "import pandas, matplotlib, matplotlib.pyplot, reckon.kernel._host";
// Run once before the snapshot so that a first chart or table after a restore finds
// every module it needs already imported (and no file to read): a figure with text
// saved as PNG, a small CSV read, grouped, described and shown as HTML.
const WARM_UP = `
import io
import matplotlib.pyplot as plt
import pandas as pd
_fig, _ax = plt.subplots()
_ax.plot([1, 2, 3], [3, 1, 2])
_ax.set_title("warm-up")
_ax.set_xlabel("x")
_fig.savefig(io.BytesIO(), format="png")
plt.close(_fig)
_df = pd.read_csv(io.StringIO("k,v\\na,1\\nb,2\\na,3\\n"))
_df.groupby("k")["v"].sum().to_dict(), _df.describe().to_html(), repr(_df)
del _fig, _ax, _df
`;

class SnapshotError extends Error {}



// Boots an interpreter of its own (never the one that runs cells: no JS callback may
// have entered Python before the snapshot), installs `packages` without loadPackage
// (which leaves JS references behind), imports, and returns transferable buffers.
/** @param {{loadPyodide: (options: Record<string, unknown>) => Promise<any>, indexURL: string, packages: string[], env: Record<string, string>, fetch: typeof fetch}} options */
async function makeSnapshot({ loadPyodide, indexURL, packages, env, fetch }) {
  /** @type {Array<{memoryBase: number, tableBase: number, instance: any, module: any}>} */
  const instances = [];
  const origInstantiate = WebAssembly.instantiate;
  /** @type {any} */ (WebAssembly).instantiate = async function (/** @type {any} */ bin, /** @type {any} */ info) {
    /** @type {any} */
    const res = await origInstantiate.call(this, bin, info);
    if (info && info["GOT.mem"] && info.env && typeof info.env.__memory_base === "number") {
      instances.push({ memoryBase: info.env.__memory_base, tableBase: info.env.__table_base, instance: res.instance || res, module: res.module || bin });
    }
    return res;
  };
  /** @type {any} */
  let M = null;
  const origCreate = self._createPyodideModule;
  self._createPyodideModule = async (/** @type {any} */ settings) => (M = await origCreate(settings));
  let py;
  try {
    py = await loadPyodide({ indexURL, _makeSnapshot: true, env, stdout: () => {}, stderr: () => {} });
  } finally {
    self._createPyodideModule = origCreate;
  }
  try {
    return await recordSnapshot(py, M, instances, { indexURL, packages, fetch });
  } finally {
    WebAssembly.instantiate = origInstantiate;
  }
}

/** @param {any} py the interpreter @param {any} M its Emscripten module @param {Array<{memoryBase: number, tableBase: number, instance: any, module: any}>} instances
 * @param {{indexURL: string, packages: string[], fetch: typeof fetch}} options */
async function recordSnapshot(py, M, instances, { indexURL, packages, fetch }) {
  // Where WebAssembly GC is supported (every current browser), CPython gets a helper for
  // calling C functions at boot (getPyEMCountArgsPtr), in one more table slot. Node.js 20
  // (the build's snapshot) has none: reserve that slot, so the side modules land where a
  // browser's boot leaves room for them. The restore hands CPython the helper again.
  if (!M._PyEM_CountArgsPtr) M.wasmTable.grow(1);
  const bootTableLength = M.wasmTable.length;
  const lock = await (await fetch(indexURL + "pyodide-lock.json")).json();
  /** @type {any[]} */
  const entries = packages.map((name) => lock.packages[name]).filter(Boolean);
  entries.sort((a, b) => Number(!!b.shared_library) - Number(!!a.shared_library));
  py.runPython(`
import os, site, sys, zipfile
def _reckon_unpack(path, dest):
    with zipfile.ZipFile(path) as z:
        z.extractall(dest)
        names = [os.path.join(dest, n) for n in z.namelist() if n.endswith(".so")]
    os.remove(path)
    return ",".join(sorted(names))
`);
  // Strings only cross here: a PyProxy made before the snapshot would be a dangling JS reference in it.
  const unpack = (/** @type {string} */ path, /** @type {string} */ dest) => py.runPython(`_reckon_unpack(${JSON.stringify(path)}, ${JSON.stringify(dest)})`);
  /** @type {Record<string, string>} */
  const dests = { site: py.runPython("site.getsitepackages()[0]"), stdlib: py.runPython("os.path.dirname(os.__file__)"), dynlib: "/usr/lib" };
  /** @type {Array<[string, boolean]>} */
  const dynlibs = [];
  for (const pkg of entries) {
    const resp = await fetch(indexURL + pkg.file_name);
    if (!resp.ok) throw new SnapshotError(`${pkg.file_name}: HTTP ${resp.status}`);
    M.FS.writeFile("/tmp/reckon-wheel.zip", new Uint8Array(await resp.arrayBuffer()));
    const dest = dests[pkg.install_dir] || dests.site;
    if (pkg.install_dir === "dynlib") M.FS.mkdirTree(dest);
    const sos = unpack("/tmp/reckon-wheel.zip", dest);
    for (const so of sos ? sos.split(",") : []) dynlibs.push([so, !!pkg.shared_library]);
  }
  const eager = await fetch(indexURL + "pycache-eager.zip");
  if (eager.ok) {
    M.FS.writeFile("/tmp/reckon-wheel.zip", new Uint8Array(await eager.arrayBuffer()));
    py.runPython(`_reckon_unpack("/tmp/reckon-wheel.zip", "/"); del _reckon_unpack`);
  } else py.runPython("del _reckon_unpack");
  for (const [path, global] of dynlibs) await M.API.loadDynlib(path, global);
  // An open FT2Font keeps its font file open: drop it so no fd outlives the snapshot.
  py.runPython(`${IMPORTS}\n${WARM_UP}\nmatplotlib.font_manager._get_font.cache_clear()\nimport gc; gc.collect()`);
  const streams = M.FS.streams.map((/** @type {any} */ s, /** @type {number} */ i) => (s && i > 2 ? s.path : null)).filter(Boolean);
  if (streams.length) throw new SnapshotError(`files still open: ${streams.join(", ")}`);

  const libs = describeLibs(M, instances);
  /** @type {Record<string, number>} */
  const GOT = {};
  for (const [k, g] of Object.entries(/** @type {Record<string, any>} */ (M.GOT))) GOT[k] = g.value;
  const mainTableSize = Math.min(bootTableLength, ...libs.map((l) => l.tableBase));
  const table = describeTable(M, libs, mainTableSize);
  const fsBlob = packFiles(M);
  const snap = py.makeMemorySnapshot();
  const meta = { recipe: RECIPE, version: py.version, bootTableLength, mainTableSize, tableLength: M.wasmTable.length, libs, GOT, table, packages };
  return { meta, snap: snap.buffer.slice(snap.byteOffset, snap.byteOffset + snap.byteLength), fs: fsBlob.buffer };
}

/** @param {any} M @param {Array<{memoryBase: number, tableBase: number, instance: any, module: any}>} instances */
function describeLibs(M, instances) {
  /** @type {Map<any, string[]>} */
  const names = new Map();
  /** @type {Map<any, number[]>} */
  const handles = new Map();
  for (const [name, dso] of Object.entries(/** @type {Record<string, any>} */ (M.LDSO.loadedLibsByName))) names.set(dso, [...(names.get(dso) || []), name]);
  for (const [h, dso] of Object.entries(/** @type {Record<string, any>} */ (M.LDSO.loadedLibsByHandle))) handles.set(dso, [...(handles.get(dso) || []), Number(h)]);
  return instances.map((rec) => {
    const fn = Object.keys(rec.instance.exports).find((k) => typeof rec.instance.exports[k] === "function" && !k.startsWith("__"));
    const dso = [...names.keys()].find((d) => d.exports && fn && d.exports[fn] === rec.instance.exports[fn]);
    if (!dso) throw new SnapshotError("a side module is not in LDSO");
    const dylink = M.getDylinkMetadata(rec.module);
    return { names: names.get(dso), handles: handles.get(dso) || [], global: !!dso.global, memoryBase: rec.memoryBase, tableBase: rec.tableBase, memorySize: dylink.memorySize, tableSize: dylink.tableSize, _dso: dso };
  });
}

// The identity of every table slot outside the side modules' own ranges (addFunction'd
// exports, dlsym results): [index, lib, symbol, kind, signature] or [index, null].
/** @param {any} M @param {any[]} libs (describeLibs) @param {number} mainTableSize */
function describeTable(M, libs, mainTableSize) {
  /** @type {Map<Function, {lib: string, sym: string}>} */
  const byFunc = new Map();
  /** @type {any[][]} */
  const sources = [["__main__", M.LDSO.loadedLibsByName.__main__.exports], ...libs.map((l) => [l.names[0], l._dso.exports])];
  for (const [lib, exp] of sources) for (const [sym, f] of Object.entries(exp)) if (typeof f === "function" && !byFunc.has(f)) byFunc.set(f, { lib, sym });
  /** @type {Map<number, {lib: string, sym: string}>} */
  const jsAt = new Map();
  for (const [f, d] of byFunc) {
    const a = M.getFunctionAddress(f);
    if (a && !jsAt.has(a)) jsAt.set(a, d);
  }
  /** @type {Array<[number, string, string, string, string | null]>} */
  const table = [];
  for (let i = mainTableSize; i < M.wasmTable.length; i++) {
    if (libs.some((l) => i >= l.tableBase && i < l.tableBase + l.tableSize)) continue;
    const f = M.wasmTable.get(i);
    if (f === null) continue;
    const d = byFunc.get(f);
    if (d) table.push([i, d.lib, d.sym, "wasm", null]);
    else if (jsAt.get(i)) {
      const at = /** @type {{lib: string, sym: string}} */ (jsAt.get(i));
      table.push([i, at.lib, at.sym, "js", (M.LDSO.loadedLibsByName[at.lib].exports[at.sym] || {}).sig || null]);
    }
    else throw new SnapshotError(`table slot ${i} holds a function of unknown origin`);
  }
  for (const l of libs) delete (/** @type {{_dso?: unknown}} */ (l))._dso;
  return table;
}
