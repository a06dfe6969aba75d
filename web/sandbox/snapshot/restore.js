"use strict";
// The restore: the file image and the side modules re-linked at their recorded bases
// while Pyodide boots, then the heap copied in, re-seeded and checked. A part of the
// snapshot recipe (see make.js).
/* global RECIPE, SnapshotError, makeSnapshot, openImage, restoreFiles */

/** @param {any} M Pyodide's Emscripten module @param {any} meta the snapshot's record (recordSnapshot) @param {Map<string, WebAssembly.Module>} compiled */
function relink(M, meta, compiled) {
  const { LDSO, GOT, wasmTable } = M;
  for (const [sym, value] of Object.entries(/** @type {Record<string, number>} */ (meta.GOT))) {
    let g = GOT[sym];
    if (!g) g = GOT[sym] = new WebAssembly.Global({ value: "i32", mutable: true });
    else if (g.value !== 0 && g.value !== value) throw new SnapshotError(`GOT entry ${sym} differs`);
    g.value = value;
  }
  const scratch = M.HEAP8.length - 64; // overwritten by the snapshot's heap right after
  for (const lib of meta.libs) {
    const name = lib.names[0];
    if (wasmTable.length > lib.tableBase) throw new SnapshotError(`table already past ${name}'s base`);
    if (wasmTable.length < lib.tableBase) wasmTable.grow(lib.tableBase - wasmTable.length);
    M.HEAP8.fill(0, scratch, scratch + 64);
    M.HEAP8[scratch + 8] = 1; // "already loaded": reuse the bases below
    const h = scratch >>> 2;
    M.HEAPU32[h + 3] = lib.memoryBase;
    M.HEAPU32[h + 4] = lib.memorySize;
    M.HEAPU32[h + 5] = lib.tableBase;
    M.HEAPU32[h + 6] = lib.tableSize;
    const flags = { global: lib.global, nodelete: true, allowUndefined: true, loadAsync: false };
    const dso = M.newDSO(name, undefined, "loading");
    dso.refcount = Infinity;
    dso.global = lib.global;
    const exports = M.loadWebAssemblyModule(compiled.get(name), flags, name, lib.global ? null : {}, scratch);
    if (lib.global) M.mergeLibSymbols(exports, name);
    dso.exports = exports;
    for (const alias of lib.names) LDSO.loadedLibsByName[alias] = dso;
    for (const handle of lib.handles) LDSO.loadedLibsByHandle[handle] = dso;
  }
  if (wasmTable.length < meta.tableLength) wasmTable.grow(meta.tableLength - wasmTable.length);
  for (const [i, lib, sym, kind, sig] of meta.table) {
    const owner = LDSO.loadedLibsByName[lib];
    const f = owner && owner.exports[sym];
    if (!f) throw new SnapshotError(`table slot ${i}: ${lib}.${sym} is missing`);
    if (kind === "wasm") {
      if (wasmTable.get(i) !== f) wasmTable.set(i, f);
    } else if (wasmTable.get(i) === null || M.getFunctionAddress(f) !== i) {
      try {
        wasmTable.set(i, f);
      } catch {
        wasmTable.set(i, M.convertJsFunctionToWasm(f, sig || f.sig));
      }
    }
  }
  M.updateTableMap(meta.mainTableSize, wasmTable.length - meta.mainTableSize);
  if (wasmTable.length !== meta.tableLength) throw new SnapshotError(`table length ${wasmTable.length}, expected ${meta.tableLength}`);
}

// Compared with answers worked out by hand: a restore that links a function to the
// wrong slot fails here instead of in the user's first cell. It calls into the native
// code of numpy (and its LAPACK), pandas, matplotlib's Agg renderer and sqlite, but
// stays cheap (no figure, no font, no PNG): a restore must not cost what a boot does.
const SMOKE = `
def _reckon_smoke():
    import json, sqlite3
    import numpy as np, pandas as pd
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.path import Path
    from matplotlib.transforms import Affine2D
    renderer = RendererAgg(8, 8, 72)
    renderer.draw_path(renderer.new_gc(), Path([(0, 0), (8, 8)]), Affine2D(), None)
    return json.dumps({
        "unique": pd.unique(np.array([3, 1, 3, 2])).tolist(),
        "weekday": pd.Timestamp("2024-01-02").dayofweek,
        "det": round(float(np.linalg.det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 9),
        "ink": bool((np.asarray(renderer.buffer_rgba())[..., 3] > 0).any()),
        "sql": sqlite3.connect(":memory:").execute("select 6 * 7").fetchone()[0],
    }, sort_keys=True)
`;
const SMOKE_EXPECTED = '{"det": 5.0, "ink": true, "sql": 42, "unique": [3, 1, 2], "weekday": 1}';

