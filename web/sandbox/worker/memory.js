"use strict";
// JS memory a cell makes outside the WebAssembly heap, counted against the memory
// ceiling together with the heap. Through `js` a cell can make ArrayBuffers, which
// live outside Pyodide's heap: the second outside attack held 8 GiB of them with no
// restart (SECURITY.md, F4).
// A part of the sandbox worker (see main.js): nothing here is reachable from a cell.
/* global countBrowserApis */
/* exported WorkerMemory, wrapConstructor */
//
// Every buffer made by a constructor (ArrayBuffer, SharedArrayBuffer, the typed
// arrays, WebAssembly.Memory) while a cell runs is counted while it lives. Copies go
// through the same constructors (slice, map and friends make theirs through
// `constructor[Symbol.species]`, which is a wrapped constructor too), so they count;
// a view over a buffer that exists (the heap's) makes nothing and counts nothing.
// Buffers are held by WeakRefs, which is exact but keeps a buffer a cell drops alive
// until its run returns to the event loop (a WeakRef's target lives through the job
// that made it): a cell that makes and drops big buffers in one run is held to all
// of them at once. Buffers the runtime makes for itself between runs (a file read for
// the page) are not counted. Files a cell writes outside /data are memory too:
// countFileSystem. Not seen: buffers a browser API makes by other means (Blob or
// Response arrayBuffer(), structuredClone, TextEncoder), and plain arrays and
// strings, which V8's own heap limit ends by ending the renderer (the page then
// replaces the frame: SECURITY.md, "A dead sandbox").

/** The ceiling's account: what a cell holds besides the heap, and whether it is over. */
class WorkerMemory {
  /** @param {() => void} onOver told when a counted constructor puts a cell over the ceiling (it then throws) */
  constructor(onOver) {
    this.onOver = onOver;
    this.limit = 2048 * 1024 * 1024;
    /** @type {any} the interpreter, once booted: its heap counts, its files are watched */
    this.pyodide = null;
    this.bufferBytes = 0; // the buffers below, as last counted
    this.fileBytes = 0; // what files a cell wrote hold
    this.cellRuns = false; // counting is on: a cell runs (SandboxWorker.run)
    this.runtimeCalls = 0; // > 0 inside the file system's own calls, which count nothing
    /** @type {Array<{ref: WeakRef<object>, bytes: number}>} */
    this.buffers = [];
    this.counted = new WeakSet();
    /** @type {WeakMap<object, number>} a file's storage as counted (countFileSystem) */
    this.fileNodes = new WeakMap();
    /** @type {Array<WeakRef<any>>} WebAssembly memories of cells, read at every check (memory-apis.js) */
    this.memories = [];
    this.memoriesSeen = new WeakSet();
  }

  /** A cell's code is running now (not the runtime's own calls): what is made counts. */
  byCell() {
    return this.cellRuns && this.runtimeCalls === 0;
  }

  /** Count a buffer (or anything that holds memory: an image, a canvas, a Blob) once,
   * while it lives. `force`: made for a cell's call that has since returned (an API's
   * promise). @param {any} buffer @param {number} [bytes] @param {boolean} [force] */
  countBuffer(buffer, bytes = buffer && (buffer.maxByteLength || buffer.byteLength), force = false) {
    if (!(force || this.byCell()) || !buffer || this.counted.has(buffer) || !bytes) return null;
    this.counted.add(buffer);
    const entry = { ref: new WeakRef(buffer), bytes };
    this.buffers.push(entry);
    this.bufferBytes += bytes;
    return entry;
  }

  /** True if `memory` (a WebAssembly.Memory a cell made, or a module of a cell holds)
   * is counted from now on. `force`: for a cell's call that has returned (a promise).
   * @param {any} memory @param {boolean} [force] */
  countMemory(memory, force = false) {
    if (!memory || this.memoriesSeen.has(memory) || !(force || this.byCell())) return false;
    if (this.pyodide && memory.buffer === this.pyodide._module.HEAP8.buffer) return false; // Pyodide's heap, counted as such
    this.memoriesSeen.add(memory);
    this.memories.push(new WeakRef(memory));
    return true;
  }

