// window.reckon: the JS API of the page (and, later, the widget). Documented in
// README.md ("JS API"); message shapes in PROTOCOL.md.
import { Sandbox } from "./sandbox/client.js";
import { Agent } from "./agent/client.js";
import { Persistence } from "./persist.js";
import { busyError, conversationCalls } from "./reckon-conversations.js";
import { fileCalls, safeName } from "./reckon-files.js";
import { ToolHost } from "./tools.js";

/**
 * Create the API object. The sandbox starts loading immediately, before anyone asks.
 * With `persist` (the default), uploads, files written under /output, the cell log
 * and the conversation are kept in this browser (IndexedDB) until deleted; see
 * persist.js. `session` names the saved conversation (tabs on the same name share it).
 * @param {{root?: URL, container?: HTMLElement, relay?: string, token?: string, agent?: boolean,
 *          persist?: boolean, session?: string, store?: import("./shared/store.js").Store, memoryLimitMB?: number, sqlMemoryLimitMB?: number, snapshot?: boolean,
 *          settings?: {timeoutMs?: number, timeoutPerGbMs?: number, maxSteps?: number, maxFailures?: number, tokenBudget?: number,
 *                      privacy?: "full" | "schema", allowColumns?: string[], approval?: "auto" | "ask",
 *                      verify?: boolean},
 *          tools?: unknown[], toolLimits?: {timeoutMs?: number, callsPerRun?: number, callsPerAsk?: number, resultBytes?: number},
 *          onToolRequest?: import("./tools.js").ToolApprover}} [options]
 */
