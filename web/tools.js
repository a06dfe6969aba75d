// Host tools, the page's side (docs/javascript.md, *Host tools*; PROTOCOL.md §3): the
// functions an embedding page lends to the sandbox. A cell's call arrives as a
// `tool-call` event of the running request, `{id: <run id>, call, name, args: <JSON
// text>}`; here it is checked (a registered name, arguments valid under the tool's
// schema, the caps per run and per ask), approved by the person when the tool's policy
// says so, run with the page's own rights, bounded in time and size, recorded, and
// answered with a `tool-result` note: `{call, status: "ok", text: <JSON>}` or `{call,
// status: "error", message, capped?}`. Only JSON crosses: the sandbox never holds a
// function, an object or a promise of the page, and an approval lives only here, keyed
// by an id made here.

import { OVER, boundedJson, cancelled, megabytes, runBounded } from "./tool-run.js";
import { validate } from "./tool-schema.js";
import { TOOL_DEFAULTS, checkedTool, relaySpec } from "./tool-spec.js";

const ARGS_SHOWN = 2_000; // characters of a call's arguments kept in its record
const WAIT_POLL_MS = 250;
const KEPT_RUNS = 16;
// What a call returned is kept in its record (an exported notebook replays it) up to
// these sizes of JSON text: a run's records are saved with its step in the browser's
// store and with every save of the conversation, so they stay far below resultBytes.
const RESULT_KEPT = 256 * 1024;
const RUN_RESULTS_KEPT = 1024 * 1024;

/** @typedef {import("./tool-spec.js").ToolSpec} ToolSpec */
/** @typedef {import("./tool-spec.js").ToolLimits} ToolLimits */
/** @typedef {import("./tool-spec.js").RelaySource} RelaySource */
/** @typedef {import("./shared/protocol.js").ToolCallRecord} ToolRecord */
/** @typedef {(request: {id: string, name: string, args: unknown, policy: string, description: string}) => unknown} ToolApprover */

export { TOOL_DEFAULTS, checkedTool };

export class ToolHost {
  /** @param {{emit: (type: string, detail: object) => void, limits?: Partial<ToolLimits>, approve?: ToolApprover}} options */
  constructor({ emit, limits = {}, approve }) {
    this.emit = emit;
    this.limits = { ...TOOL_DEFAULTS, ...limits };
    for (const [key, value] of Object.entries(this.limits)) if (!(Number.isFinite(value) && value > 0)) throw new TypeError(`toolLimits.${key} must be a positive number`);
    this.approve = approve || null;
    /** @type {Map<string, ToolSpec>} */
    this.tools = new Map();
    /** @type {Map<number, ToolRecord[]>} each run's calls, until its result takes them */
    this.byRun = new Map();
    /** @type {Map<string, (allowed: {allow: boolean, reason?: string}) => void>} approvals waiting, by the id made here */
    this.waiting = new Map();
    /** @type {Set<string>} tools of policy "once" the person allowed in this conversation */
    this.allowed = new Set();
    this.askCalls = 0;
    this.listeners = 0; // who hears `tool-request` (the chat page, a host page)
    /** @type {{runId: number, texts: string[]}} what the last run's calls returned (for schema privacy) */
    this.values = { runId: -1, texts: [] };
    this.isLive = (/** @type {number} */ _runId) => true;
    /** Whether a record may keep what its call returned: not under schema privacy
     * (reckon.js asks the agent's settings), where it is the person's data. */
    this.keepsResults = () => true;
    /** @type {RelaySource | null} */
    this.relay = null;
    /** @type {Map<string, ToolSpec>} the relay's tools (`reckon serve` config), once listed */
    this.relayTools = new Map();
    /** @type {Promise<void> | null} */
    this.relayListed = null;
  }

  /** Lend the relay's tools too (docs/configuration.md, *Relay tools*). @param {RelaySource} source */
  useRelay(source) {
    this.relay = source;
    this.relayListed = null;
  }

  /** Lists the relay's tools once (a relay without tools, or no relay: none). Each is a
   * host tool like the page's, with the same checks, policies, limits and records; its
   * `run` asks the relay, which checks the arguments again. A page tool of the same name wins. */
  loadRelay() {
    const source = this.relay;
    if (!source) return Promise.resolve();
    if (!this.relayListed) {
      this.relayListed = source.list().then((list) => {
        for (const spec of list) {
          const tool = relaySpec(spec, source);
          if (tool) this.relayTools.set(tool.name, tool);
        }
      }, () => {});
    }
    return this.relayListed;
  }

  /** A page tool, else the relay's tool of that name. @param {string} name */
  lookup(name) {
    return this.tools.get(name) || this.relayTools.get(name) || null;
  }

  /** @param {unknown} spec */
  register(spec) {
    const tool = checkedTool(spec);
    this.tools.set(tool.name, tool);
    this.allowed.delete(tool.name);
    return { status: "ok", name: tool.name };
  }

  /** @param {string} name */
  unregister(name) {
    const had = this.tools.delete(name);
    return had ? { status: "ok", name } : { status: "error", message: `no tool named ${JSON.stringify(name)}` };
  }