  /** What the WebAssembly memories of cells hold now. */
  memoryBytes() {
    let sum = 0;
    for (const ref of this.memories) {
      const memory = ref.deref();
      if (memory) sum += memory.buffer.byteLength;
    }
    return sum;
  }

  /** Drop the buffers collected since, and sum the rest. */
  recount() {
    this.buffers = this.buffers.filter((entry) => entry.ref.deref() !== undefined);
    this.memories = this.memories.filter((ref) => ref.deref() !== undefined);
    this.bufferBytes = this.buffers.reduce((sum, entry) => sum + entry.bytes, 0);
  }

  /**
   * A cell's JS that allocates in a loop (js.eval("for (;;) ...")) runs no Python, so
   * the interrupt that enforces the ceiling never comes, and V8's own limit then ends
   * the renderer: the whole tab (SECURITY.md, M3). So a counted constructor that puts
   * a cell over the ceiling throws instead, which ends such a loop where it allocates;
   * the run is then ended as over the ceiling (onOver), whatever the cell does with
   * the error.
   */
  stopOverCeiling() {
    if (!this.byCell() || !this.overCeiling()) return;
    this.onOver();
    throw new RangeError(`Over the sandbox memory ceiling (${Math.round(this.limit / 1048576)} MB; ${this.describe()}): the sandbox is restarted.`);
  }

  /** Count from now on: called once the interpreter is up, before any cell runs. @param {any} pyodide */
  start(pyodide) {
    this.pyodide = pyodide;
    this.countFileSystem();
    for (const name of ["ArrayBuffer", "SharedArrayBuffer"]) wrapConstructor(this, self, name, (made) => this.countBuffer(made));
    // new Array(n) holds up to n slots of 8 bytes (arrays grown by push or written as
    // literals are not seen: V8's heap limit is all that holds them, M3).
    wrapConstructor(this, self, "Array", (made, args) => (args.length === 1 && typeof args[0] === "number" && args[0] >= 4096 ? this.countBuffer(made, args[0] * 8) : null));
    const typed = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
    for (const name of typed) {
      // new Uint8Array(heap.buffer, offset, length) is a view: nothing made.
      wrapConstructor(this, self, name, (made, args) => (isBuffer(args[0]) ? null : this.countBuffer(made.buffer)));
    }
    // Pyodide's own memory was made before this; memories made from here on count, at
    // the size they have whenever the ceiling is checked: a module can grow a memory
    // from inside (memory.grow), which no JS method sees (memory-apis.js, M4).
    wrapConstructor(this, WebAssembly, "Memory", (made) => this.countMemory(made));
    // transfer() moves a buffer's memory into a new buffer that no constructor made.
    const memory = this;
    for (const name of ["transfer", "transferToFixedLength"]) {
      const move = /** @type {any} */ (ArrayBuffer.prototype)[name];
      if (typeof move !== "function") continue;
      Object.defineProperty(ArrayBuffer.prototype, name, {
        value(/** @type {number | undefined} */ length) {
          const moved = move.call(this, length);
          memory.countBuffer(moved);
          return moved;
        },
        writable: false,
        configurable: false,
      });
    }
    countBrowserApis(this); // memory-apis.js
  }

