// The host page's tools for tests/browser/test_tools.py (read by tool_kit.py and run
// as the body of an async function of `arg`, the canary's URL).
const canary = arg;
window.__ran = [];
window.__credential = "sk-page-SECRET-7f3a";
const orders = [
  { id: 1, month: 3, amount: 120.5, customer: "Ada" },
  { id: 2, month: 3, amount: 80, customer: "Bo" },
  { id: 3, month: 4, amount: 42, customer: "Cy" },
];
const r = window.reckon;
const month = { type: "object", properties: { month: { type: "integer", minimum: 1, maximum: 12 } },
                required: ["month"], additionalProperties: false };
const none = { type: "object", properties: {}, additionalProperties: false };
const tool = (name, run, extra = {}) => r.registerTool({ name, description: `the ${name} tool`, parameters: none, run, ...extra });
r.registerTool({ name: "get_orders", description: "The shop's orders of one month.", parameters: month,
  returns: { type: "array", items: { type: "object", required: ["id", "amount"] } },
  run: async ({ month }) => { window.__ran.push(["get_orders", month]);
    // The page's own rights: its credential goes with its requests, never to the sandbox.
    void window.__credential; return orders.filter((o) => o.month === month); } });
tool("boom", () => { window.__ran.push(["boom"]); throw new Error("the orders API answered 503"); });
tool("hang", () => { window.__ran.push(["hang"]); return new Promise(() => {}); }, { timeoutMs: 1500 });
tool("huge", () => { window.__ran.push(["huge"]); return "x".repeat(100_000_000); });
tool("window_object", () => { window.__ran.push(["window_object"]); return window; });
tool("functions", () => { window.__ran.push(["functions"]); return { fetch: window.fetch, canary, n: 1 }; });
tool("echo", (args) => { window.__ran.push(["echo", args]); return { got: args, polluted: ({}).polluted === undefined ? null : "yes" }; },
  { parameters: { type: "object", properties: {} } });
tool("secret_report", () => { window.__ran.push(["secret_report"]); return { total: 7 }; }, { policy: "ask" });
tool("monthly_once", () => { window.__ran.push(["monthly_once"]); return 1; }, { policy: "once" });
tool("bad_result", () => { window.__ran.push(["bad_result"]); return [{ id: "x" }]; },
  { returns: { type: "array", items: { type: "object", properties: { id: { type: "integer" } } } } });
window.__tools = [];
r.on("tool", (d) => window.__tools.push(d));
return r.tools().map((t) => t.name);
