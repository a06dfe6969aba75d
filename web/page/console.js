import { createReckon } from "../reckon.js";
import { el, renderResult, formatBytes, download, byId } from "./render.js";

// console.html?snapshot=off boots cold every time (benchmarks/startup.py compares).
const reckon = createReckon({ agent: false, snapshot: new URLSearchParams(location.search).get("snapshot") !== "off" });
window.reckon = reckon;

/** @type {import("./render.js").Find} an element of console.html, by id */
const $ = (id, kind) => byId(document, id, kind);
const status = $("status");
const progress = $("progress", HTMLProgressElement);

reckon.on("progress", /** @param {{loaded: number, total: number}} detail */ ({ loaded, total }) => {
  progress.max = total;
  progress.value = loaded;
  status.textContent = `loading Python and packages… ${Math.round((100 * loaded) / total)}%`;
});
reckon.on("ready", /** @param {{ms: number}} detail */ ({ ms }) => {
  progress.hidden = true;
  status.textContent = `ready in ${(ms / 1000).toFixed(1)} s`;
});
reckon.on("error", /** @param {{message: string}} detail */ ({ message }) => {
  status.textContent = `could not start: ${message}`;
});
reckon.on("restarted", /** @param {{reason: string}} detail */ ({ reason }) => {
  status.textContent = `sandbox restarted (${reason}); uploaded files are kept`;
});
reckon.on("recovered", /** @param {{message: string}} detail */ ({ message }) => {
  status.textContent = message;
  refreshFiles();
});
reckon.on("storage-error", /** @param {{message: string}} detail */ ({ message }) => {
  $("notice-text").textContent = message;
  $("notice").hidden = false;
});
reckon.on("storage-changed", () => refreshFiles());
$("notice-close").addEventListener("click", () => ($("notice").hidden = true));

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
      const remove = el("button", "link delete", "×");
      remove.type = "button";
      remove.title = `Delete ${f.path} (from this browser too)`;
      remove.setAttribute("aria-label", `Delete ${f.path}`);
      remove.addEventListener("click", async () => {
        await reckon.deleteFile(f.path);
        refreshFiles();
      });
      li.append(b, remove);
      list.appendChild(li);
    }
  }
}

/** @param {string} path */
async function save(path) {
  download(path.split("/").pop() || path, await reckon.readFile(path));
}

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
