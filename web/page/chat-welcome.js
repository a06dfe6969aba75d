// The first screen (what Reckon is, where the data stays, how to start) and the
// example questions offered after an upload, built from the file's columns.

import { el } from "./render.js";

const NUMERIC = /^(u?int|float|Int|UInt|Float|decimal|complex)/;
const DATE = /^datetime|^period|^date/;
const DATE_NAME = /(^|[\s_-])(date|day|month|year|week|time|period|quarter)s?($|[\s_-])|^(date|time)/i;
// Columns that are rarely what a person totals or groups by.
const ID_NAME = /(^|[\s_-])(id|key|code|uuid|index|zip|phone|email|url)$|^(id|index|unnamed)/i;
const AMOUNT_NAME = /revenue|sales|amount|price|total|cost|profit|income|spend|value|quantity|qty|units|score/i;
const LONG_TEXT = /(^|[\s_-])(name|description|comment|notes?|text|address|title)$/i;

/**
 * 3-4 questions about an uploaded table, from its columns ({name, dtype}): a summary,
 * a total by a category, a chart over a date (else a histogram), an average by the category.
 * @param {{path?: string, name?: string, kind?: string, columns?: Array<{name: string, dtype: string}>}} info
 * @returns {string[]}
 */
export function exampleQuestions(info) {
  const file = String(info.name || info.path || "the data").split("/").pop();
  if (info.kind !== "table" || !Array.isArray(info.columns)) return [`What's in ${file}?`];
  const columns = info.columns.filter((c) => c && typeof c.name === "string" && c.name.trim());
  const numbers = columns.filter((c) => NUMERIC.test(String(c.dtype)) && !ID_NAME.test(c.name) && !DATE_NAME.test(c.name));
  const dates = columns.filter((c) => DATE.test(String(c.dtype)) || (!NUMERIC.test(String(c.dtype)) && DATE_NAME.test(c.name)));
  const texts = columns.filter((c) => !NUMERIC.test(String(c.dtype)) && !DATE.test(String(c.dtype)) && !dates.includes(c) && !ID_NAME.test(c.name));
  const category = texts.find((c) => !LONG_TEXT.test(c.name)) || texts[0];
  // An amount a person would total first (revenue, sales, price…), else the first number.
  const amount = numbers.find((c) => AMOUNT_NAME.test(c.name)) || numbers[0];
  const second = numbers.find((c) => c !== amount);
  const questions = [`Summarize ${file}`];
  if (amount && category) questions.push(`Total ${amount.name} by ${category.name}`);
  if (amount && dates[0]) questions.push(`Line chart of ${amount.name} over ${dates[0].name}`);
  else if (amount) questions.push(`Histogram of ${amount.name}`);
  if (amount && category) questions.push(`Average ${second ? second.name : amount.name} by ${category.name}`);
  else if (second) questions.push(`Correlation between ${amount.name} and ${second.name}`);
  else if (category) questions.push(`Count by ${category.name}`);
  return questions.slice(0, 4);
}

/** Buttons that ask their question when clicked. */
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

/** What the chosen model gets, in the welcome's words (`""`: not known yet). */
function whatIsSent(model) {
  const limit = "Settings › Privacy can limit that to schemas and aggregates";
  if (model === "reckon-demo") return "The built-in demo model answers here too and sends nothing anywhere.";
  if (!model) return `The model sees your question and what the code printed (${limit}).`;
  return `The model, ${model}, is sent your question and what the code printed, through the relay that serves this page (${limit}).`;
}

/** Say in the welcome panel what the model now chosen is sent. */
export function welcomeModel(welcome, model) {
  const line = welcome.querySelector(".model-privacy");
  if (line) line.textContent = whatIsSent(String(model || ""));
}

/**
 * The welcome panel shown while the conversation is empty. `onAsk` asks a question,
 * `onPick` opens the file picker.
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
