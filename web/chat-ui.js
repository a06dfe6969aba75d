// The chat UI, mountable into any root: the page (document) or a <reckon-chat>
// widget's shadow root. Elements are found by id within that root only, so several
// widgets on one page never touch each other's elements.
import { el, renderResult, formatBytes, download } from "./render.js";
import { renderMarkdown } from "./markdown.js";
import { attachControl } from "./control-ui.js";

// Static markup, no data in it: everything from files, runs and models goes in as text.
const MARKUP = `
<header class="bar">
  <strong>Reckon</strong>
  <label>Model <select id="model" aria-label="Model"></select></label>
  <span id="demo-note" class="demo-note" hidden>Demo model: a built-in planner for common data questions, no network. Configure a real model with <code>reckon serve --upstream …</code>.</span>
  <form id="token-form" class="token-form" hidden>
    <label>This relay needs a token <input id="token" type="password" autocomplete="off"></label>
    <button type="submit">Use it</button>
  </form>
  <a href="console.html" data-page-only>console</a>
  <span id="status" class="status" role="status">loading…</span>
  <progress id="progress" max="1" value="0"></progress>
</header>
<div id="notice" class="notice" role="alert" hidden><span id="notice-text"></span> <button id="notice-close" class="link" type="button" aria-label="Dismiss">×</button></div>
<main>
  <aside class="files" id="drop">
    <label class="button">Add files<input id="upload" type="file" multiple hidden></label>
    <p class="muted small">or drop them here. They are kept in this browser until you delete them.</p>
    <ul id="file-list" aria-label="Your files"></ul>
    <h3 class="small">Results</h3>
    <ul id="output-list" aria-label="Files the analysis wrote"></ul>
    <button id="new-session" type="button">New conversation</button>
    <button id="rebuild" type="button" hidden>Rebuild variables</button>
    <button id="delete-all" class="danger" type="button" title="Delete every saved file and the conversation from this browser">Delete everything</button>
    <h3 class="small">Notebook</h3>
    <div class="actions">
      <button id="export-notebook" type="button" title="Download this session as a Jupyter notebook (.ipynb)">Export notebook</button>
      <button id="export-script" type="button" title="Download this session as a Python script (.py)">Export script</button>
    </div>
    <label class="button">Import notebook or .py<input id="import" type="file" accept=".ipynb,.py,application/x-ipynb+json,text/x-python" hidden></label>
    <details class="sql-box">
      <summary class="small">SQL over your tables</summary>
      <form id="sql-form" class="sql">
        <textarea id="sql" rows="3" spellcheck="false" placeholder="SELECT * FROM sales LIMIT 10" aria-label="SQL query"></textarea>
        <button id="run-sql" type="submit">Run SQL</button>
      </form>
    </details>
  </aside>
  <section class="conversation">
    <div id="messages" aria-live="polite"></div>
    <form id="ask-form" class="ask">
      <textarea id="question" rows="2" placeholder="Ask about your data, e.g. “average price by region” or “plot a histogram of age”" aria-label="Question"></textarea>
      <button id="ask" class="primary" type="submit">Ask</button>
      <button id="stop" type="button" disabled>Stop</button>
    </form>
  </section>
</main>`;

/**
 * The chat's elements as a fragment. `page: false` leaves out what only makes sense
 * on Reckon's own page (the link to the console).
 * @param {{page?: boolean}} [options]
 */
export function chatMarkup({ page = true } = {}) {
  const template = document.createElement("template");
  template.innerHTML = MARKUP;
  if (!page) for (const node of template.content.querySelectorAll("[data-page-only]")) node.remove();
  return template.content;
}

/**
 * Wire the chat UI in `root` to a createReckon() object. The markup is added when the
 * root does not have it yet (into <body> for a document, into `container` or a new
 * `div.reckon-chat` for a shadow root).
 * @param {Document | ShadowRoot} root
 * @param {ReturnType<import("./reckon.js").createReckon>} reckon
 * @param {{page?: boolean, model?: string | null, container?: HTMLElement,
 *          onToken?: (token: string) => void, fileName?: string}} [options]
 * `model` preselects a model (an id, or a profile name: the first of its models);
 * `onToken` is called with a relay token the person typed (default: keep it for this
 * tab and reload); `fileName` is the stem of exported files.
 */
