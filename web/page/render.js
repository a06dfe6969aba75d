// Renders run results as DOM. Nothing from a run (text, HTML tables, file names,
// tracebacks) is ever inserted as markup: text goes in as text, and table HTML is
// parsed into an inert document and rebuilt from a short allow-list of elements.
// Also the few pieces the chat page and the console share: finding their elements,
// the start-up status line, a file's download and delete.

/** @typedef {import("../shared/protocol.js").RunResult} RunResult */
/** A run result, or a refusal made before anything ran (reckon.runSql() of an empty
 * query: no duration, nothing truncated).
 * @typedef {Pick<RunResult, "status" | "stdout" | "stderr" | "result" | "figures" | "files" | "error"> & Partial<RunResult>} ShownResult */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {string} [cls] @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The element `#id` of the page's own markup (chat-markup.js, console.html), of the
 * kind the markup makes there. One missing is the page's own bug: said at once, by id.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {Document | ShadowRoot} root @param {string} id @param {{new (): T, prototype: T}} [kind]
 * @returns {T}
 */
export function byId(root, id, kind) {
  const node = root.getElementById(id);
  const want = kind || HTMLElement;
  if (!(node instanceof want)) throw new Error(`the page's markup has no ${want.name} #${id}`);
  return /** @type {T} */ (node);
}
/** `byId` over one root: what the page's modules are handed.
 * @typedef {<T extends HTMLElement = HTMLElement>(id: string, kind?: {new (): T, prototype: T}) => T} Find */

const TABLE_TAGS = new Set(
["TABLE", "THEAD", "TBODY", "TFOOT", "TR", "TH", "TD", "CAPTION"]);

// A cell that shows a number (pandas' repr: 1,234.5, -3e-05, 12%, NaN, inf) is right-aligned.
const NUMERIC = /^[-+−]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s?%?$|^(?:NaN|nan|-?inf|<NA>|NaT|None)$/;

/** Tags without their style attributes. Parsing alone applies a style attribute (and
 * the page's CSP reports each one: pandas' to_html writes `style="text-align: right;"`),
 * so they go before the parser sees them (and so do <style> blocks, as a Styler
 * writes them). Inside a tag only: pandas escapes < and >
 * in cell text, so a cell that says style="…" is left as it is.
 * @param {string} html @returns {string} */
export function withoutStyles(html) {
  return String(html)
    .replace(/<style[\s\S]*?<\/style\s*>/gi, "")
    .replace(/<[^>]*>/g, (tag) => tag.replace(/\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]*)/gi, ""));
}

/** Rebuild a DataFrame's HTML table from text nodes and table elements only.
 * @param {string} html @returns {HTMLElement | null} */
export function safeTable(html) {
  const doc = new DOMParser().parseFromString(withoutStyles(html), "text/html");
  const table = doc.querySelector("table");
  if (!table) return null;
  /** @param {Node} src @returns {Node | null} */
  const copy = (src) => {
    if (src.nodeType === Node.TEXT_NODE) return document.createTextNode(src.textContent || "");
    if (src.nodeType !== Node.ELEMENT_NODE) return null;
    const element = /** @type {Element} */ (src);
    if (!TABLE_TAGS.has(element.tagName)) return document.createTextNode(element.textContent || "");
    return copyTag(element);
  };
  /** A table element, its allowed attributes and its copied children.
   * @param {Element} src @returns {HTMLElement} */
  const copyTag = (src) => {
    const out = document.createElement(src.tagName.toLowerCase());
    for (const attr of ["colspan", "rowspan"]) {
      const v = src.getAttribute(attr);
      if (v && /^\d{1,3}$/.test(v)) out.setAttribute(attr, v);
    }
    for (const child of src.childNodes) {
      const c = copy(child);
      if (c) out.appendChild(c);
    }
    if (src.tagName === "TD" && NUMERIC.test(out.textContent.trim())) out.className = "num";
    return out;
  };
  const out = copyTag(table);
  out.className = "dataframe";
  return out;
}

