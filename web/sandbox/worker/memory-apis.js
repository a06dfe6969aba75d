"use strict";
// Memory that browser APIs make for a cell without going through a counted
// constructor (memory.js counts those): the third outside attack held 2.3 GB under a
// 2 GiB ceiling with ImageData, OffscreenCanvas and a WebAssembly module that grows
// its own memory from inside (SECURITY.md, M4). No API tells a worker what it really
// holds (measureUserAgentSpecificMemory is the page's, reports the sandbox frame as one
// opaque zero, and answers after about 20 s; performance.memory is not in workers), so
// the worker keeps the account itself, of every API here that makes memory:
// - images: ImageData (made, or from a 2D context's getImageData/createImageData),
//   OffscreenCanvas at width x height x 4 bytes (resized too), createImageBitmap's bitmaps;
// - WebAssembly memories at their current size whenever the ceiling is checked: those
//   a cell makes, and those a module of a cell defines, which it may not export: the
//   module's bytes get an export of each (a name starting `__reckon_memory_`), so the
//   worker can read their size;
// - Blob and File contents; the buffers of Blob and Response arrayBuffer()/bytes(),
//   structuredClone, TextEncoder.encode and stream reads (from 16 KiB: smaller ones
//   are the runtime's own strings and chunks).
// A part of the sandbox worker (see main.js): nothing here is reachable from a cell.

const API_MIN_BYTES = 16 * 1024;
/** @type {Array<WeakRef<any>>} WebAssembly memories of cells, read at every check */
let memories = [];
const memoriesSeen = new WeakSet();

/** True if `memory` (a WebAssembly.Memory a cell made, or a module of a cell holds)
 * is counted from now on. `force`: for a cell's call that has returned (a promise).
 * @param {any} memory @param {boolean} [force] */
function countMemory(memory, force = false) {
  if (!memory || memoriesSeen.has(memory) || !(force || byCell())) return false;
  if (pyodide && memory.buffer === pyodide._module.HEAP8.buffer) return false; // Pyodide's heap, counted as such
  memoriesSeen.add(memory);
  memories.push(new WeakRef(memory));
  return true;
}

/** What the WebAssembly memories of cells hold now. */
function memoryBytes() {
  let sum = 0;
  for (const ref of memories) {
    const memory = ref.deref();
    if (memory) sum += memory.buffer.byteLength;
  }
  return sum;
}

/** Count what an API made: a buffer, a view's buffer, an image's pixels, a Blob, or
 * (structuredClone) the buffers inside an object, a few levels down.
 * @param {any} value @param {number} [depth] */
function countValue(value, depth = 0) {
  if (!value || typeof value !== "object" || depth > 3) return;
  const tag = Object.prototype.toString.call(value);
  if (tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]") {
    if (value.byteLength >= API_MIN_BYTES) countBuffer(value, value.byteLength, true);
  } else if (ArrayBuffer.isView(value)) countValue(value.buffer, depth);
  else if (tag === "[object ImageData]") countValue(value.data.buffer, depth);
  else if (tag === "[object Blob]" || tag === "[object File]") countBuffer(value, value.size, true);
  else if (tag === "[object ImageBitmap]") countBuffer(value, value.width * value.height * 4, true);
  else if (depth < 3) for (const item of Object.values(value).slice(0, 10_000)) countValue(item, depth + 1);
}

/** Replace `owner[name]` (a method) for good by one that hands what it made to
 * `made`, when a cell called it. @param {any} owner @param {string} name
 * @param {(out: any, self: any, args: any[]) => any} made */
function wrapMethod(owner, name, made) {
  // Found up the chain (the global scope's own operations live on its prototype),
  // put on `owner` itself.
  let described;
  for (let on = owner; on && !described; on = Object.getPrototypeOf(on)) described = Object.getOwnPropertyDescriptor(on, name);
  const original = described && described.value;
  if (typeof original !== "function") return;
  Object.defineProperty(owner, name, {
    value: function (/** @type {any[]} */ ...args) {
      const cell = byCell();
      const out = original.apply(this, args);
      return cell ? made(out, this, args) : out;
    },
    writable: false,
    configurable: false,
  });
}

/** A promise's value counted when it arrives; the promise itself handed on as it is. */
const countLater = (/** @type {any} */ promise) => {
  if (promise && typeof promise.then === "function") promise.then((value) => countValue(value), () => {});
  return promise;
};
const countNow = (/** @type {any} */ value) => {
  countValue(value);
  return value;
};