export function mountChat(root, reckon, options = {}) {
  const isDocument = root instanceof Document;
  if (!root.getElementById("messages")) {
    const container = options.container || (isDocument ? root.body : root.appendChild(el("div", "reckon-chat")));
    container.appendChild(chatMarkup({ page: options.page !== false }));
  }
  const $ = (id) => root.getElementById(id);
  const dropZone = isDocument ? root.body : options.container || $("messages").closest(".reckon-chat") || $("drop");
  const onToken =
    options.onToken ||
    ((token) => {
      sessionStorage.setItem("reckon-token", token);
      location.reload();
    });
  const status = $("status");
  const progress = $("progress");
  let busy = false;

  reckon.on("progress", ({ loaded, total }) => {
    progress.max = total;
    progress.value = loaded;
    status.textContent = `loading Python and packages… ${Math.round((100 * loaded) / total)}%`;
  });
  reckon.on("ready", ({ ms }) => {
    progress.hidden = true;
    status.textContent = `ready in ${(ms / 1000).toFixed(1)} s`;
    refreshFiles();
  });
  reckon.on("error", ({ message }) => (status.textContent = `could not start: ${message}`));
  reckon.on("restarted", ({ reason }) => (status.textContent = `sandbox restarted (${reason}); your files are kept`));
  reckon.on("recovered", ({ message }) => {
    status.textContent = message;
    refreshFiles();
  });
  // Storage problems stay on screen until dismissed: the status line changes too often.
  reckon.on("storage-error", ({ message }) => showNotice(message));
  reckon.on("storage-changed", () => refreshFiles());

  function showNotice(message) {
    $("notice-text").textContent = message;
    $("notice").hidden = false;
  }
  $("notice-close").addEventListener("click", () => ($("notice").hidden = true));

  // A reload: show the saved conversation, and offer to rebuild the variables (a
  // fresh interpreter has none; the saved cells can make them again).
  reckon.on("restored", ({ asks, cells }) => {
    asks.forEach((saved, index) => {
      startTurn(saved.question);
      for (const step of saved.steps || []) showStep(step);
      showOutcome(saved, index);
    });
    if (cells > 0) {
      const button = $("rebuild");
      button.textContent = `Rebuild variables (${cells} cell${cells === 1 ? "" : "s"})`;
      button.hidden = false;
    }
  });
  $("rebuild").addEventListener("click", async () => {
    const button = $("rebuild");
    button.disabled = true;
    status.textContent = "re-running the saved cells…";
    const { replayed, failed } = await reckon.replay();
    status.textContent = `${replayed} cell${replayed === 1 ? "" : "s"} replayed${failed ? `, ${failed} failed` : ""}: your variables are back`;
    button.hidden = true;
    button.disabled = false;
    refreshFiles();
  });

  reckon.models().then(({ models, default: fallback, authRequired }) => {
    if (authRequired) {
      $("token-form").hidden = false;
      $("token-form").addEventListener("submit", (ev) => {
        ev.preventDefault();
        onToken($("token").value.trim());
      });
    }
    const wanted = options.model || "";
    const match = wanted ? models.find((m) => m === wanted) || models.find((m) => m.startsWith(`${wanted}/`)) : undefined;
    if (wanted && !match) showNotice(`The model “${wanted}” is not offered here; using ${fallback}.`);
    const chosen = match || fallback;
    for (const name of models) {
      const option = el("option", "", name === "reckon-demo" ? "reckon-demo (built-in demo)" : name);
      option.value = name;
      option.selected = name === chosen;
      $("model").appendChild(option);
    }
    const update = () => ($("demo-note").hidden = $("model").value !== "reckon-demo");
    $("model").addEventListener("change", update);
    update();
  });

  async function save(path) {
    download(path.split("/").pop(), await reckon.readFile(path));
  }

  async function refreshFiles() {
    for (const [dir, id] of [["/data", "file-list"], ["/output", "output-list"]]) {
      const list = $(id);
      const items = [];
      for (const f of await reckon.listFiles(dir)) {
        if (f.is_dir) continue;
        const li = el("li");
        const b = el("button", "link", `${f.name} `);
        b.type = "button";
        b.title = `Download ${f.path}`;
        b.addEventListener("click", () => save(f.path));
        const remove = el("button", "link delete", "×");
        remove.type = "button";
        remove.title = `Delete ${f.name} (from this browser too)`;
        remove.setAttribute("aria-label", `Delete ${f.name}`);
        remove.addEventListener("click", async () => {
          await reckon.deleteFile(f.path);
          shapes.delete(f.path);
          refreshFiles();
        });
        li.append(b, el("span", "muted", formatBytes(f.size)), remove);
        if (shapes.has(f.path)) li.append(el("div", "muted small", shapes.get(f.path)));
        items.push(li);
      }
      list.replaceChildren(...items);
    }
  }

  const shapes = new Map();
  async function upload(files) {
    for (const file of files) {
      status.textContent = `adding ${file.name}…`;
      const info = await reckon.upload(file);
      const summary = info.status !== "ok" ? info.message : info.kind === "table" ? `${info.rows} rows × ${info.columns.length} columns` : info.kind;
      shapes.set(info.path, summary);
      status.textContent = `${file.name}: ${summary}`;
    }
    refreshFiles();
  }

  $("upload").addEventListener("change", (ev) => upload([...ev.target.files]));
  dropZone.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    dropZone.classList.add("dragging");
  });
  dropZone.addEventListener("dragleave", () => dropZone.classList.remove("dragging"));
  dropZone.addEventListener("drop", (ev) => {
    ev.preventDefault();
    dropZone.classList.remove("dragging");
    upload([...ev.dataTransfer.files]);
  });

  // The turn being shown: question, then steps as they finish, then the answer.
  let turn = null;
  // Approval cards go where the steps go; answers get a usage line, the
  // verification badge and "What was sent".
  const control = attachControl(reckon, { onCard: (card) => (turn ? turn.steps : $("messages")).appendChild(card) });
  const settings = el("details", "settings");
  settings.appendChild(el("summary", "", "Settings"));
  settings.appendChild(control.settingsPanel());
  $("drop").appendChild(settings);
  reckon.on("ask", ({ question }) => startTurn(question));
  function startTurn(question) {
    turn = el("div", "turn");
    turn.appendChild(el("div", "question", question));
    turn.steps = el("div", "steps");
    turn.live = el("div", "answer streaming");
    turn.append(turn.steps, turn.live);
    $("messages").appendChild(turn);
  }
  reckon.on("delta", ({ text }) => {
    if (!turn) return;
    turn.live.textContent += text;
  });
  reckon.on("step", ({ step }) => {
    showStep(step);
    refreshFiles();
  });
  function showStep(step) {
    if (!turn) return;
    turn.live.textContent = "";
    // The verification exchange shows in the answer's footer, not as steps.
    if (step.kind === "answer" || step.phase === "verify") return;
    const box = el("details", `step step-${step.kind}`);
    box.open = step.result ? step.result.status !== "ok" || (step.result.figures || []).length > 0 || !!step.result.result : true;
    const summary = el("summary", "", step.kind === "code" ? `Step ${step.index + 1}: ran code (${step.result ? step.result.status : "…"})` : `Step ${step.index + 1}: ${step.kind}`);
    box.appendChild(summary);
    if (step.text) box.appendChild(renderMarkdown(step.text));
    if (step.code) box.appendChild(el("pre", "code", step.code));
    if (step.result) box.appendChild(renderResult(step.result, save));
    if (step.message) box.appendChild(el("p", "error", step.message));
    turn.steps.appendChild(box);
  }

  // Answers are shown from events, so asks made through the JS API show up too.
  function showOutcome(outcome, index) {
    if (!turn) return;
    turn.live.remove();
    const answer = el("div", `answer status-${outcome.status}`);
    answer.appendChild(renderMarkdown(outcome.answer || outcome.message || "(no answer)"));
    if (outcome.status !== "ok" && outcome.message && outcome.answer) answer.appendChild(el("p", "error", outcome.message));
    answer.appendChild(control.answerFooter(outcome, index));
    turn.appendChild(answer);
    turn = null;
  }
  reckon.on("answer", (outcome) => {
    showOutcome(outcome);
    refreshFiles();
  });
  reckon.on("ask-error", (outcome) => {
    showOutcome(outcome);
    refreshFiles();
  });

  async function ask(question) {
    busy = true;
    $("ask").disabled = true;
    $("stop").disabled = false;
    status.textContent = "working…";
    try {
      const outcome = await reckon.ask(question, { model: $("model").value });
      status.textContent = outcome.status === "ok" ? "done" : outcome.status;
    } catch (err) {
      // Not an answer that failed (those are outcomes): the agent itself is not there.
      status.textContent = "could not ask";
      showNotice(`Could not ask: ${err.message || err}`);
    }
    busy = false;
    $("ask").disabled = false;
    $("stop").disabled = true;
    refreshFiles();
  }

  $("ask-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const question = $("question").value.trim();
    if (!question || busy) return;
    $("question").value = "";
    ask(question);
  });
  submitOnEnter($("question"), $("ask-form"));
  $("stop").addEventListener("click", () => reckon.stop());
  $("new-session").addEventListener("click", () => {
    reckon.newConversation();
    $("messages").replaceChildren();
    $("rebuild").hidden = true;
  });
  $("delete-all").addEventListener("click", async () => {
    if (!confirm("Delete every file and the conversation from this browser, and restart Python?")) return;
    status.textContent = "deleting…";
    await reckon.clearAll();
    shapes.clear();
    $("messages").replaceChildren();
    $("rebuild").hidden = true;
    status.textContent = "everything was deleted";
    refreshFiles();
  });

  // Export, import and SQL: the same JS API calls a script would make.
  const stem = options.fileName || "reckon-session";
  async function exportAs(method, extension, type) {
    status.textContent = "exporting…";
    try {
      const text = await reckon[method]();
      download(`${stem}.${extension}`, new Blob([text], { type }));
      status.textContent = `exported ${stem}.${extension}`;
    } catch (err) {
      status.textContent = "export failed";
      showNotice(`The export failed: ${err.message || err}`);
    }
  }
  $("export-notebook").addEventListener("click", () => exportAs("exportNotebook", "ipynb", "application/x-ipynb+json"));
  $("export-script").addEventListener("click", () => exportAs("exportScript", "py", "text/x-python"));

  $("import").addEventListener("change", async (ev) => {
    const input = ev.target;
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    status.textContent = `importing ${file.name}…`;
    let reply;
    try {
      reply = await reckon.importNotebook(file, { name: file.name });
    } catch (err) {
      reply = { status: "error", cells: 0, ok: 0, failed: 0, message: String(err.message || err) };
    }
    showImport(file.name, reply);
    refreshFiles();
  });
  function showImport(name, reply) {
    const cells = `${reply.cells} cell${reply.cells === 1 ? "" : "s"}`;
    const text =
      reply.status === "ok"
        ? `Imported ${name}: ${cells} run as the starting cells, ${reply.ok} ok${reply.failed ? `, ${reply.failed} failed` : ""}.`
        : `${name} was not imported: ${reply.message || reply.status}`;
    const note = el("div", `note import status-${reply.status}`);
    note.appendChild(el("p", reply.status === "ok" ? "" : "error", text));
    if (reply.status === "ok" && reply.message) note.appendChild(el("p", "muted small", reply.message));
    $("messages").appendChild(note);
    status.textContent = reply.status === "ok" ? `imported ${cells}` : "import failed";
  }

  $("sql-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const query = $("sql").value.trim();
    if (!query) return;
    $("run-sql").disabled = true;
    status.textContent = "running SQL…";
    const entry = el("div", "turn sql");
    entry.appendChild(el("pre", "question code", query));
    $("messages").appendChild(entry);
    const result = await reckon.runSql(query);
    entry.appendChild(renderResult(result, save));
    status.textContent = `SQL: ${result.status}`;
    $("run-sql").disabled = false;
    refreshFiles();
  });
  submitOnEnter($("sql"), $("sql-form"), { ctrl: true });

  return { root, refreshFiles, showNotice };
}

/** Enter submits (Shift+Enter is a new line); with `ctrl`, Ctrl/Cmd+Enter does. */
function submitOnEnter(textarea, form, { ctrl = false } = {}) {
  textarea.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" || ev.shiftKey || (ctrl && !(ev.ctrlKey || ev.metaKey))) return;
    ev.preventDefault();
    form.requestSubmit();
  });
}
