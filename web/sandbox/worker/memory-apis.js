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
/* global wrapConstructor, withMemoryExports */
/* exported countBrowserApis */

const API_MIN_BYTES = 16 * 1024;

/** Count what an API made: a buffer, a view's buffer, an image's pixels, a Blob, or
 * (structuredClone) the buffers inside an object, a few levels down.
 * @param {WorkerMemory} memory @param {any} value @param {number} [depth] */
function countValue(memory, value, depth = 0) {
  if (!value || typeof value !== "object" || depth > 3) return;
  const tag = Object.prototype.toString.call(value);
  if (tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]") {
    if (value.byteLength >= API_MIN_BYTES) memory.countBuffer(value, value.byteLength, true);
  } else if (ArrayBuffer.isView(value)) countValue(memory, value.buffer, depth);
  else if (tag === "[object ImageData]") countValue(memory, value.data.buffer, depth);
  else if (tag === "[object Blob]" || tag === "[object File]") memory.countBuffer(value, value.size, true);
  else if (tag === "[object ImageBitmap]") memory.countBuffer(value, value.width * value.height * 4, true);
  else if (depth < 3) for (const item of Object.values(value).slice(0, 10_000)) countValue(memory, item, depth + 1);
}

/** Replace `owner[name]` (a method) for good by one that hands what it made to
 * `made`, when a cell called it. @param {WorkerMemory} memory @param {any} owner @param {string} name
 * @param {(out: any, self: any, args: any[]) => any} made */
function wrapMethod(memory, owner, name, made) {
  // Found up the chain (the global scope's own operations live on its prototype),
  // put on `owner` itself.
  let described;
  for (let on = owner; on && !described; on = Object.getPrototypeOf(on)) described = Object.getOwnPropertyDescriptor(on, name);
  const original = described && described.value;
  if (typeof original !== "function") return;
  Object.defineProperty(owner, name, {
    value: function (/** @type {any[]} */ ...args) {
      const cell = memory.byCell();
      const out = original.apply(this, args);
      return cell ? made(out, this, args) : out;
    },
    writable: false,
    configurable: false,
  });
}

/** What an API made, counted: a promise's value when it arrives (the promise itself
 * handed on as it is), or the value at once. @param {WorkerMemory} memory */
function counters(memory) {
  return {
    later: (/** @type {any} */ promise) => {
      if (promise && typeof promise.then === "function") promise.then((/** @type {any} */ value) => countValue(memory, value), () => {});
      return promise;
    },
    now: (/** @type {any} */ value) => {
      countValue(memory, value);
      return value;
    },
  };
}

/** @param {WorkerMemory} memory */
function countBrowserApis(memory) {
  const count = counters(memory);
  countImages(memory);
  countWebAssembly(memory);
  for (const name of ["Blob", "File"]) wrapConstructor(memory, self, name, (made) => memory.countBuffer(made, made.size));
  for (const owner of [self.Blob && Blob.prototype, self.Response && Response.prototype, self.Request && Request.prototype]) {
    for (const name of ["arrayBuffer", "bytes", "blob"]) wrapMethod(memory, owner, name, count.later);
  }
  wrapMethod(memory, self, "structuredClone", count.now);
  wrapMethod(memory, self.TextEncoder && TextEncoder.prototype, "encode", count.now);
  wrapMethod(memory, self.ReadableStreamDefaultReader && ReadableStreamDefaultReader.prototype, "read", (promise) => {
    if (promise && typeof promise.then === "function") promise.then((/** @type {any} */ step) => step && countValue(memory, step.value), () => {});
    return promise;
  });
}

/** @param {WorkerMemory} memory */
function countImages(memory) {
  const count = counters(memory);
  wrapConstructor(memory, self, "ImageData", (made) => memory.countBuffer(made.data.buffer));
  const context = self.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype;
  for (const name of ["getImageData", "createImageData"]) wrapMethod(memory, context, name, count.now);
  wrapMethod(memory, self, "createImageBitmap", count.later);
  if (typeof self.OffscreenCanvas !== "function") return;
  /** @type {WeakMap<object, {bytes: number}>} a cell's canvases, by their entries */
  const canvases = new WeakMap();
  wrapConstructor(memory, self, "OffscreenCanvas", (made) => {
    const entry = memory.countBuffer(made, Math.max(1, made.width * made.height * 4));
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
        memory.bufferBytes += now - entry.bytes;
        entry.bytes = now;
      },
      configurable: false,
    });
  }
}

/** Every memory an instance of a cell's module exports (wasm-exports.js added
 * exports for those it defines and did not export).
 * @param {WorkerMemory} memory @param {any} instance @param {boolean} [force] */
function countInstance(memory, instance, force = false) {
  const exports = instance && instance.exports;
  if (!exports) return;
  for (const value of Object.values(exports)) {
    if (Object.prototype.toString.call(value) === "[object WebAssembly.Memory]") memory.countMemory(value, force);
  }
}

/** @param {WorkerMemory} memory */
function countWebAssembly(memory) {
  const wasm = /** @type {any} */ (WebAssembly);
  const { Module, Instance, compile, instantiate } = wasm;
  /** The bytes as a cell gave them, with its own memories exported. @param {any} source */
  const exported = (source) => (memory.byCell() ? withMemoryExports(source) : source);
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
      if (memory.byCell()) countInstance(memory, made);
      return made;
    },
  });
  swap("compile", compile, { apply: (target, that, args) => Reflect.apply(target, that, [exported(args[0]), ...args.slice(1)]) });
  swap("instantiate", instantiate, {
    apply(target, that, args) {
      const cell = memory.byCell();
      const promise = Reflect.apply(target, that, [exported(args[0]), ...args.slice(1)]);
      if (cell) promise.then((/** @type {any} */ out) => countInstance(memory, out && out.instance ? out.instance : out, true), () => {});
      return promise;
    },
  });
  // Streaming compiles read the Response first, so its bytes go the same way.
  for (const [name, whole] of [["compileStreaming", "compile"], ["instantiateStreaming", "instantiate"]]) {
    const original = wasm[name];
    if (typeof original !== "function") continue;
    swap(name, original, {
      apply(target, that, args) {
        if (!memory.byCell()) return Reflect.apply(target, that, args);
        const [source, ...rest] = args;
        const bytes = Promise.resolve(source).then((response) => response.arrayBuffer());
        if (whole === "compile") return bytes.then((b) => compile.call(wasm, withMemoryExports(b), ...rest));
        return bytes.then((b) => instantiate.call(wasm, withMemoryExports(b), ...rest)).then((out) => {
          countInstance(memory, out.instance, true);
          return out;
        });
      },
    });
  }
}
