// A code block: highlighted, with its language and line count, a Copy button and a
// show/hide toggle (long code starts clipped to a few lines). Plain DOM; the code
// goes in as text only (highlight.js).

import { highlight } from "./highlight.js";
import { el } from "./render.js";

const CLIP_LINES = 18;

/**
 * A button that copies `text()` to the clipboard and says so for a moment.
 * @param {() => string} text @param {string} [label]
 */
export function copyButton(text, label = "Copy") {
  const button = el("button", "copy", label);
  button.type = "button";
  button.title = "Copy to the clipboard";
  button.addEventListener("click", async (ev) => {
    ev.preventDefault();
    ev.stopPropagation();
    const ok = await copyText(text(), button);
    button.textContent = ok ? "Copied" : "Copy failed";
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

/** The async clipboard where allowed; else a selected textarea and execCommand.
 * @param {string} value @param {Element} near where the textarea goes for a moment */
async function copyText(value, near) {
  try {
    await navigator.clipboard.writeText(value);
    return true;
  } catch {
    const area = el("textarea", "copy-buffer");
    area.value = value;
    area.setAttribute("readonly", "");
    near.after(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** @type {Record<string, string>} */
const LANGUAGES = { python: "Python", py: "Python", python3: "Python", sql: "SQL", sqlite: "SQL" };

/** @param {string} code @param {string} [language] fence language or tool ("python", "sql", …) */
export function codeBlock(code, language = "python") {
  const text = String(code);
  const lang = String(language || "").toLowerCase();
  const lines = text.split("\n").length;
  const box = el("div", "code-block");
  box.dataset.lang = lang;
  const head = el("div", "code-head");
  head.appendChild(el("span", "code-lang", `${LANGUAGES[lang] || lang || "Code"} · ${lines} line${lines === 1 ? "" : "s"}`));
  const pre = el("pre", "code");
  const inner = el("code");
  inner.appendChild(highlight(text, lang));
  pre.appendChild(inner);
  const long = lines > CLIP_LINES;
  const toggle = el("button", "code-toggle");
  toggle.type = "button";
  /** @param {"full" | "clipped" | "hidden"} state */
  const show = (state) => {
    box.dataset.state = state;
    toggle.setAttribute("aria-expanded", String(state === "full"));
    toggle.textContent = state === "full" ? (long ? "Show less" : "Hide") : state === "clipped" ? `Show all ${lines} lines` : "Show";
  };
  toggle.addEventListener("click", () => show(box.dataset.state === "full" ? (long ? "clipped" : "hidden") : "full"));
  show(long ? "clipped" : "full");
  head.append(toggle, copyButton(() => text));
  box.append(head, pre);
  return box;
}

/**
 * The model's own code where it did not run as written (PROTOCOL.md's `proposed`): the
 * person edited it, or Reckon ran it otherwise (a pandas read of an upload as
 * `read_table`, a line that is the answer's form as its print). Folded below the code
 * that ran, so every change is in view; null when nothing changed.
 * @param {{code?: string, proposed?: string, decision?: string}} step
 */
export function proposedBlock(step) {
  if (!step.proposed || step.proposed === step.code) return null;
  const box = el("details", "step-proposed");
  const whose =
    step.decision === "edit" ? "The model's code, before your edit" : step.decision === "reject" ? "The model's code as it wrote it" : "The model's code as it wrote it; Reckon ran it as above";
  box.append(el("summary", "muted small", whose), codeBlock(step.proposed, "python"));
  return box;
}