  /**
   * Files a cell writes outside /data live in memory (MEMFS), outside the heap too:
   * counted by what each write, resize or unlink changes of a file's storage, not by
   * the buffers MEMFS makes on the way (it grows a file by copying it into a larger
   * array, so those copies would count several times over).
   */
  countFileSystem() {
    const memfs = this.pyodide.FS.filesystems.MEMFS;
    const files = this.fileNodes;
    /** @param {any} node */
    const settle = (node) => {
      if (!files.has(node) && !this.cellRuns) return; // the runtime's own files, made between runs
      this.countFile(node);
    };
    const memory = this;
    /** @param {any} owner @param {string} name @param {(args: any[]) => any} nodeOf */
    const watch = (owner, name, nodeOf) => {
      const original = owner && owner[name];
      if (typeof original !== "function") return;
      owner[name] = function (/** @type {any[]} */ ...args) {
        const node = nodeOf(args);
        memory.runtimeCalls += 1;
        try {
          return original.apply(this, args);
        } finally {
          memory.runtimeCalls -= 1;
          if (memory.runtimeCalls === 0 && node) settle(node);
        }
      };
    };
    watch(memfs, "expandFileStorage", (args) => args[0]);
    watch(memfs, "resizeFileStorage", (args) => args[0]);
    // Nodes call the copies in ops_table (made when the first node was), not these.
    const table = memfs.ops_table;
    watch(table.file.stream, "write", (args) => args[0] && args[0].node);
    const unlink = table.dir.node.unlink;
    table.dir.node.unlink = function (/** @type {any} */ parent, /** @type {string} */ name) {
      const node = parent && parent.contents ? parent.contents[name] : null;
      const result = unlink.call(this, parent, name);
      if (node && files.has(node)) {
        memory.fileBytes -= files.get(node) || 0;
        files.delete(node);
      }
      return result;
    };
  }

  /** Count (or count again) what a file's storage holds now: a cell's writes, and the
   * files the page writes between runs (restored outputs, writeFile()). @param {any} node */
  countFile(node) {
    if (!node) return;
    const now = node.contents && typeof node.contents.length === "number" ? node.contents.length : 0;
    this.fileBytes += now - (this.fileNodes.get(node) || 0);
    this.fileNodes.set(node, now);
  }

  /** Pyodide's heap, in bytes. */
  heapBytes() {
    return this.pyodide ? this.pyodide._module.HEAP8.buffer.byteLength : 0;
  }

  /** The bytes the ceiling counts: Pyodide's heap, the buffers and the files a cell made. */
  inUse() {
    return this.heapBytes() + this.bufferBytes + this.fileBytes + this.memoryBytes();
  }

  /** Over the ceiling, counting only the buffers still alive (the slow count runs only
   * when the quick one is over: this is asked every few bytecodes). */
  overCeiling() {
    if (this.inUse() <= this.limit) return false;
    this.recount();
    return this.inUse() > this.limit;
  }

  /** What is in use, for the MemoryError message. */
  describe() {
    const mb = (/** @type {number} */ bytes) => `${Math.round(bytes / 1048576).toLocaleString("en")} MB`;
    const heap = this.heapBytes();
    const wasm = this.memoryBytes();
    return `${mb(heap + this.bufferBytes + this.fileBytes + wasm)} in use: Python's heap ${mb(heap)}, JS buffers and images ${mb(this.bufferBytes)}, WebAssembly memories ${mb(wasm)}, files in memory ${mb(this.fileBytes)}`;
  }
}

/** @param {unknown} value */
function isBuffer(value) {
  const tag = Object.prototype.toString.call(value);
  return tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]";
}

/**
 * Put a counting constructor in place of owner[name], for good: not writable, not
 * configurable, and the prototype's `constructor` too, so neither a cell nor
 * `x.constructor` gets the uncounted one back.
 * @param {WorkerMemory} memory @param {any} owner @param {string} name @param {(made: any, args: any[]) => unknown} onMade
 * (what it returns: whether it counted something)
 */
function wrapConstructor(memory, owner, name, onMade) {
  const original = owner[name];
  if (typeof original !== "function") return;
  /** @type {any} */
  const counting = new Proxy(original, {
    construct(target, args, newTarget) {
      const made = Reflect.construct(target, args, newTarget === counting ? target : newTarget);
      if (onMade(made, args)) memory.stopOverCeiling(); // only what was counted now: not a view
      return made;
    },
    // Array(n) without `new` makes an array too (the others throw without it).
    apply(target, that, args) {
      const made = Reflect.apply(target, that, args);
      if (onMade(made, args)) memory.stopOverCeiling();
      return made;
    },
  });
  Object.defineProperty(original.prototype, "constructor", { value: counting, writable: false, configurable: false });
  Object.defineProperty(owner, name, { value: counting, writable: false, configurable: false });
}
