import { createReckon } from "../reckon.js";
import { el, renderResult, formatBytes, byId, deleteButton, saveFile, showStartup } from "./render.js";

// console.html?snapshot=off boots cold every time (benchmarks/startup.py compares).
const reckon = createReckon({ agent: false, snapshot: new URLSearchParams(location.search).get("snapshot") !== "off" });
window.reckon = reckon;

/** @type {import("./render.js").Find} an element of console.html, by id */
const $ = (id, kind) => byId(document, id, kind);
const status = $("status");
showStartup(reckon, { $, setStatus: (text) => (status.textContent = text), kept: "uploaded files are kept", onFilesChanged: () => refreshFiles() });

async function refreshFiles() {
  const list = $("file-list");
  list.replaceChildren();
  for (const dir of ["/data", "/output"]) {
    for (const f of await reckon.listFiles(dir).catch(() => [])) {
      if (f.is_dir) continue;
      const li = el("li");
      const b = el("button", "link", `${f.path} (${formatBytes(f.size)})`);
      b.type = "button";
      b.addEventListener("click", () => save(f.path));
      const remove = deleteButton(f.path, async () => {
        await reckon.deleteFile(f.path);
        refreshFiles();
      });
      li.append(b, remove);
      list.appendChild(li);
    }
  }
}

/** @param {string} path */
const save = (path) => saveFile(reckon, path);

async function runCell() {
  const code = $("code", HTMLTextAreaElement).value;
  const box = el("div", "cell");
  box.appendChild(el("pre", "code", code));
  const live = el("pre", "stdout live");
  box.appendChild(live);
  $("outputs").prepend(box);
  status.textContent = "running…";
  const result = await reckon.run(code, { onStream: (/** @type {string} */ _name, /** @type {string} */ text) => live.append(text) });
  live.remove();
  box.appendChild(renderResult(result, save));
  status.textContent = `${result.status} in ${Math.round(result.duration_ms)} ms`;
  refreshFiles();
}

$("run").addEventListener("click", runCell);
$("code").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && ev.shiftKey) {
    ev.preventDefault();
    runCell();
  }
});
$("interrupt").addEventListener("click", () => reckon.interrupt());
$("restart").addEventListener("click", () => reckon.restart());
const picker = $("upload", HTMLInputElement);
picker.addEventListener("change", async () => {
  for (const file of picker.files || []) {
    const info = /** @type {import("./chat-files.js").FileInfo} */ (await reckon.upload(file));
    const msg = info.status === "ok" ? (info.kind === "table" ? `${info.rows} rows × ${(info.columns || []).length} columns` : info.kind) : info.message;
    status.textContent = `${file.name}: ${msg}`;
  }
  refreshFiles();
});
$("delete-all").addEventListener("click", async () => {
  if (!confirm("Delete every file and the saved cells from this browser, and restart Python?")) return;
  await reckon.clearAll();
  $("outputs").replaceChildren();
  status.textContent = "everything was deleted";
  refreshFiles();
});
reckon.ready().then(refreshFiles);
