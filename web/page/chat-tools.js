// The side panel's tools: export (notebook, script), import, and SQL over the tables,
// each the same JS API call a script would make, its result shown in the conversation.
import { el, renderResult, download, errorText } from "./render.js";

/** What importNotebook() resolves to (PROTOCOL.md §4, `importNotebook`).
 * @typedef {ReturnType<import("../shared/protocol.js").AgentApi["importNotebook"]>} ImportReply */

/**
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{$: import("./render.js").Find, messages: HTMLElement, save: (path: string) => void,
 *          setStatus: (text: string) => void, showNotice: (text: string) => void,
 *          reveal: (node: HTMLElement) => void, refresh: () => void, stem: string,
 *          showAsks: (count: number) => Promise<void>}} ui
 * `showAsks` shows the last asks of the conversation (one imported whole).
 */
export function wireTools(reckon, { $, messages, save, setStatus, showNotice, reveal, refresh, stem, showAsks }) {
  /** @param {"exportNotebook" | "exportScript" | "exportReport"} method @param {string} extension @param {string} type */
  async function exportAs(method, extension, type) {
    setStatus("exporting…");
    try {
      const text = await reckon[method]();
      download(`${stem}.${extension}`, new Blob([text], { type }));
      setStatus(`exported ${stem}.${extension}`);
    } catch (err) {
      setStatus("export failed");
      showNotice(`The export failed: ${errorText(err)}`);
    }
  }
  $("export-notebook").addEventListener("click", () => exportAs("exportNotebook", "ipynb", "application/x-ipynb+json"));
  $("export-script").addEventListener("click", () => exportAs("exportScript", "py", "text/x-python"));
  $("export-report").addEventListener("click", () => exportAs("exportReport", "html", "text/html"));

  const input = $("import", HTMLInputElement);
  input.addEventListener("change", async () => {
    const file = input.files ? input.files[0] : undefined;
    input.value = "";
    if (!file) return;
    setStatus(`importing ${file.name}…`);
    /** @type {ImportReply} */
    let reply;
    try {
      reply = await reckon.importNotebook(file, { name: file.name });
    } catch (err) {
      reply = { status: "error", cells: 0, ok: 0, failed: 0, message: errorText(err) };
    }
    showImport(file.name, reply);
    if (reply.conversation && reply.asks) await showAsks(reply.asks);
    refresh();
  });
  /** @param {string} name the file's @param {ImportReply} reply */
  function showImport(name, reply) {
    const cells = `${reply.cells} cell${reply.cells === 1 ? "" : "s"}`;
    const asks = reply.conversation ? `, its ${reply.asks} question${reply.asks === 1 ? "" : "s"} and answers below` : "";
    const text =
      reply.status === "ok"
        ? `Imported ${name}: ${cells} run as the starting cells, ${reply.ok} ok${reply.failed ? `, ${reply.failed} failed` : ""}${asks}.`
        : `${name} was not imported: ${reply.message || reply.status}`;
    const note = el("div", `note import status-${reply.status}`);
    note.appendChild(el("p", reply.status === "ok" ? "" : "error", text));
    if (reply.status === "ok" && reply.message) note.appendChild(el("p", "muted small", reply.message));
    messages.appendChild(note);
    setStatus(reply.status === "ok" ? `imported ${cells}` : "import failed");
  }

  const runButton = $("run-sql", HTMLButtonElement);
  $("sql-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const query = $("sql", HTMLTextAreaElement).value.trim();
    if (!query) return;
    runButton.disabled = true;
    setStatus("running SQL…");
    const entry = el("div", "turn sql");
    entry.appendChild(el("pre", "question code", query));
    messages.appendChild(entry);
    const result = await reckon.runSql(query);
    entry.appendChild(renderResult(result, save));
    setStatus(`SQL: ${result.status}`);
    runButton.disabled = false;
    reveal(entry);
    refresh();
  });
  submitOnEnter($("sql"), $("sql-form", HTMLFormElement), { ctrl: true });
}

/** Enter submits (Shift+Enter is a new line); with `ctrl`, Ctrl/Cmd+Enter does.
 * @param {HTMLElement} textarea @param {HTMLFormElement} form @param {{ctrl?: boolean}} [options] */
export function submitOnEnter(textarea, form, { ctrl = false } = {}) {
  textarea.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" || ev.shiftKey || ev.isComposing || (ctrl && !(ev.ctrlKey || ev.metaKey))) return;
    ev.preventDefault();
    form.requestSubmit();
  });
}

