"use strict";
// A cell's WebAssembly module may define a memory and never export it, then grow it
// from inside (memory.grow): no JS call sees that memory or its size. So the bytes of
// every module a cell compiles get one more export per memory the module defines
// and does not export (`__reckon_memory_<index>`): its instances then show the
// worker each memory, whose size memory-apis.js reads at every check of the ceiling.
// Bytes this cannot read are compiled as they are (the compile then fails on them
// anyway, or they define no memory this could find).
// A part of the sandbox worker (see main.js): nothing here is reachable from a cell.
/* exported withMemoryExports */

// Where the export section (7) goes among the known sections, in the binary's order.
const SECTION_ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];

/** The module's bytes with its unexported own memories exported; `source` itself
 * when there are none or it cannot be read. @param {any} source */
function withMemoryExports(source) {
  let bytes;
  try {
    bytes = ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
  } catch {
    return source;
  }
  try {
    const plan = readModule(bytes);
    const missing = [];
    for (let index = plan.importedMemories; index < plan.importedMemories + plan.definedMemories; index++) {
      if (!plan.exportedMemories.has(index)) missing.push(index);
    }
    if (!missing.length) return source;
    return addExports(bytes, plan, missing);
  } catch {
    return source;
  }
}

/** @param {Uint8Array} bytes @param {{at: number}} cursor */
function leb(bytes, cursor) {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (cursor.at >= bytes.length) throw new Error("truncated");
    const byte = bytes[cursor.at++];
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if (!(byte & 0x80)) return value;
  }
}

/** @param {number} value */
function encodeLeb(value) {
  const out = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return out;
}

/** Its sections, how many memories it imports and defines, which it exports.
 * @param {Uint8Array} bytes */
function readModule(bytes) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new Error("not wasm");
  const sections = [];
  let importedMemories = 0;
  let definedMemories = 0;
  const exportedMemories = new Set();
  const cursor = { at: 8 };
  while (cursor.at < bytes.length) {
    const start = cursor.at;
    const id = bytes[cursor.at++];
    const size = leb(bytes, cursor);
    const body = cursor.at;
    const end = body + size;
    if (end > bytes.length) throw new Error("truncated");
    sections.push({ id, start, body, end });
    const at = { at: body };
    if (id === 2) {
      for (let n = leb(bytes, at); n > 0; n--) {
        for (let name = 0; name < 2; name++) at.at += leb(bytes, at); // module, field
        const kind = bytes[at.at++];
        if (kind === 0) leb(bytes, at);
        else if (kind === 1 || kind === 2) {
          if (kind === 1) at.at++; // the table's element type
          const flags = bytes[at.at++];
          leb(bytes, at);
          if (flags & 1) leb(bytes, at);
          if (kind === 2) importedMemories++;
        } else if (kind === 3) at.at += 2;
        else if (kind === 4) {
          at.at++;
          leb(bytes, at);
        } else throw new Error("unknown import");
      }
    } else if (id === 5) definedMemories = leb(bytes, at);
    else if (id === 7) {
      for (let n = leb(bytes, at); n > 0; n--) {
        at.at += leb(bytes, at);
        const kind = bytes[at.at++];
        const index = leb(bytes, at);
        if (kind === 2) exportedMemories.add(index);
      }
    }
    cursor.at = end;
  }
  return { sections, importedMemories, definedMemories, exportedMemories };
}

/** @param {Uint8Array} bytes @param {ReturnType<typeof readModule>} plan @param {number[]} missing */
function addExports(bytes, plan, missing) {
  const added = [];
  for (const index of missing) {
    const name = new TextEncoder().encode(`__reckon_memory_${index}`);
    added.push(...encodeLeb(name.length), ...name, 2, ...encodeLeb(index));
  }
  const old = plan.sections.find((s) => s.id === 7);
  let count = missing.length;
  /** @type {Uint8Array} */
  let entries = new Uint8Array(0);
  if (old) {
    const at = { at: old.body };
    count += leb(bytes, at);
    entries = bytes.subarray(at.at, old.end);
  }
  const body = [...encodeLeb(count), ...entries, ...added];
  const section = new Uint8Array([7, ...encodeLeb(body.length), ...body]);
  const rank = SECTION_ORDER.indexOf(7);
  const after = old ? null : plan.sections.find((s) => s.id !== 0 && SECTION_ORDER.indexOf(s.id) > rank);
  const cut = old ? old.start : after ? after.start : bytes.length;
  const resume = old ? old.end : cut;
  const out = new Uint8Array(cut + section.length + (bytes.length - resume));
  out.set(bytes.subarray(0, cut), 0);
  out.set(section, cut);
  out.set(bytes.subarray(resume), cut + section.length);
  return out;
}