// `snapshot.snap` and `snapshot.fs` may be promises of their ArrayBuffers, `wasm` a
// promise of pyodide.asm.wasm's Response: the main module compiles while they are read.
// `marks` gets the milliseconds at which each step was done (the worker reports them).
// `smoke: false` skips the smoke test: for a copy that already passed it in this browser.
/**
 * @param {{loadPyodide: (options: Record<string, unknown>) => Promise<any>, options: Record<string, unknown>, snapshot: {meta: any, snap: ArrayBuffer | Promise<ArrayBuffer>, fs: Blob | ArrayBuffer | Promise<ArrayBuffer>},
 *   wasm?: Response | Promise<Response> | null, marks?: Record<string, number>, smoke?: boolean}} options
 */
async function restoreSnapshot({ loadPyodide, options, snapshot, wasm = null, marks = {}, smoke = true }) {
  const t0 = performance.now();
  const mark = (/** @type {string} */ name) => (marks[name] = Math.round(performance.now() - t0));
  const { meta } = snapshot;
  if (!meta || meta.recipe !== RECIPE) throw new SnapshotError("made by another recipe");
  const main = wasm ? Promise.resolve(wasm).then((resp) => WebAssembly.compileStreaming(resp)) : null;
  if (main) main.then(() => mark("mainCompiled"));
  const heap = Promise.resolve(snapshot.snap).then((buffer) => (mark("heapRead"), new Uint8Array(buffer)));
  for (const p of [main, heap]) if (p) p.catch(() => {}); // awaited below, or moot after a throw
  // The file image is read and its native modules compiled while the main module boots.
  const image = Promise.resolve(snapshot.fs).then(async (source) => {
    const files = await openImage(source);
    mark("filesRead");
    for (const lib of meta.libs) if (!(files.get(lib.names[0]) instanceof Uint8Array)) throw new SnapshotError(`${lib.names[0]} is not among the image's native modules`);
    // A module of the image that does not compile is the image's fault (a cold boot
    // follows); only Pyodide's own module failing is the runtime's (see the worker).
    const compile = (/** @type {string} */ name) => WebAssembly.compile(files.get(name)).catch((err) => Promise.reject(new SnapshotError(`${name} does not compile: ${err.message}`)));
    /** @type {Array<[string, WebAssembly.Module]>} */
    const compiled = await Promise.all(meta.libs.map(async (/** @type {{names: string[]}} */ l) => [l.names[0], await compile(l.names[0])]));
    mark("libsCompiled");
    return { files, compiled: new Map(compiled) };
  });
  image.catch(() => {});
  const origCreate = self._createPyodideModule;
  self._createPyodideModule = async (/** @type {any} */ settings) => {
    if (main) {
      const module = await main;
      // Instantiated from the module compiled above (a worker may instantiate synchronously).
      settings.instantiateWasm = (/** @type {WebAssembly.Imports} */ imports, /** @type {(instance: WebAssembly.Instance, module: WebAssembly.Module) => void} */ receive) => receive(new WebAssembly.Instance(module, imports), module);
    }
    mark("creating");
    const M = await origCreate(settings);
    mark("created");
    if (M.wasmTable.length !== meta.bootTableLength) throw new SnapshotError(`boot table length ${M.wasmTable.length}, expected ${meta.bootTableLength}`);
    const { files, compiled } = await image;
    restoreFiles(M, files);
    relink(M, meta, compiled);
    mark("linked");
    return M; // loadPyodide now copies the snapshot's heap in
  };
  let py;
  try {
    py = await loadPyodide({ ...options, _loadSnapshot: heap });
  } finally {
    self._createPyodideModule = origCreate;
  }
  // The heap came from an interpreter that may have lacked the C-call helper (see
  // recordSnapshot): point CPython at this boot's, or at none (its JS fallback).
  mark("heapLoaded");
  const M = py._module;
  const at = (M.__PyRuntime + M.HEAP32[M.__PyEM_EMSCRIPTEN_COUNT_ARGS_OFFSET >>> 2]) >>> 2;
  M.HEAP32[at] = M._PyEM_CountArgsPtr || 0;
  // Pyodide keeps its options: without this the worker would hold a second copy of
  // the heap image (~90 MB) for its whole life.
  if (py._api && py._api.config) delete py._api.config._loadSnapshot;
  if (py.version !== meta.version) throw new SnapshotError(`made with Pyodide ${meta.version}, running ${py.version}`);
  // Every restore would otherwise draw the same "random" numbers.
  py.runPython("import random, numpy.random; random.seed(); numpy.random.seed()");
  for (const name of meta.packages) py.loadedPackages[name] = "snapshot";
  const { files } = await image;
  if (!smoke) {
    mark("checked");
    files.preload();
    return py;
  }
  const ns = py.globals.get("dict")();
  try {
    py.runPython(SMOKE, { globals: ns });
    const got = ns.get("_reckon_smoke")();
    if (got !== SMOKE_EXPECTED) throw new SnapshotError(`smoke test gave ${got}`);
  } finally {
    ns.destroy();
  }
  mark("checked");
  files.preload();
  return py;
}

self.__reckonSnapshot = { RECIPE, makeSnapshot, restoreSnapshot, SnapshotError };
