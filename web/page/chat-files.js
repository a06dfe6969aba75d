// The side panel's file lists (your files, the files the analysis wrote) and uploads.
// Each table shows its shape under its name, also after a reload (it is asked of the
// sandbox again: inspect() of a saved file), and an upload's columns feed the example
// questions.

import { el, formatBytes, deleteButton } from "./render.js";

/** @typedef {import("../shared/protocol.js").FileEntry} FileEntry */
/** What the page reads of an inspect() summary (PROTOCOL.md §2), with its file's name
 * (and, for a saved file, its mtime); an upload's also says whether it was `saved`.
 * @typedef {import("../shared/protocol.js").InspectResult & {path?: string, name?: string, kind?: string,
 *   rows?: number, columns?: Array<{name: string, dtype: string}>, sheets?: Sheet[], install_with?: string,
 *   personal?: Array<{column: string, kind: string}>, head?: string[][], mtime?: number}} FileInfo
 * @typedef {{name: string, rows: number, columns: number}} Sheet
 */

/** @param {unknown} n */
const count = (n) => Number(n).toLocaleString("en-US");
const SHEETS_SHOWN = 4;

/** A workbook's sheets, each with its size (inspect()'s `sheets`), when it has several;
 * read_with reads the first. @param {Sheet[] | undefined} sheets */
function sheetList(sheets) {
  if (!Array.isArray(sheets) || sheets.length < 2) return "";
  // The first is the table whose shape is given (tidied: notes below it are left out).
  /** @param {Sheet} s @param {number} i */
  const size = (s, i) => (i === 0 ? "the one shown" : Number(s.rows) || Number(s.columns) ? `${count(s.rows)} × ${count(s.columns)}` : "empty");
  const each = sheets.slice(0, SHEETS_SHOWN).map((s, i) => `${s.name} (${size(s, i)})`);
  const more = sheets.length > SHEETS_SHOWN ? `, and ${sheets.length - SHEETS_SHOWN} more` : "";
  return `; ${sheets.length} sheets: ${each.join(", ")}${more}`;
}

// A wheel says how to install it (the person's next step); a table its shape (and a
// workbook every sheet's: the shape is the first sheet's, which read_with reads).
/** @param {FileInfo} info @returns {string} */
const describe = (info) =>
  info.status !== "ok"
    ? info.message || info.status
    : info.kind === "table"
      ? `${count(info.rows)} rows × ${(info.columns || []).length} columns${sheetList(info.sheets)}`
      : info.install_with
        ? `${info.kind}: ${info.install_with} in a cell installs it`
        : info.kind || "a file";

/**
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{lists: Array<[string, HTMLElement]>, save: (path: string) => void,
 *          setStatus: (text: string) => void, onUpload?: (info: FileInfo) => void,
 *          onFound?: (info: FileInfo) => void}} options
 * `onUpload` gets each upload's inspect() summary; `onFound` the summary of a saved
 * table seen for the first time on this page (after a reload).
 */
export function fileLists(reckon, { lists, save, setStatus, onUpload, onFound }) {
  /** @type {Map<string, FileInfo>} path -> inspect() summary */
  const infos = new Map();
  /** @type {Set<string>} */
  const asking = new Set();
  /** @type {Map<string, {key: string, li: HTMLLIElement}>} a row that has not changed is kept, not rebuilt */
  const shown = new Map();
  let generation = 0;

  // Rebuilding every row on each refresh lost keyboard focus and the scroll position
  // of a row someone was looking at; only a row whose file or shape changed is redrawn.
  /** @param {FileEntry} f @param {string[]} also the other conversations that use it */
  function keep(f, also) {
    const info = infos.get(f.path);
    const key = JSON.stringify([f.name, f.size, f.mtime, info ? describe(info) : null, also]);
    const old = shown.get(f.path);
    if (old && old.key === key) return old.li;
    const li = row(f);
    if (also.length) li.append(el("div", "file-uses muted small", `also in ${also.map((t) => `“${t}”`).join(", ")}`));
    shown.set(f.path, { key, li });
    return li;
  }

  // Files are shared by the conversations kept in this browser: a row names the other
  // ones that use its file (deleting it takes it from them too).
  /** @returns {Promise<Map<string, string[]>>} path -> titles */
  async function otherUses() {
    if (!reckon.persist) return new Map();
    try {
      const [uses, list] = await Promise.all([reckon.persist.fileUses(), reckon.conversations()]);
      if (list.status !== "ok") return new Map();
      const heads = /** @type {Array<{id: string, title?: string}>} */ (list.conversations);
      const titles = new Map(heads.map((c) => [c.id, c.title || "a new conversation"]));
      const others = (/** @type {string[]} */ ids) => ids.filter((id) => id !== uses.conversation && titles.has(id)).map((id) => String(titles.get(id)));
      return new Map(uses.files.map((f) => [f.path, others(f.conversations)]));
    } catch {
      return new Map(); // a page without a kept session: nothing shared
    }
  }

  /** @param {FileEntry} f */
  function row(f) {
    const li = el("li", "file");
    const name = el("button", "link file-name", f.name);
    name.type = "button";
    name.title = `Download ${f.path}`;
    name.addEventListener("click", () => save(f.path));
    const remove = deleteButton(f.name, async () => {
      await reckon.deleteFile(f.path);
      infos.delete(f.path);
      refresh();
    });
    li.append(name, el("span", "file-size muted", formatBytes(f.size)), remove);
    const info = infos.get(f.path);
    if (info) li.append(el("div", "file-shape muted small", describe(info)));
    return li;
  }

  async function refresh() {
    const mine = ++generation;
    /** @type {FileEntry[]} */
    const found = [];
    const listed = new Set();
    const uses = await otherUses();
    if (mine !== generation) return;
    for (const [dir, list] of lists) {
      /** @type {FileEntry[]} */
      const entries = await reckon.listFiles(dir).catch(() => []);
      const files = entries.filter((f) => !f.is_dir);
      if (mine !== generation) return; // a later refresh is under way
      for (const f of files) listed.add(f.path);
      const rows = files.map((f) => keep(f, uses.get(f.path) || []));
      if (rows.length !== list.children.length || rows.some((li, i) => list.children[i] !== li)) {
        list.replaceChildren(...rows);
      }
      if (dir === "/data") found.push(...files.filter((f) => !infos.has(f.path) && !asking.has(f.path)));
    }
    for (const path of shown.keys()) if (!listed.has(path)) shown.delete(path);
    // Saved files from an earlier visit: their shape is asked once, after the lists are shown.
    for (const f of found) {
      asking.add(f.path);
      const info = /** @type {FileInfo | null} */ (await reckon.inspect(f.path));
      asking.delete(f.path);
      if (!info || typeof info !== "object") continue;
      const summary = { ...info, name: f.name, mtime: f.mtime };
      infos.set(f.path, summary);
      if (onFound) onFound(summary);
    }
    if (found.length && mine === generation) refresh();
  }

  /** @param {File[]} files */
  async function upload(files) {
    for (const file of files) {
      setStatus(`adding ${file.name}…`);
      const info = /** @type {FileInfo} */ (await reckon.upload(file));
      const summary = describe(info);
      const named = info.path ? { ...info, name: String(info.path).split("/").pop() } : null;
      if (named) infos.set(String(info.path), named);
      setStatus(`${file.name}: ${summary}`);
      if (onUpload && info.status === "ok" && named) onUpload(named);
    }
    refresh();
  }

  return {
    refresh,
    upload,
    forget: () => {
      infos.clear();
      shown.clear();
    },
    infos,
  };
}
