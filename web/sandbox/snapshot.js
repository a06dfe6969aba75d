"use strict";
// Fast starts for the sandbox worker: a Pyodide 0.27.7 memory snapshot taken after
// `import pandas, matplotlib.pyplot`, with the native side modules (.so) re-linked on
// restore. Loaded into the worker with importScripts(); it leaves one object on
// `self`, which the worker takes and deletes before any cell runs.
//
// Why the re-link: loadPyodide({_loadSnapshot}) restores the wasm heap, but the side
// modules' instances, their table slots and the GOT live outside it. So the snapshot
// records each side module's memory/table base, every GOT value and every other table
// slot; the restore instantiates each module again at the same bases (through
// Emscripten's own loadWebAssemblyModule, with a handle whose "already loaded" flag
// makes it reuse them) before the heap copy, then checks that the table matches.
// It relies on 0.27.7 internals: any mismatch throws, and the caller boots cold.
(() => {
// Bump when what is recorded, or how, changes. 2: no JSPI, the C-call helper's slot
// reserved; 3: native modules first in the file image (the rest is read lazily).
const RECIPE = 3;
const SKIP = new Set(["/dev", "/proc", "/sys", "/lib/python312.zip", "/tmp/reckon-wheel.zip"]);
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

// --- make -------------------------------------------------------------------------

// Boots an interpreter of its own (never the one that runs cells: no JS callback may
// have entered Python before the snapshot), installs `packages` without loadPackage
// (which leaves JS references behind), imports, and returns transferable buffers.
async function makeSnapshot({ loadPyodide, indexURL, packages, env, fetch }) {
  const instances = [];
  const origInstantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async function (bin, info) {
    const res = await origInstantiate.call(this, bin, info);
    if (info && info["GOT.mem"] && info.env && typeof info.env.__memory_base === "number") {
      instances.push({ memoryBase: info.env.__memory_base, tableBase: info.env.__table_base, instance: res.instance || res, module: res.module || bin });
    }
    return res;
  };
  let M = null;
  const origCreate = self._createPyodideModule;
  self._createPyodideModule = async (settings) => (M = await origCreate(settings));
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

async function recordSnapshot(py, M, instances, { indexURL, packages, fetch }) {
  // Where WebAssembly GC is supported (every current browser), CPython gets a helper for
  // calling C functions at boot (getPyEMCountArgsPtr), in one more table slot. Node.js 20
  // (the build's snapshot) has none: reserve that slot, so the side modules land where a
  // browser's boot leaves room for them. The restore hands CPython the helper again.
  if (!M._PyEM_CountArgsPtr) M.wasmTable.grow(1);
  const bootTableLength = M.wasmTable.length;
  const lock = await (await fetch(indexURL + "pyodide-lock.json")).json();
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
  const unpack = (path, dest) => py.runPython(`_reckon_unpack(${JSON.stringify(path)}, ${JSON.stringify(dest)})`);
  const dests = { site: py.runPython("site.getsitepackages()[0]"), stdlib: py.runPython("os.path.dirname(os.__file__)"), dynlib: "/usr/lib" };
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
  const streams = M.FS.streams.map((s, i) => (s && i > 2 ? s.path : null)).filter(Boolean);
  if (streams.length) throw new SnapshotError(`files still open: ${streams.join(", ")}`);

  const libs = describeLibs(M, instances);
  const GOT = {};
  for (const [k, g] of Object.entries(M.GOT)) GOT[k] = g.value;
  const mainTableSize = Math.min(bootTableLength, ...libs.map((l) => l.tableBase));
  const table = describeTable(M, libs, mainTableSize);
  const fsBlob = packFiles(M);
  const snap = py.makeMemorySnapshot();
  const meta = { recipe: RECIPE, version: py.version, bootTableLength, mainTableSize, tableLength: M.wasmTable.length, libs, GOT, table, packages };
  return { meta, snap: snap.buffer.slice(snap.byteOffset, snap.byteOffset + snap.byteLength), fs: fsBlob.buffer };
}

function describeLibs(M, instances) {
  const names = new Map();
  const handles = new Map();
  for (const [name, dso] of Object.entries(M.LDSO.loadedLibsByName)) names.set(dso, [...(names.get(dso) || []), name]);
  for (const [h, dso] of Object.entries(M.LDSO.loadedLibsByHandle)) handles.set(dso, [...(handles.get(dso) || []), Number(h)]);
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
function describeTable(M, libs, mainTableSize) {
  const byFunc = new Map();
  const sources = [["__main__", M.LDSO.loadedLibsByName.__main__.exports], ...libs.map((l) => [l.names[0], l._dso.exports])];
  for (const [lib, exp] of sources) for (const [sym, f] of Object.entries(exp)) if (typeof f === "function" && !byFunc.has(f)) byFunc.set(f, { lib, sym });
  const jsAt = new Map();
  for (const [f, d] of byFunc) {
    const a = M.getFunctionAddress(f);
    if (a && !jsAt.has(a)) jsAt.set(a, d);
  }
  const table = [];
  for (let i = mainTableSize; i < M.wasmTable.length; i++) {
    if (libs.some((l) => i >= l.tableBase && i < l.tableBase + l.tableSize)) continue;
    const f = M.wasmTable.get(i);
    if (f === null) continue;
    const d = byFunc.get(f);
    if (d) table.push([i, d.lib, d.sym, "wasm", null]);
    else if (jsAt.get(i)) table.push([i, jsAt.get(i).lib, jsAt.get(i).sym, "js", (M.LDSO.loadedLibsByName[jsAt.get(i).lib].exports[jsAt.get(i).sym] || {}).sig || null]);
    else throw new SnapshotError(`table slot ${i} holds a function of unknown origin`);
  }
  for (const l of libs) delete l._dso;
  return table;
}

// The JS-side file system is not in the heap: [u32 header length][JSON [[path, size]]][bytes].
// Directories end with "/" (empty ones matter: matplotlib's config dir, /tmp).
function packFiles(M) {
  const files = [];
  const walk = (dir) => {
    for (const n of M.FS.readdir(dir)) {
      if (n === "." || n === "..") continue;
      const p = dir === "/" ? "/" + n : dir + "/" + n;
      if (SKIP.has(p)) continue;
      const st = M.FS.lstat(p);
      if (M.FS.isDir(st.mode)) {
        files.push([p + "/", new Uint8Array(0)]);
        walk(p);
      } else if (M.FS.isFile(st.mode)) files.push([p, M.FS.readFile(p)]);
    }
  };
  walk("/");
  // What every restore reads first: a restore reads it at once, the rest lazily.
  files.sort((a, b) => Number(readFirst(b[0])) - Number(readFirst(a[0])));
  const header = new TextEncoder().encode(JSON.stringify(files.map(([p, d]) => [p, d.length])));
  const total = 4 + header.length + files.reduce((s, [, d]) => s + d.length, 0);
  const out = new Uint8Array(total);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let off = 4 + header.length;
  for (const [, d] of files) {
    out.set(d, off);
    off += d.length;
  }
  return out;
}

// Native modules (compiled at once) and package metadata (read by Pyodide's package
// index at every boot) lead the file image and are read eagerly.
function readFirst(path) {
  return path.endsWith(".so") || path.includes(".dist-info/");
}

// --- restore ----------------------------------------------------------------------

// The file image, from an ArrayBuffer (every file a view of it) or from a Blob: then
// only the header and the native modules are read now; every other file is a
// {blob, offset, size} that restoreFiles() reads when Python first opens it.
async function openImage(source) {
  const isBlob = typeof Blob !== "undefined" && source instanceof Blob;
  const total = isBlob ? source.size : source.byteLength;
  const read = async (start, end) => (isBlob ? new Uint8Array(await source.slice(start, end).arrayBuffer()) : new Uint8Array(source, start, end - start));
  if (total < 4) throw new SnapshotError("the file image is truncated");
  const hlen = new DataView((await read(0, 4)).slice().buffer).getUint32(0, true);
  if (4 + hlen > total) throw new SnapshotError("the file image is truncated");
  const entries = JSON.parse(new TextDecoder().decode(await read(4, 4 + hlen)));
  let off = 4 + hlen;
  const placed = entries.map(([path, size]) => [path, (off += size) - size, size]);
  if (off !== total) throw new SnapshotError("the file image is truncated or padded");
  const eager = placed.filter(([path]) => !isBlob || readFirst(path));
  const first = eager.length ? eager[0][1] : off;
  const last = eager.length ? eager[eager.length - 1][1] + eager[eager.length - 1][2] : off;
  const bytes = await read(first, last); // contiguous (packFiles)
  const files = new Map();
  const later = { whole: null }; // the whole image, once read in the background (preload)
  for (const [path, start, size] of placed) {
    const inRange = start >= first && start + size <= last;
    files.set(path, inRange ? bytes.subarray(start - first, start - first + size) : { blob: source, offset: start, size, later });
  }
  // After the start: one read of the whole image, so later opens need no sync read each.
  files.preload = () => (isBlob ? source.arrayBuffer().then((buffer) => (later.whole = new Uint8Array(buffer)), () => {}) : null);
  return files;
}

function restoreFiles(M, files) {
  const { FS } = M;
  const MEMFS = FS.filesystems.MEMFS;
  const dirs = new Map();
  const dirNode = (dir) => {
    let n = dirs.get(dir);
    if (!n) {
      FS.mkdirTree(dir);
      n = FS.lookupPath(dir).node;
      dirs.set(dir, n);
    }
    return n;
  };
  for (const [path, data] of files) {
    if (path.endsWith("/")) {
      dirNode(path.slice(0, -1));
      continue;
    }
    const cut = path.lastIndexOf("/");
    const parent = dirNode(path.slice(0, cut) || "/");
    const name = path.slice(cut + 1);
    if (parent.contents && parent.contents[name]) {
      FS.writeFile(path, data);
      continue;
    }
    const node = MEMFS.createNode(parent, name, 0o100644, 0);
    if (data instanceof Uint8Array) {
      node.contents = data; // MEMFS takes the bytes as they are (a subarray is fine)
      node.usedBytes = data.length;
    } else readLater(FS, node, data);
  }
}

// MEMFS keeps a file's bytes in node.contents and its size in node.usedBytes: the
// bytes are read from the image (synchronously: a worker may) the first time anything
// touches them, then kept like any other file's.
function readLater(FS, node, { blob, offset, size, later }) {
  const keep = (value) => Object.defineProperty(node, "contents", { value, writable: true, configurable: true, enumerable: true });
  Object.defineProperty(node, "contents", {
    configurable: true,
    enumerable: true,
    get() {
      let data;
      try {
        data = later.whole ? later.whole.subarray(offset, offset + size) : new Uint8Array(new FileReaderSync().readAsArrayBuffer(blob.slice(offset, offset + size)));
      } catch {
        throw new FS.ErrnoError(29); // EIO: the image became unreadable
      }
      keep(data);
      return data;
    },
    set: keep,
  });
  node.usedBytes = size;
}

function relink(M, meta, compiled) {
  const { LDSO, GOT, wasmTable } = M;
  for (const [sym, value] of Object.entries(meta.GOT)) {
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
async function restoreSnapshot({ loadPyodide, options, snapshot, wasm = null, marks = {}, smoke = true }) {
  const t0 = performance.now();
  const mark = (name) => (marks[name] = Math.round(performance.now() - t0));
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
    const compile = (name) => WebAssembly.compile(files.get(name)).catch((err) => Promise.reject(new SnapshotError(`${name} does not compile: ${err.message}`)));
    const compiled = await Promise.all(meta.libs.map(async (l) => [l.names[0], await compile(l.names[0])]));
    mark("libsCompiled");
    return { files, compiled: new Map(compiled) };
  });
  image.catch(() => {});
  const origCreate = self._createPyodideModule;
  self._createPyodideModule = async (settings) => {
    if (main) {
      const module = await main;
      // Instantiated from the module compiled above (a worker may instantiate synchronously).
      settings.instantiateWasm = (imports, receive) => receive(new WebAssembly.Instance(module, imports), module);
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
})();
