// What a host tool is (docs/javascript.md, *Host tools*): a registration checked once,
// whether the page lends it or the relay lists it (docs/configuration.md, *Relay
// tools*). web/tools.js runs the calls.

import { schemaProblem } from "./tool-schema.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const POLICIES = ["run", "ask", "once"];
// Python's keywords and the names a cell's `tools` namespace keeps for itself.
const RESERVED = new Set(["False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "Tool", "ToolError"]);
// A relay tool's time limit here is the relay's own plus this: the relay's message
// (which names its limit) arrives first.
const RELAY_GRACE_MS = 5_000;

/** @typedef {{timeoutMs: number, callsPerRun: number, callsPerAsk: number, resultBytes: number}} ToolLimits */
/** @type {Readonly<ToolLimits>} */
export const TOOL_DEFAULTS = Object.freeze({ timeoutMs: 30_000, callsPerRun: 50, callsPerAsk: 200, resultBytes: 5_000_000 });

/** @typedef {{name: string, description: string, parameters: Record<string, any>, returns?: Record<string, any>, policy: "run" | "ask" | "once",
 *   timeoutMs?: number, run: (args: any, context: {signal: AbortSignal}) => unknown, relay?: boolean}} ToolSpec */
/** Where the relay's tools come from (agent/client.js: through the agent worker).
 * @typedef {{list: () => Promise<unknown[]>, call: (name: string, args: unknown, signal: AbortSignal) => Promise<unknown>}} RelaySource */

/** A registration's problem, thrown as a TypeError at once. @param {unknown} spec @returns {ToolSpec} */
export function checkedTool(spec) {
  if (!spec || typeof spec !== "object") throw new TypeError("registerTool(tool): pass {name, description, parameters, run, policy?}");
  const t = /** @type {Record<string, any>} */ (spec);
  if (typeof t.name !== "string" || !NAME.test(t.name) || RESERVED.has(t.name)) throw new TypeError(`registerTool: name ${JSON.stringify(t.name)} must be a Python identifier (letters, digits, _; at most 64) and not a keyword`);
  if (typeof t.description !== "string" || !t.description.trim()) throw new TypeError(`registerTool(${t.name}): description must be a non-empty string (the model reads it)`);
  if (typeof t.run !== "function") throw new TypeError(`registerTool(${t.name}): run must be a function (args) => result`);
  const parameters = t.parameters === undefined ? { type: "object", properties: {} } : t.parameters;
  const problem = schemaProblem(parameters, "parameters") || (parameters.type !== "object" ? 'parameters: the arguments are named, so its type must be "object"' : null) || (t.returns !== undefined ? schemaProblem(t.returns, "returns") : null);
  if (problem) throw new TypeError(`registerTool(${t.name}): ${problem}`);
  const policy = t.policy === undefined ? "run" : t.policy;
  if (!POLICIES.includes(policy)) throw new TypeError(`registerTool(${t.name}): policy must be "run", "ask" or "once", not ${JSON.stringify(policy)}`);
  if (t.timeoutMs !== undefined && !(Number.isFinite(t.timeoutMs) && t.timeoutMs > 0)) throw new TypeError(`registerTool(${t.name}): timeoutMs must be a positive number`);
  // A copy: the page may change its object later without changing what was checked.
  return { name: t.name, description: t.description.trim(), parameters: structuredClone(parameters), returns: t.returns === undefined ? undefined : structuredClone(t.returns), policy, timeoutMs: t.timeoutMs, run: t.run };
}

/** A tool the relay listed, as a host tool whose `run` asks the relay (which checks the
 * arguments again); null, with a warning, when its description is not a valid tool.
 * @param {unknown} spec @param {RelaySource} source @returns {ToolSpec | null} */
export function relaySpec(spec, source) {
  const s = /** @type {Record<string, any>} */ (spec);
  try {
    const name = String(s.name);
    const tool = checkedTool({ name, description: s.description, parameters: s.parameters, returns: s.returns, policy: s.policy, timeoutMs: Number(s.timeoutMs) + RELAY_GRACE_MS, run: (/** @type {unknown} */ args, /** @type {{signal: AbortSignal}} */ { signal }) => source.call(name, args, signal) });
    return { ...tool, relay: true };
  } catch (err) {
    console.warn(`Reckon: the relay's tool ${JSON.stringify(s && s.name)} is left out: ${String((err && /** @type {any} */ (err).message) || err)}`);
    return null;
  }
}