  /** What the model and the person are told: [{name, description, parameters, returns?, policy, relay?}]. */
  describe() {
    const relay = [...this.relayTools.values()].filter((t) => !this.tools.has(t.name));
    return [...this.tools.values(), ...relay].map(({ name, description, parameters, returns, policy, relay: fromRelay }) => ({ name, description, parameters, ...(returns ? { returns } : {}), policy, ...(fromRelay ? { relay: true } : {}) }));
  }

  /** A new ask: its calls are counted from zero. */
  beginAsk() {
    this.askCalls = 0;
  }

  /** Another conversation: "once" approvals are asked again. */
  forgetApprovals() {
    this.allowed.clear();
  }

  /** The calls a run made (for its result), forgotten here. @param {number} runId */
  take(runId) {
    const records = this.byRun.get(runId) || [];
    this.byRun.delete(runId);
    // A call still running leaves with its run's result as the cancelled call it is
    // about to be (tool-run.js ends it within a poll): it has no message of its own yet.
    for (const record of records) if (record.status === "error" && record.message === undefined) record.message = cancelled(record.name);
    return records;
  }

  /** The JSON texts run `runId`'s calls returned, handed over once: the agent hides
   * them from the model under schema privacy (PROTOCOL.md §3, *Host tools*). @param {number} runId */
  valuesOf(runId) {
    if (this.values.runId !== runId) return [];
    const { texts } = this.values;
    this.values = { runId: -1, texts: [] };
    return texts;
  }

  /** The person's answer to a `tool-request` event. @param {unknown} id @param {unknown} decision */
  decide(id, decision) {
    const resolve = typeof id === "string" ? this.waiting.get(id) : undefined;
    if (!resolve) return { status: "error", message: `no tool request ${JSON.stringify(id)} is waiting (it was answered, or its cell ended)` };
    const action = decision && typeof decision === "object" ? /** @type {Record<string, unknown>} */ (decision).action : decision;
    if (action !== "allow" && action !== "deny") return { status: "error", message: 'decideTool(id, decision): decision is {action: "allow"} or {action: "deny", reason?}' };
    const reason = decision && typeof decision === "object" ? /** @type {Record<string, unknown>} */ (decision).reason : undefined;
    resolve({ allow: action === "allow", reason: typeof reason === "string" ? reason.slice(0, 500) : undefined });
    return { status: "ok" };
  }

  /** Deny every approval still waiting (stop()). */
  denyAll() {
    for (const resolve of [...this.waiting.values()]) resolve({ allow: false, reason: "stopped" });
  }

  /** A `tool-call` event of run `msg.id`; `reply` sends the `tool-result` note.
   * @param {Record<string, any>} msg @param {(reply: Record<string, unknown>) => void} reply */
  async handle(msg, reply) {
    const started = performance.now();
    const runId = Number(msg.id);
    const call = Number(msg.call);
    const name = String(msg.name).slice(0, 100); // what a hostile cell names is shown: bounded
    /** @type {ToolRecord} */
    const record = { call, runId, name, args: null, status: "error", size: 0, ms: 0 };
    const records = this.byRun.get(runId) || [];
    this.byRun.set(runId, records);
    // A run whose result never came through (its worker was replaced) leaves its
    // records here: only the last few runs are kept.
    for (const old of this.byRun.keys()) if (this.byRun.size > KEPT_RUNS && old !== runId) this.byRun.delete(old);
    const finish = (/** @type {Record<string, unknown>} */ answer, /** @type {Partial<ToolRecord>} */ fields) => {
      Object.assign(record, fields, { ms: Math.round(performance.now() - started) });
      if (answer.status !== "ok") record.message = String(answer.message);
      reply({ ...answer, call });
      this.emit("tool", { ...record });
    };
    const made = records.length;
    records.push(record);
    this.askCalls++;
    if (made >= this.limits.callsPerRun) return finish({ status: "error", capped: true, message: `tools: this cell called tools ${this.limits.callsPerRun} times, the most one run may; call them in fewer, larger steps (a tool's arguments can ask for more at once)` }, { status: "refused" });
    if (this.askCalls > this.limits.callsPerAsk) return finish({ status: "error", capped: true, message: `tools: this question made ${this.limits.callsPerAsk} tool calls, the most one question may; answer from what the calls so far returned` }, { status: "refused" });
    if (!this.tools.has(name)) await this.loadRelay();
    const tool = this.lookup(name);
    if (!tool) {
      const known = this.describe().map((t) => t.name);
      return finish({ status: "error", message: `no tool named ${JSON.stringify(name)}; ${known.length ? `the tools are: ${known.join(", ")}` : "this page lends no tools"}` }, { status: "refused" });
    }
    let args;
    try {
      args = JSON.parse(String(msg.args));
    } catch {
      return finish({ status: "error", message: `${name}: the arguments are not JSON` }, { status: "refused" });
    }
    const argsText = String(msg.args);
    record.args = argsText.length <= ARGS_SHOWN ? args : { "...": `${argsText.length.toLocaleString("en")} characters of arguments` };
    const problems = validate(args, tool.parameters);
    if (problems.length) return finish({ status: "error", message: `${name}: bad arguments: ${problems.join("; ")}. Its parameters: ${JSON.stringify(tool.parameters)}` }, { status: "refused" });
    if (tool.policy !== "run" && !(tool.policy === "once" && this.allowed.has(name))) {
      const decision = await this.ask(tool, args, runId);
      if (decision.request) record.request = decision.request;
      if (!decision.allow) return finish({ status: "error", message: `${name}: the person denied this call${decision.reason ? ` (${decision.reason})` : ""}; do not call it again for this question` }, { status: "denied" });
      if (tool.policy === "once") this.allowed.add(name);
    }
    return this.runTool(tool, args, runId, finish);
  }

