// The list of conversations in the chat's side panel (a menu behind a button on a
// phone or a narrow widget): newest first, the open one marked; click one to open it
// (its variables are rebuilt by replay), rename it in place, delete it with an Undo
// notice for a few seconds. Everything goes through the JS API's conversation calls,
// so the list shows what a script changed too.
import { el, errorText } from "./render.js";

/** How long the Undo of a deletion stays offered. */
export const UNDO_MS = 10_000;

/**
 * @typedef {import("./render.js").Find} Find
 * @typedef {{id: string, title: string, updated: number, asks: number, steps: number, current: boolean}} Entry
 */

/** "3 steps · 2 h ago" @param {Entry} entry @param {number} now seconds */
export function entryMeta(entry, now) {
  const ago = Math.max(0, now - entry.updated);
  const when = ago < 60 ? "just now" : ago < 3600 ? `${Math.round(ago / 60)} min ago` : ago < 86400 ? `${Math.round(ago / 3600)} h ago` : new Date(entry.updated * 1000).toLocaleDateString();
  const steps = `${entry.steps} step${entry.steps === 1 ? "" : "s"}`;
  return `${entry.asks} question${entry.asks === 1 ? "" : "s"} · ${steps} · ${when}`;
}

/**
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{$: Find, setStatus: (text: string) => void, busy: () => boolean}} options
 */
export function conversationList(reckon, { $, setStatus, busy }) {
  const list = $("conversation-list");
  const undo = $("conversation-undo");
  const nav = $("conversations");
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let undoTimer;
  if (!reckon.persist) {
    // Nothing is kept (a widget without `session`): there is no list to show.
    nav.hidden = true;
    $("conversations-toggle").hidden = true;
    return { refresh: async () => {} };
  }

  /** @param {boolean} [open] */
  const toggle = (open) => {
    const next = open ?? !nav.classList.contains("open");
    nav.classList.toggle("open", next);
    $("conversations-toggle").setAttribute("aria-expanded", String(next));
  };
  $("conversations-toggle").addEventListener("click", () => toggle());

  async function refresh() {
    /** @type {any} */
    const reply = await reckon.conversations().catch((err) => ({ status: "error", message: errorText(err) }));
    if (reply.status !== "ok") {
      list.replaceChildren(el("li", "muted small", reply.message));
      return;
    }
    /** @type {Entry[]} */
    const entries = reply.conversations;
    const now = Date.now() / 1000;
    const items = entries.map((entry) => item(entry, now));
    // The open conversation before its first question is not stored yet: shown all the same.
    if (!entries.some((e) => e.current)) {
      const fresh = el("li", "conversation-item");
      fresh.setAttribute("aria-current", "true");
      fresh.appendChild(el("span", "conv-open muted", "New conversation"));
      items.unshift(fresh);
    }
    list.replaceChildren(...items);
    $("conversations-toggle").textContent = `Conversations (${entries.length})`;
  }

  /** @param {Entry} entry @param {number} now */
  function item(entry, now) {
    const li = el("li", "conversation-item");
    li.dataset.id = entry.id;
    if (entry.current) li.setAttribute("aria-current", "true");
    const open = el("button", "conv-open");
    open.type = "button";
    open.title = entry.title;
    open.setAttribute("aria-label", entry.title);
    open.append(el("span", "conv-title", entry.title), el("span", "conv-meta", entryMeta(entry, now)));
    open.addEventListener("click", () => openOne(entry));
    const rename = el("button", "icon", "✎");
    rename.type = "button";
    rename.setAttribute("aria-label", `Rename: ${entry.title}`);
    rename.title = "Rename";
    rename.addEventListener("click", () => startRename(li, entry));
    const remove = el("button", "icon", "×");
    remove.type = "button";
    remove.setAttribute("aria-label", `Delete conversation: ${entry.title}`);
    remove.title = "Delete";
    remove.addEventListener("click", () => deleteOne(entry));
    li.append(open, rename, remove);
    return li;
  }

  /** @param {Entry} entry */
  async function openOne(entry) {
    if (entry.current) return toggle(false);
    if (busy()) {
      setStatus("An answer is still being written: wait for it or press Stop, then switch.");
      return;
    }
    setStatus(`opening “${entry.title}”…`);
    const reply = await reckon.openConversation(entry.id);
    if (reply.status !== "ok") setStatus(reply.message || "could not open it");
    else setStatus(`“${entry.title}” is open${reply.replayed || reply.failed ? `: ${reply.replayed} cell${reply.replayed === 1 ? "" : "s"} replayed${reply.failed ? `, ${reply.failed} failed` : ""}` : ""}`);
    toggle(false);
    await refresh();
  }

  /** @param {HTMLElement} li @param {Entry} entry */
  function startRename(li, entry) {
    const form = el("form", "conv-rename");
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.value = entry.title;
    input.setAttribute("aria-label", "New title");
    input.maxLength = 200;
    const save = el("button", "", "Save");
    save.type = "submit";
    form.append(input, save);
    li.replaceChildren(form);
    input.focus();
    input.select();
    let done = false;
    const finish = async (/** @type {boolean} */ keep) => {
      if (done) return;
      done = true;
      if (keep && input.value.trim() !== entry.title) {
        const reply = await reckon.renameConversation(entry.id, input.value);
        setStatus(reply.status === "ok" ? `renamed to “${reply.title}”` : reply.message || "it could not be renamed");
      }
      await refresh();
    };
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      finish(true);
    });
    input.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape") return;
      ev.preventDefault();
      ev.stopPropagation(); // not the Esc that stops an ask
      finish(false);
    });
    input.addEventListener("blur", () => setTimeout(() => finish(true), 150));
  }

  /** @param {Entry} entry */
  async function deleteOne(entry) {
    if (entry.current && busy()) {
      setStatus("An answer is still being written: wait for it or press Stop, then delete.");
      return;
    }
    const reply = await reckon.deleteConversation(entry.id);
    if (reply.status !== "ok") {
      setStatus(reply.message || "it could not be deleted");
      return;
    }
    offerUndo(entry, Boolean(reply.opened));
    await refresh();
  }

  /** @param {Entry} entry @param {boolean} wasOpen */
  function offerUndo(entry, wasOpen) {
    clearTimeout(undoTimer);
    const button = el("button", "link", "Undo");
    button.type = "button";
    undo.replaceChildren(el("span", "", `Deleted “${entry.title}”. `), button);
    undo.hidden = false;
    const close = () => {
      clearTimeout(undoTimer);
      undo.hidden = true;
      undo.replaceChildren();
    };
    undoTimer = setTimeout(close, UNDO_MS);
    button.addEventListener("click", async () => {
      close();
      const back = await reckon.restoreConversation(entry.id);
      if (back.status !== "ok") return setStatus(back.message || "it could not be brought back");
      if (wasOpen && !busy()) await reckon.openConversation(entry.id);
      setStatus(`“${entry.title}” is back`);
      await refresh();
    });
  }

  $("conversations-new").addEventListener("click", () => $("new-session").click());
  for (const type of ["restored", "conversation", "conversations", "ask", "storage-changed"]) reckon.on(type, () => refresh());
  return { refresh };
}
