"use strict";
// The files a run wrote under /output, as the worker sees them: the page stores these
// (web/persist.js), so the list is made here, out of the cells' reach, and not
// by the kernel, whose code a cell can replace. Only regular files of the in-memory
// file system count, reached from / without following a link: a link to an upload,
// a folder linked into /output, /output itself replaced by a link to /, or an upload
// mounted there are not files a cell wrote (the third outside attack stored 1 GB
// through 20 links to one upload, and 4,617 files through a linked /output: SECURITY.md,
// M1). The file system has no hard links (every node has one name).
// A part of the sandbox worker (see main.js): nothing here is reachable from a cell.
/* exported outputState, outputChanges, readOutput */

const OUTPUT_DIR = "/output";

/** The node at `path` reached without following any link or entering any mount,
 * or null. @param {any} FS Pyodide's file system @param {string} path */
function plainNode(FS, path) {
  let node = FS.root;
  for (const name of path.split("/").filter(Boolean)) {
    if (!FS.isDir(node.mode) || node.mounted || !node.contents || typeof node.contents !== "object") return null;
    node = Object.hasOwn(node.contents, name) ? node.contents[name] : null;
    if (!node || FS.isLink(node.mode)) return null;
  }
  return node;
}

/** A regular in-memory file under /output, reached without a link: its node, or null.
 * @param {any} FS @param {string} path */
function outputNode(FS, path) {
  if (typeof path !== "string" || !path.startsWith(OUTPUT_DIR + "/")) return null;
  const node = plainNode(FS, path);
  const memfs = FS.filesystems.MEMFS;
  return node && FS.isFile(node.mode) && node.mount && node.mount.type === memfs ? node : null;
}

/** Every regular file under /output, walked in memory without following a link or
 * entering a mount: path -> {node, size, timestamp}. @param {any} pyodide the interpreter, if booted */
function outputState(pyodide) {
  /** @type {Map<string, {node: any, size: number, timestamp: number}>} */
  const state = new Map();
  const FS = pyodide && pyodide.FS;
  const top = FS ? plainNode(FS, OUTPUT_DIR) : null;
  if (!top || !FS.isDir(top.mode) || top.mounted) return state;
  const memfs = FS.filesystems.MEMFS;
  /** @param {any} dir @param {string} path */
  const walk = (dir, path) => {
    if (!dir.contents || typeof dir.contents !== "object") return;
    for (const [name, node] of Object.entries(/** @type {Record<string, any>} */ (dir.contents))) {
      if (!node || FS.isLink(node.mode) || node.mount !== dir.mount) continue;
      const full = `${path}/${name}`;
      if (FS.isDir(node.mode)) {
        if (!node.mounted) walk(node, full);
      } else if (FS.isFile(node.mode) && node.mount.type === memfs) {
        state.set(full, { node, size: node.usedBytes || 0, timestamp: node.timestamp || 0 });
      }
    }
  };
  walk(top, OUTPUT_DIR);
  return state;
}

/** What changed under /output between two states: the run result's `files` (created
 * or modified, by path) and the paths that are gone.
 * @param {ReturnType<typeof outputState>} before @param {ReturnType<typeof outputState>} after */
function outputChanges(before, after) {
  const files = [];
  for (const path of [...after.keys()].sort()) {
    const now = /** @type {{node: any, size: number, timestamp: number}} */ (after.get(path));
    const was = before.get(path);
    if (!was) files.push({ path, size: now.size, change: "created" });
    else if (was.node !== now.node || was.size !== now.size || was.timestamp !== now.timestamp) files.push({ path, size: now.size, change: "modified" });
  }
  const deleted = [...before.keys()].filter((path) => !after.has(path)).sort();
  return { files, deleted };
}

/** The bytes of an output file for the page to keep; refuses anything outputNode does.
 * @param {any} FS @param {{path: string}} msg */
function readOutput(FS, msg) {
  const node = outputNode(FS, msg.path);
  if (!node) return { status: "error", message: `${msg.path} is not a file a cell wrote under /output (a link, a mount or a folder), so it is not kept` };
  const used = node.usedBytes || 0;
  const contents = node.contents || [];
  const data = new Uint8Array(contents.subarray ? contents.subarray(0, used) : contents.slice(0, used));
  return /** @type {[any, Transferable[]]} */ ([{ status: "ok", path: msg.path, size: data.length, data }, [data.buffer]]);
}
