// A small Markdown subset rendered straight to DOM nodes with textContent: model
// text can never become markup, script or a live link (links show as text).
//
// Inline rules follow CommonMark where it matters for numbers and code: code spans
// first (their content is literal), backslash escapes, and `*` delimiter runs that
// open or close only when flanking. One deliberate difference: a `*` run with a
// letter or digit on both sides is literal (CommonMark allows that for `*`, not
// for `_`), so `17*23+4`, `2**100` and `x**2` stay as written.

import { el } from "./render.js";
import { codeBlock } from "./code-block.js";

const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;

/** @param {string} text @returns {DocumentFragment} */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      frag.appendChild(codeBlock(body.join("\n"), fence[2] || "python"));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      const h = el(/** @type {"h3" | "h4" | "h5" | "h6"} */ (`h${Math.min(heading[1].length + 2, 6)}`));
      appendInline(h, heading[2]);
      frag.appendChild(h);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      frag.appendChild(el("hr"));
      i++;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      const start = ordered ? parseInt(line.trim(), 10) : 1;
      if (ordered && start !== 1) list.setAttribute("start", String(start));
      while (i < lines.length && LIST_ITEM.test(lines[i]) && !RULE.test(lines[i])) {
        const li = el("li");
        const item = [lines[i].replace(LIST_ITEM, "")];
        i++;
        // A lazy continuation line (indented, not a new item) belongs to this item.
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !LIST_ITEM.test(lines[i])) item.push(lines[i++].trim());
        appendInline(li, item.join("\n"));
        list.appendChild(li);
      }
      frag.appendChild(list);
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line)) {
      const rows = [];
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) rows.push(lines[i++]);
      frag.appendChild(renderTable(rows));
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quote = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quote.push(lines[i++].replace(/^\s*>\s?/, ""));
      const box = el("blockquote");
      box.appendChild(renderMarkdown(quote.join("\n")));
      frag.appendChild(box);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|[-*+]\s|\d+[.)]\s|\||>)/.test(lines[i]) && !RULE.test(lines[i])) para.push(lines[i++]);
    if (!para.length) para.push(lines[i++]);
    const p = el("p");
    appendInline(p, para.join("\n"));
    frag.appendChild(p);
  }
  return frag;
}

/** @param {string[]} rows a Markdown table's lines, the header first */
function renderTable(rows) {
  /** @param {string} row */
  const cells = (row) => row.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  const table = el("table", "md-table");
  const separator = rows.length > 1 && /^[\s|:-]+$/.test(rows[1]) ? cells(rows[1]) : null;
  const align = separator ? separator.map((c) => (/^:-+:$/.test(c) ? "center" : /-:$/.test(c) ? "right" : "")) : [];
  rows.forEach((row, index) => {
    if (index === 1 && separator) return;
    const tr = el("tr");
    cells(row).forEach((cell, column) => {
      const td = el(index === 0 ? "th" : "td", align[column] ? `align-${align[column]}` : "");
      appendInline(td, cell);
      tr.appendChild(td);
    });
    table.appendChild(tr);
  });
  const wrap = el("div", "table-wrap md");
  wrap.appendChild(table);
  return wrap;
}

const PUNCT = /[!-/:-@[-`{-~\p{P}\p{S}]/u;
const SPACE = /\s/u;
const WORD = /[\p{L}\p{N}]/u;

/** One piece of inline text: plain text, a code span, a `*` run, or emphasis around pieces.
 * @typedef {{type: "text", value: string} | {type: "code", value: string}
 *   | {type: "delim", count: number, open: boolean, close: boolean}
 *   | {type: "strong" | "em", children: Token[]}} Token
 */

/**
 * Inline text into tokens: code spans, escapes and `*` runs (with whether each run
 * can open or close emphasis), then runs matched into <strong>/<em>.
 * @param {string} text @returns {Token[]}
 */
function tokenize(text) {
  /** @type {Token[]} */
  const tokens = [];
  let plain = "";
  const flush = () => {
    if (plain) tokens.push({ type: "text", value: plain });
    plain = "";
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      const run = /^`+/.exec(text.slice(i))?.[0] || ch;
      const close = text.indexOf(run, i + run.length);
      // The closing run must be exactly as long (not part of a longer run).
      let at = close;
      while (at !== -1 && text[at + run.length] === "`") at = text.indexOf(run, at + run.length + 1);
      if (at !== -1) {
        flush();
        let body = text.slice(i + run.length, at).replace(/\n/g, " ");
        if (/^ .*[^ ].* $/.test(body)) body = body.slice(1, -1);
        tokens.push({ type: "code", value: body });
        i = at + run.length;
        continue;
      }
      plain += run;
      i += run.length;
      continue;
    }
    if (ch === "*") {
      const run = /^\*+/.exec(text.slice(i))?.[0] || ch;
      const before = i > 0 ? text[i - 1] : " ";
      const after = i + run.length < text.length ? text[i + run.length] : " ";
      const left = !SPACE.test(after) && (!PUNCT.test(after) || SPACE.test(before) || PUNCT.test(before));
      const right = !SPACE.test(before) && (!PUNCT.test(before) || SPACE.test(after) || PUNCT.test(after));
      const intraword = WORD.test(before) && WORD.test(after);
      flush();
      tokens.push({ type: "delim", count: run.length, open: left && !intraword, close: right && !intraword });
      i += run.length;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return tokens;
}

/** CommonMark's delimiter matching, simplified: each closer takes the nearest opener.
 * @param {Token[]} tokens @returns {Token[]} */
function matchEmphasis(tokens) {
  for (let c = 0; c < tokens.length; c++) {
    const closer = tokens[c];
    if (closer.type !== "delim" || !closer.close) continue;
    for (let o = c - 1; o >= 0 && closer.count > 0; o--) {
      const opener = tokens[o];
      if (opener.type !== "delim" || !opener.open || opener.count === 0) continue;
      const use = opener.count >= 2 && closer.count >= 2 ? 2 : 1;
      const inner = tokens.splice(o + 1, c - o - 1);
      /** @type {Token} */
      const node = { type: use === 2 ? "strong" : "em", children: inner };
      tokens.splice(o + 1, 0, node);
      opener.count -= use;
      closer.count -= use;
      c = o + 2; // the closer's new index
      if (closer.count > 0) o = o + 1; // look again further left of the new node
    }
  }
  return tokens;
}

/** @param {Node} parent @param {Token[]} tokens */
function appendTokens(parent, tokens) {
  for (const token of tokens) {
    if (token.type === "text") parent.appendChild(document.createTextNode(token.value));
    else if (token.type === "code") parent.appendChild(el("code", "", token.value));
    else if (token.type === "delim") {
      if (token.count) parent.appendChild(document.createTextNode("*".repeat(token.count)));
    } else {
      const node = el(token.type);
      appendTokens(node, token.children);
      parent.appendChild(node);
    }
  }
}

/** `code`, **bold**, *italic*, backslash escapes; everything else is plain text.
 * @param {Node} parent @param {string} text */
export function appendInline(parent, text) {
  appendTokens(parent, matchEmphasis(tokenize(String(text))));
  parent.normalize();
}
