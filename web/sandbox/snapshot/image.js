"use strict";
// The file image: the JS-side file system, which is not in the heap, packed into one
// buffer when the snapshot is made and unpacked into MEMFS at a restore, its big
// files read only when Python first opens them. A part of the snapshot recipe (see make.js).
/* global SnapshotError */
/* exported packFiles, openImage, restoreFiles */

const SKIP = new Set(["/dev", "/proc", "/sys", "/lib/python312.zip", "/tmp/reckon-wheel.zip"]);

// The JS-side file system is not in the heap: [u32 header length][JSON [[path, size]]][bytes].
// Directories end with "/" (empty ones matter: matplotlib's config dir, /tmp).
/** @param {any} M Pyodide's Emscripten module */
function packFiles(M) {
  /** @type {Array<[string, Uint8Array]>} */
  const files = [];
  /** @param {string} dir */
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
/** @param {string} path */
function readFirst(path) {
  return path.endsWith(".so") || path.includes(".dist-info/");
}

// The file image, from an ArrayBuffer (every file a view of it) or from a Blob: then
// only the header and the native modules are read now; every other file is a
// {blob, offset, size} that restoreFiles() reads when Python first opens it.
/** @param {any} source an ArrayBuffer or a Blob */
async function openImage(source) {
  const isBlob = typeof Blob !== "undefined" && source instanceof Blob;
  const total = isBlob ? source.size : source.byteLength;
  /** @param {number} start @param {number} end @returns {Promise<Uint8Array>} */
  const read = async (start, end) => (isBlob ? new Uint8Array(await source.slice(start, end).arrayBuffer()) : new Uint8Array(source, start, end - start));
  if (total < 4) throw new SnapshotError("the file image is truncated");
  const hlen = new DataView((await read(0, 4)).slice().buffer).getUint32(0, true);
  if (4 + hlen > total) throw new SnapshotError("the file image is truncated");
  /** @type {Array<[string, number]>} */
  const entries = JSON.parse(new TextDecoder().decode(await read(4, 4 + hlen)));
  let off = 4 + hlen;
  /** @type {Array<[string, number, number]>} */
  const placed = entries.map(([path, size]) => [path, (off += size) - size, size]);
  if (off !== total) throw new SnapshotError("the file image is truncated or padded");
  const eager = placed.filter(([path]) => !isBlob || readFirst(path));
  const first = eager.length ? eager[0][1] : off;
  const last = eager.length ? eager[eager.length - 1][1] + eager[eager.length - 1][2] : off;
  const bytes = await read(first, last); // contiguous (packFiles)
  /** @type {Map<string, any>} */
  const files = new Map();
  /** @type {{whole: Uint8Array | null}} */
  const later = { whole: null }; // the whole image, once read in the background (preload)
  for (const [path, start, size] of placed) {
    const inRange = start >= first && start + size <= last;
    files.set(path, inRange ? bytes.subarray(start - first, start - first + size) : { blob: source, offset: start, size, later });
  }
  // After the start: one read of the whole image, so later opens need no sync read each.
  files.preload = () => (isBlob ? source.arrayBuffer().then((buffer) => (later.whole = new Uint8Array(buffer)), () => {}) : null);
  return files;
}

/** @param {any} M Pyodide's Emscripten module @param {Map<string, any>} files (openImage) */
function restoreFiles(M, files) {
  const { FS } = M;
  const MEMFS = FS.filesystems.MEMFS;
  /** @type {Map<string, any>} */
  const dirs = new Map();
  /** @param {string} dir */
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
/** @param {any} FS @param {any} node @param {{blob: Blob, offset: number, size: number, later: {whole: Uint8Array | null}}} where */
function readLater(FS, node, { blob, offset, size, later }) {
  const keep = (/** @type {Uint8Array} */ value) => Object.defineProperty(node, "contents", { value, writable: true, configurable: true, enumerable: true });
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
