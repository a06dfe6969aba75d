// The host page listening to its widget: events carry the same data as reckon.on().
const chat = document.getElementById("chat");
const log = document.getElementById("host-log");
const note = (text) => log.appendChild(Object.assign(document.createElement("li"), { textContent: text }));
chat.addEventListener("ready", (ev) => note(`ready in ${(ev.detail.ms / 1000).toFixed(1)} s`));
chat.addEventListener("step", (ev) => note(`step ${ev.detail.step.index + 1}: ${ev.detail.step.kind}`));
chat.addEventListener("answer", (ev) => note(`answer: ${ev.detail.answer.slice(0, 80)}`));
chat.addEventListener("error", (ev) => note(`error: ${ev.detail.message}`));
