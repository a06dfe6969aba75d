import { createReckon } from "./reckon.js";
import { el, renderResult, formatBytes, download } from "./render.js";
import { renderMarkdown } from "./markdown.js";

const params = new URLSearchParams(location.search);
// A relay deployed with --token needs it; it is kept for this tab only.
const token = sessionStorage.getItem("reckon-token") || undefined;
const reckon = createReckon({ relay: params.get("relay") || undefined, token });
window.reckon = reckon;

const $ = (id) => document.getElementById(id);
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
  for (const saved of asks) {
    startTurn(saved.question);
    for (const step of saved.steps || []) showStep(step);
    showOutcome(saved);
  }
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

reckon.models().then(({ models, default: chosen, demo, authRequired }) => {
  if (authRequired) {
    $("token-form").hidden = false;
    $("token-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      sessionStorage.setItem("reckon-token", $("token").value.trim());
      location.reload();
    });
  }
  for (const name of models) {
    const option = el("option", "", name === "reckon-demo" ? "reckon-demo (built-in demo)" : name);
    option.value = name;
    option.selected = name === chosen;
    $("model").appendChild(option);
  }
  const update = () => ($("demo-note").hidden = $("model").value !== "reckon-demo");
  $("model").addEventListener("change", update);
  update();
  void demo;
});

async function save(path) {
  download(path.split("/").pop(), await reckon.readFile(path));
}

async function refreshFiles() {
  for (const [dir, id] of [["/data", "file-list"], ["/output", "output-list"]]) {
    const list = $(id);
    list.replaceChildren();
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
      list.appendChild(li);
    }
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
const drop = document.body;
drop.addEventListener("dragover", (ev) => {
  ev.preventDefault();
  document.body.classList.add("dragging");
});
drop.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
drop.addEventListener("drop", (ev) => {
  ev.preventDefault();
  document.body.classList.remove("dragging");
  upload([...ev.dataTransfer.files]);
});

// The turn being shown: question, then steps as they finish, then the answer.
let turn = null;
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
  if (step.kind === "answer") return;
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
function showOutcome(outcome) {
  if (!turn) return;
  turn.live.remove();
  const answer = el("div", `answer status-${outcome.status}`);
  answer.appendChild(renderMarkdown(outcome.answer || outcome.message || "(no answer)"));
  if (outcome.status !== "ok" && outcome.message && outcome.answer) answer.appendChild(el("p", "error", outcome.message));
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
  const outcome = await reckon.ask(question, { model: $("model").value });
  status.textContent = outcome.status === "ok" ? "done" : outcome.status;
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
$("question").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) {
    ev.preventDefault();
    $("ask-form").requestSubmit();
  }
});
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
