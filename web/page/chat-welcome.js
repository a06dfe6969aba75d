// The first screen (what Reckon is, where the data stays, how to start) and the
// example questions offered after an upload, built from the file's columns.

import { el } from "./render.js";

export { exampleQuestions } from "./suggestions.js";

/** Buttons that ask their question when clicked.
 * @param {string[]} questions @param {(question: string) => void} onAsk */
export function questionButtons(questions, onAsk) {
  const box = el("div", "examples");
  for (const question of questions) {
    const button = el("button", "example", question);
    button.type = "button";
    button.addEventListener("click", () => onAsk(question));
    box.appendChild(button);
  }
  return box;
}

/** What the chosen model gets, in the welcome's words (`""`: not known yet). @param {string} model */
function whatIsSent(model) {
  const limit = "Settings › Privacy can limit that to schemas and aggregates";
  if (model === "reckon-demo") return "The built-in demo model answers here too and sends nothing anywhere.";
  if (!model) return `The model sees your question and what the code printed (${limit}).`;
  return `The model, ${model}, is sent your question and what the code printed, through the relay that serves this page (${limit}).`;
}

/** Say in the welcome panel what the model now chosen is sent.
 * @param {Element} welcome @param {string | null | undefined} model */
export function welcomeModel(welcome, model) {
  const line = welcome.querySelector(".model-privacy");
  if (line) line.textContent = whatIsSent(String(model || ""));
}

/**
 * The welcome panel shown while the conversation is empty. `onAsk` asks a question,
 * `onPick` opens the file picker.
 * @param {{onAsk: (question: string) => void, onPick: () => void}} actions
 */
export function renderWelcome({ onAsk, onPick }) {
  const box = el("section", "welcome");
  box.setAttribute("aria-label", "Welcome");
  box.appendChild(el("h2", "", "Ask your data in plain words"));
  box.appendChild(
    el("p", "", "Reckon writes Python for your question, runs it in this browser and answers from what the code computed. Every step is shown: the code, its output, tables and charts."),
  );
  const facts = el("ul", "facts");
  const stays = el("li", "", "Your files stay in this browser: Python runs here, nothing is uploaded. ");
  stays.appendChild(el("span", "model-privacy", whatIsSent("")));
  facts.appendChild(stays);
  const drop = el("li");
  drop.append("Drop CSV, Excel, JSON or Parquet files anywhere on this page, or ");
  const pick = el("button", "link", "choose files");
  pick.type = "button";
  pick.addEventListener("click", onPick);
  drop.append(pick, ". They are kept here until you delete them.");
  facts.appendChild(drop);
  box.appendChild(facts);
  box.appendChild(el("p", "muted small", "Questions that need no file:"));
  box.appendChild(questionButtons(["What is 17*23+4?", "Integrate x**2 from 0 to 3", "Is 97 prime?"], onAsk));
  return box;
}
