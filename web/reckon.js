// window.reckon: the JS API of the page (and, later, the widget). Documented in
// README.md ("JS API"); message shapes in PROTOCOL.md.
import { Sandbox } from "./sandbox-client.js";
import { Agent } from "./agent-client.js";
import { Persistence } from "./persist.js";

/**
 * Create the API object. The sandbox starts loading immediately, before anyone asks.
 * With `persist` (the default), uploads, files written under /output, the cell log
 * and the conversation are kept in this browser (IndexedDB) until deleted; see
 * persist.js. `session` names the saved conversation (tabs on the same name share it).
 * @param {{root?: URL, container?: HTMLElement, relay?: string, token?: string, agent?: boolean,
 *          persist?: boolean, session?: string, memoryLimitMB?: number,
 *          settings?: {timeoutMs?: number, maxSteps?: number, maxFailures?: number}}} [options]
 */
export function createReckon(options = {}) {
  const sandbox = new Sandbox(options);
  const agent = new Agent(sandbox, options);
  const events = new EventTarget();
  const emit = (type, detail) => events.dispatchEvent(new CustomEvent(type, { detail }));
  const forward = (type, ev) => emit(type, ev.detail);
  for (const type of ["progress", "ready", "stream", "restarted"]) sandbox.addEventListener(type, (ev) => forward(type, ev));
  sandbox.addEventListener("error", (ev) => forward("error", ev));
  for (const type of ["ask", "step", "delta", "answer"]) agent.addEventListener(type, (ev) => forward(type, ev));
  agent.addEventListener("error", (ev) => forward("ask-error", ev));
  const persist = options.persist === false ? null : new Persistence({ sandbox, agent, emit, session: options.session, withAgent: options.agent !== false });
  const api = {
    sandbox,
    persist,
    ready: () => sandbox.ready().then(() => ({ status: "ok", ms: sandbox.startMs, crossOriginIsolated: sandbox.crossOriginIsolated })),
    run: (code, opts = {}) => sandbox.run(code, opts),
    /** Write a file; under /data or /output it is also kept in the browser. */
    async writeFile(path, data) {
      const reply = await sandbox.writeFile(path, data);
      if (persist && reply.status === "ok") {
        const kind = reply.path.startsWith("/output/") ? "output" : "upload";
        await persist.saveFile(reply.path, new Blob([typeof data === "string" ? new TextEncoder().encode(data) : data]), kind);
      }
      return reply;
    },
    readFile: (path) => sandbox.readFile(path),
    listFiles: (dir) => sandbox.listFiles(dir),
    inspect: (path) => sandbox.inspect(path),
    /** Delete a file from the sandbox and from the browser's storage. */
    async deleteFile(path) {
      const reply = await sandbox.deleteFile(path);
      if (persist) await persist.deleteFile(reply.path || (path.startsWith("/") ? path : `/data/${path}`));
      return reply;
    },
    interrupt: () => sandbox.interrupt(),
    /** A fresh interpreter (uploads and outputs stay; the cell log starts again). */
    restart: () => sandbox.restart(),
    /** Ask in plain words: resolves to {status, answer, steps, message?}. */
    async ask(question, opts = {}) {
      if (persist) await persist.agentRestored;
      const outcome = await agent.ask(question, opts);
      if (persist) await persist.saveAsk(question);
      return outcome;
    },
    /** Stop the agent: ends the model call and interrupts the running cell. */
    stop: () => agent.stop(),
    /** Forget the conversation and the cell log (files and variables stay). */
    async newConversation() {
      agent.reset();
      if (persist) await persist.newConversation();
      return { status: "ok" };
    },
    models: () => agent.models(),
    /** The conversation as data ({version, asks: [{question, status, answer, steps}]}), saved asks included. */
    async transcript() {
      if (persist) await persist.agentRestored;
      return agent.transcript();
    },
    /** A fresh namespace in the same interpreter (fast; files are kept, the cell log starts again). */
    async reset() {
      const reply = await sandbox.reset();
      if (persist) await persist.forgetCells();
      return reply;
    },
    /** Re-run the saved successful cells to rebuild the variables: {status, replayed, failed}. */
    async replay() {
      if (!persist) return { status: "ok", replayed: 0, failed: 0 };
      return persist.replay();
    },
    /** What is kept in this browser: {files: [{path, size, mtime, kind}], cells, asks}. */
    async saved() {
      if (!persist) return { status: "ok", files: [], cells: [], asks: [] };
      return persist.saved();
    },
    /** What was found in the browser when the page opened: {asks, cells, files}. */
    restored: () => (persist ? persist.restoredInfo : { asks: [], cells: 0, files: [] }),
    /** Delete everything this browser keeps (files, conversation, cell log) and restart the sandbox. */
    async clearAll() {
      await sandbox.ready();
      if (persist) await persist.clearAll();
      sandbox.files.clear();
      agent.reset();
      await sandbox.restart();
      return { status: "ok" };
    },
    /** Upload a File/Blob ({name} required) or {name, bytes}; returns its inspect() summary
     * (with `saved`: whether it is also kept in the browser for next time). */
    async upload(file) {
      let reply;
      let blob;
      if (file instanceof Blob) {
        const name = file.name || "upload.bin";
        blob = file;
        reply = await sandbox.mountFile(`/data/${safeName(name)}`, file);
      } else if (file && typeof file.name === "string" && file.bytes !== undefined) {
        reply = await sandbox.writeFile(`/data/${safeName(file.name)}`, file.bytes);
        blob = sandbox.files.get(reply.path);
      } else {
        throw new TypeError("upload(file): pass a File, or {name, bytes}");
      }
      if (reply.status !== "ok") return reply;
      const saved = persist && blob ? await persist.saveFile(reply.path, blob, "upload") : false;
      return { ...(await sandbox.inspect(reply.path)), size: reply.size, saved };
    },
    on(type, fn) {
      events.addEventListener(type, (ev) => fn(ev.detail));
    },
    events,
    agent,
  };
  if (options.agent !== false) agent.ready().catch((err) => emit("error", { message: `agent: ${err.message || err}` }));
  sandbox.ready().catch((err) => emit("error", { message: String(err.message || err) }));
  return api;
}

/** Keep the user's file name (spaces, "=", "+", accents), but never a path. */
export function safeName(name) {
  const base = String(name).split(/[\\/]/).pop().replace(/[\u0000-\u001f]/g, "").trim();
  return base && base !== "." && base !== ".." ? base : "upload.bin";
}