  /** @param {ToolSpec} tool @param {unknown} args @param {number} runId
   * @returns {Promise<{allow: boolean, reason?: string, request?: string}>} */
  async ask(tool, args, runId) {
    const request = crypto.randomUUID();
    const detail = { id: request, runId, name: tool.name, args, policy: tool.policy, description: tool.description };
    if (this.approve) {
      try {
        const answer = await this.approve(structuredClone(detail));
        const allow = answer === true || Boolean(answer && typeof answer === "object" && /** @type {Record<string, unknown>} */ (answer).action === "allow");
        return { allow, request };
      } catch (err) {
        return { allow: false, reason: `the approval failed: ${String((err && /** @type {any} */ (err).message) || err)}`, request };
      }
    }
    if (!this.listeners) return { allow: false, reason: "it needs the person's approval and this page has no way to ask (onToolRequest, or a tool-request listener)", request };
    /** @type {Promise<{allow: boolean, reason?: string}>} */
    const answered = new Promise((resolve) => this.waiting.set(request, resolve));
    // The cell may end first (its time limit, stop()): then nobody waits for the answer.
    const timer = setInterval(() => {
      const resolve = this.waiting.get(request);
      if (resolve && !this.isLive(runId)) resolve({ allow: false, reason: "its cell ended before an answer" });
    }, WAIT_POLL_MS);
    this.emit("tool-request", detail);
    try {
      return { ...(await answered), request };
    } finally {
      clearInterval(timer);
      this.waiting.delete(request);
      this.emit("tool-decided", { id: request });
    }
  }

  /** @param {ToolSpec} tool @param {unknown} args @param {number} runId
   * @param {(answer: Record<string, unknown>, fields: Partial<ToolRecord>) => void} finish */
  async runTool(tool, args, runId, finish) {
    const { name } = tool;
    const timeoutMs = tool.timeoutMs || this.limits.timeoutMs;
    const ran = await runBounded(tool, args, { timeoutMs, isLive: () => this.isLive(runId) });
    if (ran.status === "failed") {
      const err = /** @type {any} */ (ran.error);
      return finish({ status: "error", message: `${name} failed: ${String((err && err.message) || err).slice(0, 2000)}` }, { status: "error" });
    }
    if (ran.status === "late") return finish({ status: "error", message: `${name} did not answer within ${Math.round(timeoutMs / 1000)} s (its time limit); try again later, or ask for less` }, { status: "timeout" });
    if (ran.status === "ended" || !this.isLive(runId)) return finish({ status: "error", message: cancelled(name) }, { status: "error" });
    const { value } = ran;
    const limit = this.limits.resultBytes;
    let text;
    try {
      text = boundedJson(value === undefined ? null : value, limit);
    } catch (err) {
      if (err === OVER) return finish({ status: "error", message: `${name} returned more than ${megabytes(limit)} of JSON, the most a result may be; ask it for less (a filter, a month, fewer fields)` }, { status: "error", size: limit + 1 });
      return finish({ status: "error", message: `${name} returned something that is not JSON data (${String((err && /** @type {any} */ (err).message) || err)})` }, { status: "error" });
    }
    const size = text.length > limit ? text.length : new TextEncoder().encode(text).length;
    if (size > limit) return finish({ status: "error", message: `${name} returned ${megabytes(size)} of JSON, over the ${megabytes(limit)} a result may be; ask it for less (a filter, a month, fewer fields)` }, { status: "error", size });
    if (tool.returns) {
      const problems = validate(JSON.parse(text), tool.returns);
      if (problems.length) return finish({ status: "error", message: `${name} returned data that does not match its declared result: ${problems.join("; ")}` }, { status: "error", size });
    }
    if (this.values.runId !== runId) this.values = { runId, texts: [] };
    this.values.texts.push(text);
    return finish({ status: "ok", text }, { status: "ok", size, ...this.kept(text, size, runId) });
  }

  /** The record's `result` (the JSON text the cell got), or why it is left out.
   * @param {string} text @param {number} size @param {number} runId @returns {Partial<ToolRecord>} */
  kept(text, size, runId) {
    if (!this.keepsResults()) return { resultOmitted: "privacy" };
    const earlier = (this.byRun.get(runId) || []).reduce((sum, r) => sum + (r.result ? r.result.length : 0), 0);
    if (size > RESULT_KEPT || earlier + text.length > RUN_RESULTS_KEPT) return { resultOmitted: "too large" };
    return { result: text };
  }
}
