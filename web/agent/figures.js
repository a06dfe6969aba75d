// A figure's PNG crosses once: from the sandbox to the page. The page keeps it here and
// lends the agent worker a reference in its place ({ref, chars, width, height,
// description}): the model reads the description, the answer's room counts `chars`, and
// nothing the agent does needs the bytes. What the agent hands back (steps, answers, the
// transcript, its state, an export's text) gets the page's copy again, so every
// documented result carries `png` as before (PROTOCOL.md §4, "Figures and the agent").

/** @typedef {Record<string, any>} Loose */

// A figure's base64 text, as an export may hold it: only base64 characters, and a PNG.
const PNG_BASE64 = /^iVBORw0KGgo[A-Za-z0-9+/]*={0,2}$/;

export class FigureShelf {
  constructor() {
    // Random per page, so no text a cell prints can name a figure of this page.
    const bytes = crypto.getRandomValues(new Uint8Array(8));
    /** @type {string} */
    this.prefix = `reckon-figure-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}-`;
    this.count = 0;
    /** @type {Map<string, string>} ref -> the PNG as base64 text */
    this.pngs = new Map();
    this.refPattern = new RegExp(`${this.prefix}\\d+`, "g");
  }

  /** `value` with each figure's png put on the shelf and a reference in its place (what
   * goes to the agent: a run result, or a saved state it is given back).
   * @template T @param {T} value @returns {T} */
  lend(value) {
    return walk(value, (figure) => {
      if (typeof figure.png !== "string") return figure;
      const { png, ...rest } = figure;
      const ref = `${this.prefix}${++this.count}`;
      this.pngs.set(ref, png);
      return { ref, chars: png.length, ...rest };
    });
  }

  /** `value` with each reference this page lent replaced by its png again (what comes
   * back from the agent). @template T @param {T} value @returns {T} */
  restore(value) {
    return walk(value, (figure) => {
      const png = typeof figure.ref === "string" ? this.pngs.get(figure.ref) : undefined;
      if (png === undefined) return figure;
      const { ref, chars, ...rest } = figure;
      void ref, void chars;
      return { png, ...rest };
    });
  }

  /** An export's text with each reference replaced by its png: in an HTML report only a
   * real base64 PNG (anything else leaves the image empty); in JSON text, escaped.
   * @param {string} text @param {"ipynb" | "py" | "html"} format */
  fill(text, format) {
    return text.replace(this.refPattern, (ref) => {
      const png = this.pngs.get(ref);
      if (png === undefined) return ref;
      if (format === "html") return PNG_BASE64.test(png) ? png : "";
      return format === "ipynb" ? JSON.stringify(png).slice(1, -1) : png;
    });
  }

  /** Forget every png but those `value` refers to (the agent was given a new state, so
   * the rest are no longer its). @param {unknown} value */
  keepOnly(value) {
    /** @type {Set<string>} */
    const used = new Set();
    walk(value, (figure) => (typeof figure.ref === "string" && used.add(figure.ref), figure));
    for (const ref of [...this.pngs.keys()]) if (!used.has(ref)) this.pngs.delete(ref);
  }
}

/** `value` with each object of a `figures` array changed by `change`; the rest shared,
 * not copied, where nothing under it changed.
 * @param {any} value @param {(figure: Loose) => Loose} change @returns {any} */
function walk(value, change) {
  if (Array.isArray(value)) {
    let changed = false;
    const next = value.map((item) => {
      const out = walk(item, change);
      changed ||= out !== item;
      return out;
    });
    return changed ? next : value;
  }
  if (!value || typeof value !== "object") return value;
  /** @type {Loose | null} */
  let next = null;
  for (const [key, item] of Object.entries(value)) {
    let out;
    if (key === "figures" && Array.isArray(item)) {
      out = item.map((figure) => (figure && typeof figure === "object" && !Array.isArray(figure) ? change(figure) : figure));
      if (out.every((figure, i) => figure === item[i])) out = item;
    } else out = walk(item, change);
    if (out !== item) (next ||= { ...value })[key] = out;
  }
  return next || value;
}