function countBrowserApis() {
  countImages();
  countWebAssembly();
  for (const name of ["Blob", "File"]) wrapConstructor(self, name, (made) => countBuffer(made, made.size));
  for (const owner of [self.Blob && Blob.prototype, self.Response && Response.prototype, self.Request && Request.prototype]) {
    for (const name of ["arrayBuffer", "bytes", "blob"]) wrapMethod(owner, name, countLater);
  }
  wrapMethod(self, "structuredClone", countNow);
  wrapMethod(self.TextEncoder && TextEncoder.prototype, "encode", countNow);
  wrapMethod(self.ReadableStreamDefaultReader && ReadableStreamDefaultReader.prototype, "read", (promise) => {
    if (promise && typeof promise.then === "function") promise.then((step) => step && countValue(step.value), () => {});
    return promise;
  });
}

function countImages() {
  wrapConstructor(self, "ImageData", (made) => countBuffer(made.data.buffer));
  const context = self.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype;
  for (const name of ["getImageData", "createImageData"]) wrapMethod(context, name, countNow);
  wrapMethod(self, "createImageBitmap", countLater);
  if (typeof self.OffscreenCanvas !== "function") return;
  /** @type {WeakMap<object, {bytes: number}>} a cell's canvases, by their entries */
  const canvases = new WeakMap();
  wrapConstructor(self, "OffscreenCanvas", (made) => {
    const entry = countBuffer(made, Math.max(1, made.width * made.height * 4));
    if (entry) canvases.set(made, entry);
    return entry;
  });
  // A canvas holds width x height x 4 bytes: resized, it holds more or less.
  for (const side of ["width", "height"]) {
    const described = Object.getOwnPropertyDescriptor(OffscreenCanvas.prototype, side);
    if (!described || !described.set || !described.get) continue;
    const { get, set } = described;
    Object.defineProperty(OffscreenCanvas.prototype, side, {
      get,
      set(/** @type {number} */ value) {
        set.call(this, value);
        const entry = canvases.get(this);
        if (!entry) return;
        const now = this.width * this.height * 4;
        bufferBytes += now - entry.bytes;
        entry.bytes = now;
      },
      configurable: false,
    });
  }
}

/** Every memory an instance of a cell's module exports (wasm-exports.js added
 * exports for those it defines and did not export). @param {any} instance @param {boolean} [force] */
function countInstance(instance, force = false) {
  const exports = instance && instance.exports;
  if (!exports) return;
  for (const value of Object.values(exports)) {
    if (Object.prototype.toString.call(value) === "[object WebAssembly.Memory]") countMemory(value, force);
  }
}

function countWebAssembly() {
  const wasm = WebAssembly;
  const { Module, Instance, compile, instantiate } = wasm;
  /** The bytes as a cell gave them, with its own memories exported. @param {any} source */
  const exported = (source) => (byCell() ? withMemoryExports(source) : source);
  const swap = (/** @type {string} */ name, /** @type {Function} */ original, /** @type {ProxyHandler<any>} */ handler) => {
    const proxy = new Proxy(original, handler);
    if (original.prototype) Object.defineProperty(original.prototype, "constructor", { value: proxy, writable: false, configurable: false });
    Object.defineProperty(wasm, name, { value: proxy, writable: false, configurable: false });
  };
  swap("Module", Module, {
    construct: (target, args, newTarget) => Reflect.construct(target, [exported(args[0]), ...args.slice(1)], newTarget === wasm.Module ? target : newTarget),
  });
  swap("Instance", Instance, {
    construct(target, args, newTarget) {
      const made = Reflect.construct(target, args, newTarget === wasm.Instance ? target : newTarget);
      if (byCell()) countInstance(made);
      return made;
    },
  });
  swap("compile", compile, { apply: (target, that, args) => Reflect.apply(target, that, [exported(args[0]), ...args.slice(1)]) });
  swap("instantiate", instantiate, {
    apply(target, that, args) {
      const cell = byCell();
      const promise = Reflect.apply(target, that, [exported(args[0]), ...args.slice(1)]);
      if (cell) promise.then((out) => countInstance(out && out.instance ? out.instance : out, true), () => {});
      return promise;
    },
  });
  // Streaming compiles read the Response first, so its bytes go the same way.
  for (const [name, whole] of [["compileStreaming", "compile"], ["instantiateStreaming", "instantiate"]]) {
    const original = wasm[name];
    if (typeof original !== "function") continue;
    swap(name, original, {
      apply(target, that, args) {
        if (!byCell()) return Reflect.apply(target, that, args);
        const [source, ...rest] = args;
        const bytes = Promise.resolve(source).then((response) => response.arrayBuffer());
        if (whole === "compile") return bytes.then((b) => compile.call(wasm, withMemoryExports(b), ...rest));
        return bytes.then((b) => instantiate.call(wasm, withMemoryExports(b), ...rest)).then((out) => {
          countInstance(out.instance, true);
          return out;
        });
      },
    });
  }
}
