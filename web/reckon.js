// window.reckon: the JS API of the page (and, later, the widget). Documented in
// README.md ("JS API"); message shapes in PROTOCOL.md.
import { Sandbox } from "./sandbox-client.js";
import { Agent } from "./agent-client.js";

/**
 * Create the API object. The sandbox starts loading immediately, before anyone asks.
 * @param {{root?: URL, container?: HTMLElement, relay?: string, token?: string, agent?: boolean,
 *          settings?: {timeoutMs?: number, maxSteps?: number, maxFailures?: number}}} [options]
 */
export function createReckon(options = {}) {
  const sandbox = new Sandbox(options);
  const agent = new Agent(sandbox, options);
  const events = new EventTarget();
  const forward = (type, ev) => events.dispatchEvent(new CustomEvent(type, { detail: ev.detail }));
  for (const type of ["progress", "ready", "stream", "restarted"]) sandbox.addEventListener(type, (ev) => forward(type, ev));
  for (const type of ["ask", "step", "delta", "answer"]) agent.addEventListener(type, (ev) => forward(type, ev));
  agent.addEventListener("error", (ev) => forward("ask-error", ev));
  const api = {
    sandbox,
    ready: () => sandbox.ready().then(() => ({ status: "ok", ms: sandbox.startMs, crossOriginIsolated: sandbox.crossOriginIsolated })),
    run: (code, opts = {}) => sandbox.run(code, opts),
    writeFile: (path, data) => sandbox.writeFile(path, data),
    readFile: (path) => sandbox.readFile(path),
    listFiles: (dir) => sandbox.listFiles(dir),
    inspect: (path) => sandbox.inspect(path),
    deleteFile: (path) => sandbox.deleteFile(path),
    interrupt: () => sandbox.interrupt(),
    restart: () => sandbox.restart(),
    /** Ask in plain words: resolves to {status, answer, steps, message?}. */
    ask: (question, opts = {}) => agent.ask(question, opts),
    /** Stop the agent: ends the model call and interrupts the running cell. */
    stop: () => agent.stop(),
    /** Forget the conversation (files and variables stay). */
    newConversation: () => agent.reset(),
    models: () => agent.models(),
    /** The conversation as data ({version, asks: [{question, status, answer, steps}]}). */
    transcript: () => agent.transcript(),
    reset: () => sandbox.reset(),
    /** Upload a File/Blob ({name} required) or {name, bytes}; returns its inspect() summary. */
    async upload(file) {
      let reply;
      if (file instanceof Blob) {
        const name = file.name || "upload.bin";
        reply = await sandbox.mountFile(`/data/${safeName(name)}`, file);
      } else if (file && typeof file.name === "string" && file.bytes !== undefined) {
        reply = await sandbox.writeFile(`/data/${safeName(file.name)}`, file.bytes);
      } else {
        throw new TypeError("upload(file): pass a File, or {name, bytes}");
      }
      if (reply.status !== "ok") return reply;
      return { ...(await sandbox.inspect(reply.path)), size: reply.size };
    },
    on(type, fn) {
      events.addEventListener(type, (ev) => fn(ev.detail));
    },
    events,
    agent,
  };
  if (options.agent !== false) agent.ready().catch((err) => events.dispatchEvent(new CustomEvent("error", { detail: { message: `agent: ${err.message || err}` } })));
  sandbox.ready().catch((err) => events.dispatchEvent(new CustomEvent("error", { detail: { message: String(err.message || err) } })));
  return api;
}

/** Keep the user's file name (spaces, "=", "+", accents), but never a path. */
export function safeName(name) {
  const base = String(name).split(/[\\/]/).pop().replace(/[\u0000-\u001f]/g, "").trim();
  return base && base !== "." && base !== ".." ? base : "upload.bin";
}