export function createReckon(options = {}) {
  const sandbox = new Sandbox(options);
  const agent = new Agent(sandbox, options);
  const events = new EventTarget();
  /** @param {string} type @param {object} detail */
  const emit = (type, detail) => events.dispatchEvent(new CustomEvent(type, { detail }));
  /** @param {string} type @param {Event} ev */
  const forward = (type, ev) => emit(type, /** @type {CustomEvent} */ (ev).detail);
  for (const type of ["progress", "ready", "stream", "restarted"]) sandbox.addEventListener(type, (ev) => forward(type, ev));
  sandbox.addEventListener("error", (ev) => forward("error", ev));
  for (const type of ["ask", "step", "delta", "answer", "usage", "proposal", "waiting"]) agent.addEventListener(type, (ev) => forward(type, ev));
  agent.addEventListener("error", (ev) => forward("ask-error", ev));
  // Host tools (web/tools.js): functions this page lends to the sandbox's cells.
  const tools = new ToolHost({ emit, limits: options.toolLimits, approve: options.onToolRequest });
  for (const spec of options.tools || []) tools.register(spec);
  tools.isLive = (runId) => sandbox.channel.isPending(runId);
  // Under schema privacy a tool's result is the person's data: no record keeps it.
  tools.keepsResults = () => [undefined, null, "full"].includes(/** @type {any} */ (agent.settings).privacy);
  sandbox.channel.tools = tools;
  // The relay's tools (`reckon serve` config), asked through the agent worker.
  if (options.agent !== false) tools.useRelay({ list: () => agent.relayTools(), call: (name, args, signal) => agent.callRelayTool(name, args, signal) });
  events.addEventListener("conversation", () => tools.forgetApprovals());
  const persist = options.persist === false ? null : new Persistence({ sandbox, agent, emit, session: options.session, withAgent: options.agent !== false, store: options.store });
  // Asks and notebook imports under way (or waiting their turn): the conversation they
  // write to must stay open until they end.
  let working = 0;
  /** The open conversation's export, or a kept one's (its history is lent to the agent
   * for the export, then the open one's given back).
   * @param {"ipynb" | "py" | "html"} format @param {string} [conversation] @returns {Promise<string>} */
  const exportOf = async (format, conversation) => {
    if (persist) await persist.agentRestored;
    if (!persist || conversation === undefined || conversation === persist.conversationId) return agent.exportSession(format);
    const other = await persist.stateOf(conversation);
    if (working) throw new Error("An answer is being written: export another conversation once it is done (or stop it).");
    // While the agent holds the other history, asks wait and switching is refused.
    working++;
    const lent = (async () => {
      const open = await agent.exportState();
      await agent.importState(other);
      try {
        return await agent.exportSession(format);
      } finally {
        await agent.importState(open);
      }
    })();
    lending = lent.then(() => undefined, () => undefined);
    try {
      return await lent;
    } finally {
      working--;
    }
  };
  /** Resolves when no other conversation's history is lent to the agent (exportOf). */
  let lending = Promise.resolve();
  const { upload, ...files } = fileCalls({ sandbox, persist });
  const api = {
    sandbox,
    persist,
    ready: () => sandbox.ready().then(() => ({ status: "ok", ms: sandbox.startMs, crossOriginIsolated: sandbox.crossOriginIsolated })),
    /** @param {string} code @param {Parameters<Sandbox["run"]>[1]} [opts] */
    run: (code, opts = {}) => sandbox.run(code, opts),
    ...files, // writeFile, readFile, listFiles, inspect, deleteFile (reckon-files.js)
    interrupt: () => sandbox.interrupt(),
    /** A fresh interpreter (uploads and outputs stay; the cell log starts again). */
    restart: () => sandbox.restart(),
    /** Ask in plain words: resolves to {status, answer, steps, message?}.
     * @param {string} question @param {Parameters<Agent["ask"]>[1]} [opts] */
    async ask(question, opts = {}) {
      const stops = agent.stops; // ask() then stop() at once: this ask is stopped
      working++;
      try {
        if (persist) await persist.opening;
        await lending;
        const conversation = persist ? persist.conversationId : null;
        if (persist) await persist.agentRestored;
        tools.beginAsk();
        const outcome = await agent.ask(question, opts, { stops });
        if (persist && conversation) await persist.saveAsk(question, conversation);
        return outcome;
      } finally {
        working--;
      }
    },
    /** Stop the agent: ends the model call and interrupts the running cell. */
    stop: () => {
      tools.denyAll();
      return agent.stop();
    },
    /** Lend the sandbox a function of this page (docs/javascript.md, *Host tools*):
     * {name, description, parameters, returns?, policy?, timeoutMs?, run}; a bad one
     * throws a TypeError. A tool of the same name is replaced.
     * @param {unknown} tool */
    registerTool: (tool) => tools.register(tool),
    /** @param {string} name */
    unregisterTool: (name) => tools.unregister(name),
    /** The tools lent now: [{name, description, parameters, returns?, policy}]. */
    tools: () => tools.describe(),
    /** Answer a `tool-request` event: {action: "allow"} or {action: "deny", reason?}.
     * @param {unknown} requestId @param {unknown} decision */
    decideTool: (requestId, decision) => tools.decide(requestId, decision),
    /** Answer a "proposal" event (settings.approval "ask"): {action: "run"},
     * {action: "edit", code} or {action: "reject", reason}; resolves to {status, message?}.
     * @param {Parameters<Agent["decide"]>[0]} proposalId @param {Parameters<Agent["decide"]>[1]} decision */
    decide: (proposalId, decision) => agent.decide(proposalId, decision),
    /** Change control settings (approval, privacy, allowColumns, tokenBudget, verify) from
     * the next ask: resolves to {status: "ok", settings} or {status: "error", message}.
     * @param {Parameters<Agent["configure"]>[0]} settings */
    configure: (settings) => agent.configure(settings),
    /** What reached the model, per ask: [{question, sent: [{body, parts, usage?, offline}]}]. */
    async sent() {
      const transcript = await api.transcript();
      return (transcript.asks || []).map((/** @type {Record<string, any>} */ ask) => ({ question: ask.question, usage: ask.usage, sent: ask.sent || [] }));
    },
    /** Start a new conversation; the last one stays in conversations() (files and variables stay).
     * @returns {Promise<{status: string, message?: string}>} */
    async newConversation() {
      if (working) return busyError();
      agent.reset();
      if (persist) await persist.newConversation();
      emit("conversation", { id: persist ? persist.conversationId : null, title: "", asks: [], cells: 0, replayed: 0, failed: 0 });
      return { status: "ok" };
    },
    ...conversationCalls({ sandbox, agent, persist, emit, busy: () => working > 0 }),
    models: () => agent.models(),
    /** The session as Jupyter notebook JSON text (nbformat 4), saved asks included;
     * `conversation`: a kept conversation's id instead of the open one.
     * @param {{conversation?: string}} [options] */
    async exportNotebook({ conversation } = {}) {
      return exportOf("ipynb", conversation);
    },
    /** The session as a plain .py script (percent-format cells). @param {{conversation?: string}} [options] */
    async exportScript({ conversation } = {}) {
      return exportOf("py", conversation);
    },
    /** The session as one self-contained HTML page (questions, code, outputs, charts,
     * answers; nothing in it runs or loads). @param {{conversation?: string}} [options] */
    async exportReport({ conversation } = {}) {
      return exportOf("html", conversation);
    },
    /** Run a notebook's or script's code cells as the session's starting cells:
     * resolves to {status, question, cells, ok, failed, asks, conversation, message?}
     * (a notebook Reckon exported comes back as its asks: `conversation` true); bad
     * input changes nothing.
     * @param {string | Blob} source @param {{name?: string}} [options] */
    async importNotebook(source, { name } = {}) {
      let text;
      if (source instanceof Blob) {
        const file = /** @type {File} */ (source);
        if (source.size > IMPORT_LIMIT) return importError(`${file.name || "this file"} is ${Math.round(source.size / 1e6)} MB; a notebook to import may be at most ${IMPORT_LIMIT / 1e6} MB (clear its outputs in Jupyter first).`);
        text = await source.text();
        name = name || file.name;
      } else if (typeof source === "string") {
        text = source;
      } else {
        return importError("importNotebook(source): pass the text of a .ipynb or .py file, or a File.");
      }
      name = safeName(name || (text.trimStart().startsWith("{") ? "notebook.ipynb" : "script.py"));
      working++;
      try {
        if (persist) await persist.agentRestored;
        await sandbox.ready();
        const reply = await agent.importNotebook(text, name);
        if (persist && reply.question) await persist.saveAsk(reply.question, undefined, reply.asks || 1);
        return reply;
      } finally {
        working--;
      }
    },
    /** A SQL query over the uploaded tables, run like the model's run_sql tool:
     * resolves to a run result (section 1 of PROTOCOL.md) whose value is the table.
     * @param {unknown} query @param {Parameters<Sandbox["run"]>[1]} [opts] */
    runSql(query, opts = {}) {
      if (typeof query !== "string" || !query.trim()) {
        const message = "runSql(query): pass one SQL query as a non-empty string, e.g. 'SELECT * FROM sales LIMIT 5'.";
        return Promise.resolve({ status: "error", stdout: "", stderr: "", result: null, figures: [], files: [], error: { type: "ValueError", message, traceback: message, line: null } });
      }
      // JSON string syntax is valid Python string syntax: the query arrives verbatim.
      return sandbox.run(`run_sql(${JSON.stringify(query)})`, opts);
    },
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
    upload, // a File or {name, bytes}, kept in the browser too (reckon-files.js)
    /** @param {string} type @param {(detail: any) => void} fn */
    on(type, fn) {
      if (type === "tool-request") tools.listeners++;
      events.addEventListener(type, (ev) => fn(/** @type {CustomEvent} */ (ev).detail));
    },
    /** Shut down: the sandbox frame and both workers end (their memory is freed), pending
     * calls end with an error, and so does every later call. What is saved stays saved. */
    close() {
      agent.close();
      sandbox.close();
      if (persist) persist.store.close();
      return { status: "ok" };
    },
    events,
    agent,
    /** The host tools' page side (web/tools.js): its `approve` is the onToolRequest hook. */
    toolHost: tools,
  };
  const sandboxReady = sandbox.ready();
  sandboxReady.catch((/** @type {any} */ err) => sandbox.closed || emit("error", { message: String(err.message || err) }));
  // The agent's interpreter starts when it is first needed (an ask, an export, a call
  // of its own; the chat page also starts it when someone begins to type): booting it
  // costs seconds of CPU that a visit without a question never needs. Its worker starts
  // once the sandbox is up, so a page whose policy forbids it says so at once.
  if (options.agent !== false) {
    const report = (/** @type {any} */ err) => agent.closed || emit("error", { message: `agent: ${err.message || err}` });
    const spawn = () => {
      agent.spawn().then(() => tools.loadRelay(), () => {}); // reckon.tools() lists the relay's soon
      return agent.spawn().then(() => agent.failed).catch(report);
    };
    sandboxReady.then(spawn, spawn);
  }
  return api;
}

export { safeName };

const IMPORT_LIMIT = 50e6;

/** @param {string} message */
function importError(message) {
  return { status: "error", cells: 0, ok: 0, failed: 0, message };
}
