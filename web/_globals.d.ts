// What the type check (jsconfig.json) needs to know of the browser beyond lib.dom:
// Pyodide's globals, the helpers a worker script leaves on `self` for a moment, and
// `window.reckon`. Not served: build.py skips files whose names start with "_".

// The one call layer (web/shared/seam.js), which the page runs first in each classic
// script (SEAM_SOURCE): the workers' and the frame's ends of their ports.
declare const serve: typeof import("./shared/seam.js").serve;
declare const connect: typeof import("./shared/seam.js").connect;

declare function loadPyodide(options: Record<string, unknown>): Promise<any>;
declare const FileReaderSync: { new (): { readAsArrayBuffer(blob: Blob): ArrayBuffer } };

interface Window {
  RECKON_BASE?: string;
  /** The page's createReckon() object (index.html, console.html), for scripts and tests. */
  reckon?: ReturnType<typeof import("./reckon.js").createReckon>;
  _createPyodideModule?: any;
  __reckonInstall?: any;
  __reckonSnapshot?: any;
}

declare namespace WebAssembly {
  // JSPI (stack switching): the sandbox worker turns it off before Pyodide starts.
  let Suspending: unknown;
  let Suspender: unknown;
}

// web/sandbox/snapshot/image.js hangs the heap's read-ahead on its file map: a property
// on a built-in type, which only a declaration can add. (The recipe's source is part of
// the snapshot's cache key, PROTOCOL.md §6: an edit to it makes a new snapshot once.)
interface Map<K, V> {
  preload?: any;
}

// A growable SharedArrayBuffer (ES2024; lib es2023 lacks it): the frame's buffer for
// host tool replies grows to a reply's size (web/sandbox/frame.js, ToolReplies).
interface SharedArrayBuffer {
  readonly maxByteLength: number;
  grow(newLength: number): void;
}
interface SharedArrayBufferConstructor {
  new (byteLength: number, options: { maxByteLength: number }): SharedArrayBuffer;
}