/** @param {ShownResult} result a run result (PROTOCOL.md §1) @param {(path: string) => void} [onDownload] */
export function renderResult(result, onDownload) {
  const box = el("div", `result status-${result.status}`);
  if (result.stdout) box.appendChild(el("pre", "stdout", result.stdout));
  if (result.stderr) box.appendChild(el("pre", "stderr", result.stderr));
  if (result.result) {
    const table = result.result.html ? safeTable(result.result.html) : null;
    if (table) {
      const wrap = el("div", "table-wrap");
      wrap.appendChild(table);
      box.appendChild(wrap);
    } else {
      box.appendChild(el("pre", "value", result.result.text));
    }
  }
  // A silent cell that ended with `x = …`: the values the model was shown.
  const assigned = Array.isArray(result.assigned) ? result.assigned : [];
  if (assigned.length) box.appendChild(el("pre", "value assigned", assigned.map((a) => `${a.name} = ${a.text}`).join("\n")));
  for (const fig of result.figures || []) {
    const img = el("img", "figure");
    img.src = `data:image/png;base64,${fig.png}`;
    img.alt = fig.description || "figure";
    img.width = fig.width;
    box.appendChild(img);
  }
  if (result.error) {
    const head = result.status === "timeout" ? "Timed out" : result.status === "interrupted" ? "Interrupted" : result.error.type;
    // Python's traceback ends with the line shown first: shown once (a SQL error's
    // list of tables is long).
    const tail = `${result.error.type}: ${result.error.message}`;
    let traceback = String(result.error.traceback || "").trimEnd();
    if (traceback.endsWith(tail)) traceback = traceback.slice(0, -tail.length).trimEnd();
    box.appendChild(el("pre", "error", `${head}: ${result.error.message}\n${traceback}`.trim()));
  }
  if (result.files && result.files.length) {
    const list = el("ul", "out-files");
    for (const f of result.files) {
      const li = el("li");
      const button = el("button", "link", `${f.path.split("/").pop()} (${formatBytes(f.size)})`);
      button.type = "button";
      button.addEventListener("click", () => onDownload && onDownload(f.path));
      li.appendChild(button);
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  const took = typeof result.duration_ms === "number" ? ` · ${Math.round(result.duration_ms)} ms` : "";
  const meta = `${result.status}${took}${result.truncated ? " · output truncated" : ""}${result.restarted ? " · sandbox restarted" : ""}`;
  box.appendChild(el("div", "meta muted", meta));
  return box;
}

/** What went wrong, in words: a thrown error's message, else the thrown value itself.
 * @param {unknown} err @returns {string} */
export function errorText(err) {
  const message = err && typeof err === "object" && "message" in err ? err.message : "";
  return String(message || err);
}

/**
 * The sandbox's start and recoveries in the status line (`setStatus`), said the same on
 * the chat page and the console; storage problems in the notice, which stays until
 * dismissed (the status line changes too often). `kept` ends the line after a restart;
 * `onFilesChanged` redraws the file lists. Returns what shows a message in the notice.
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{$: Find, setStatus: (text: string) => void, kept: string, onReady?: () => void, onFilesChanged: () => void}} page
 * @returns {(message: string) => void}
 */
export function showStartup(reckon, { $, setStatus, kept, onReady, onFilesChanged }) {
  const progress = $("progress", HTMLProgressElement);
  reckon.on("progress", /** @param {{loaded: number, total: number}} detail */ ({ loaded, total }) => {
    progress.max = total;
    progress.value = loaded;
    setStatus(`loading Python and packages… ${Math.round((100 * loaded) / total)}%`);
  });
  reckon.on("ready", /** @param {{ms: number}} detail */ ({ ms }) => {
    progress.hidden = true;
    setStatus(`ready in ${(ms / 1000).toFixed(1)} s`);
    if (onReady) onReady();
  });
  reckon.on("error", /** @param {{message: string}} detail */ ({ message }) => setStatus(`could not start: ${message}`));
  reckon.on("restarted", /** @param {{reason: string}} detail */ ({ reason }) => setStatus(`sandbox restarted (${reason}); ${kept}`));
  reckon.on("recovered", /** @param {{message: string}} detail */ ({ message }) => {
    setStatus(message);
    onFilesChanged();
  });
  /** @param {string} message */
  const showNotice = (message) => {
    $("notice-text").textContent = message;
    $("notice").hidden = false;
  };
  reckon.on("storage-error", /** @param {{message: string}} detail */ ({ message }) => showNotice(message));
  reckon.on("storage-changed", () => onFilesChanged());
  $("notice-close").addEventListener("click", () => ($("notice").hidden = true));
  return showNotice;
}

/** The × that deletes file `name` (from this browser's storage too); `onDelete` does it.
 * @param {string} name @param {() => void} onDelete @returns {HTMLButtonElement} */
export function deleteButton(name, onDelete) {
  const remove = el("button", "link delete", "×");
  remove.type = "button";
  remove.title = `Delete ${name} (from this browser too)`;
  remove.setAttribute("aria-label", `Delete ${name}`);
  remove.addEventListener("click", onDelete);
  return remove;
}

/** Download one of the sandbox's files, under its own name.
 * @param {{readFile: (path: string) => Promise<Uint8Array>}} reckon @param {string} path */
export async function saveFile(reckon, path) {
  download(path.split("/").pop() || path, await reckon.readFile(path));
}

/** @param {number} n a size in bytes @returns {string} */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** Save bytes as a download in the user's browser.
 * @param {string} name @param {Blob | Uint8Array} bytes */
export function download(name, bytes) {
  // Bytes from readFile() come by postMessage: never on a SharedArrayBuffer.
  const url = URL.createObjectURL(new Blob([bytes instanceof Blob ? bytes : /** @type {Uint8Array<ArrayBuffer>} */ (bytes)]));
  const a = el("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
