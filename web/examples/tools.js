// An example host page that lends the widget two tools (docs/javascript.md, "Host
// tools"). They run here, on the page, with the page's rights: a real shop would call
// its own API with its own session; this one answers from data in this file. The
// sandbox only ever sends {name, args} and gets JSON back.
const ORDERS = [
  { id: 1001, month: 1, day: 4, customer: "Ada", amount: 120.5, status: "paid" },
  { id: 1002, month: 1, day: 19, customer: "Bo", amount: 75, status: "paid" },
  { id: 1003, month: 2, day: 2, customer: "Cy", amount: 210, status: "paid" },
  { id: 1004, month: 2, day: 27, customer: "Ada", amount: 48.25, status: "refunded" },
  { id: 1005, month: 3, day: 3, customer: "Dee", amount: 132, status: "paid" },
  { id: 1006, month: 3, day: 14, customer: "Bo", amount: 89.9, status: "paid" },
  { id: 1007, month: 3, day: 30, customer: "Eli", amount: 310, status: "open" },
];

/** A stand-in for `fetch("/api/orders?month=3", {credentials: "include"})`. */
async function ordersApi(month) {
  await new Promise((resolve) => setTimeout(resolve, 50)); // a network's delay
  return ORDERS.filter((o) => o.month === month).map((o) => ({ ...o }));
}

const chat = document.getElementById("chat");
const log = document.getElementById("tool-log");
const note = (text) => log.appendChild(Object.assign(document.createElement("li"), { textContent: text }));

chat.tools = [
  {
    name: "get_orders",
    description: "The shop's orders of one month of this year: id, day, customer, amount (euros) and status (paid, open, refunded).",
    parameters: {
      type: "object",
      properties: { month: { type: "integer", minimum: 1, maximum: 12, description: "1 = January" } },
      required: ["month"],
      additionalProperties: false,
    },
    returns: { type: "array", items: { type: "object", required: ["id", "amount", "status"] } },
    policy: "run",
    run: ({ month }) => ordersApi(month),
  },
  {
    name: "refund_total",
    description: "The euros refunded so far this year.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    policy: "ask", // the person approves each call in the chat
    run: async () => ({ total: ORDERS.filter((o) => o.status === "refunded").reduce((sum, o) => sum + o.amount, 0) }),
  },
];

chat.addEventListener("tool", (ev) => {
  const { name, args, status, size } = ev.detail;
  note(`${name}(${JSON.stringify(args)}): ${status}${status === "ok" ? `, ${size} bytes` : ""}`);
});

// What the analysis may call, shown to the person: this page's two and any the relay
// adds (`reckon serve --config examples/relay-tools.toml`, docs/configuration.md).
chat.addEventListener("ready", async () => {
  await chat.reckon.toolHost.loadRelay();
  const shown = chat.tools.map((t) => `${t.name}${t.relay ? " (from the relay)" : ""}${t.policy === "ask" ? " (asks you first)" : ""}`);
  document.getElementById("tool-list").textContent = `Tools the analysis can call: ${shown.join(", ")}.`;
}, { once: true });
