// A small Markdown subset rendered straight to DOM nodes with textContent: model
// text can never become markup, script or a live link (links show as text).

import { el } from "./render.js";

/** @param {string} text @returns {DocumentFragment} */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*```(\w*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i])) body.push(lines[i++]);
      i++;
      frag.appendChild(el("pre", "code", body.join("\n")));
      continue;
    }
    const heading = line.match(/^(#{1,4})\s+(.*)/);
    if (heading) {
      const h = el(`h${Math.min(heading[1].length + 2, 6)}`);
      appendInline(h, heading[2]);
      frag.appendChild(h);
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        const li = el("li");
        appendInline(li, lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""));
        list.appendChild(li);
        i++;
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
    if (!line.trim()) {
      i++;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^\s*(```|#{1,4}\s|[-*+]\s|\d+[.)]\s|\|)/.test(lines[i])) para.push(lines[i++]);
    if (!para.length) para.push(lines[i++]);
    const p = el("p");
    appendInline(p, para.join("\n"));
    frag.appendChild(p);
  }
  return frag;
}

function renderTable(rows) {
  const cells = (row) => row.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  const table = el("table", "md-table");
  rows.forEach((row, index) => {
    if (index === 1 && /^[\s|:-]+$/.test(row)) return;
    const tr = el("tr");
    for (const cell of cells(row)) {
      const td = el(index === 0 ? "th" : "td");
      appendInline(td, cell);
      tr.appendChild(td);
    }
    table.appendChild(tr);
  });
  return table;
}

/** **bold**, *italic*, `code`; everything else is plain text. */
function appendInline(parent, text) {
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*\s][^*]*\*)/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
    const token = m[0];
    if (token.startsWith("`")) parent.appendChild(el("code", "", token.slice(1, -1)));
    else if (token.startsWith("**")) parent.appendChild(el("strong", "", token.slice(2, -2)));
    else parent.appendChild(el("em", "", token.slice(1, -1)));
    last = m.index + token.length;
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}
