// Asking from the chat's own form: one question at a time; Stop (or Esc) stops it.
// The question shows at once, before the agent (which may still be starting) takes it.
import { errorText } from "./render.js";
import { modelLabel } from "./chat-turn.js";
import { submitOnEnter } from "./chat-tools.js";

/**
 * @typedef {import("./chat-turn.js").Outcome} Outcome
 * @typedef {import("./chat-live.js").Turns} Turns
 * @typedef {import("./render.js").Find} Find
 */

/**
 * Wire the ask form, Stop and Esc. Returns `ask(question)` (ignored while an ask is
 * under way) and `busy()`.
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{root: Document | ShadowRoot, box: HTMLElement, $: Find, turns: Turns,
 *          setStatus: (text: string) => void, showNotice: (text: string) => void,
 *          toEnd: () => void, refresh: () => void}} parts
 * `box` is the element whose Esc stops the ask.
 */
export function askForm(reckon, { root, box, $, turns, setStatus, showNotice, toEnd, refresh }) {
  let busy = false;

  /** @param {string} question */
  async function ask(question) {
    if (busy) return;
    busy = true;
    $("ask", HTMLButtonElement).disabled = true;
    $("stop", HTMLButtonElement).disabled = false;
    const model = $("model", HTMLSelectElement).value;
    setStatus(`asking ${modelLabel(model)}…`);
    turns.typed = turns.start(question, model);
    turns.typed.waitFor("Starting the agent", { model: false });
    $("suggestions").hidden = true;
    toEnd();
    const started = performance.now();
    try {
      const outcome = await reckon.ask(question, { model: model || undefined });
      // Ended before the agent took it (e.g. closed): no events came, so answer here.
      // (The outcome's steps are the steps its events carried: Step, as the page reads them.)
      if (turns.typedUnderWay()) turns.finish(/** @type {Outcome} */ (outcome));
      const took = ((performance.now() - started) / 1000).toFixed(1);
      setStatus(outcome.status === "ok" ? `answered by ${outcome.model || model} in ${took} s` : `${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}`);
    } catch (err) {
      // Not an answer that failed (those are outcomes): the agent itself is not there.
      const why = `Could not ask: ${errorText(err)}`;
      setStatus("could not ask");
      showNotice(why);
      if (turns.typedUnderWay()) turns.finish({ status: "error", answer: "", message: why, steps: [] });
      refresh(); // no outcome came, so chat-live.js did not list the files after it
    }
    turns.typed = null;
    busy = false;
    $("ask", HTMLButtonElement).disabled = false;
    $("stop", HTMLButtonElement).disabled = true;
  }

  const questionBox = $("question", HTMLTextAreaElement);
  const form = $("ask-form", HTMLFormElement);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const question = questionBox.value.trim();
    if (!question || busy) return;
    questionBox.value = "";
    ask(question);
  });
  submitOnEnter(questionBox, form);
  $("stop").addEventListener("click", () => reckon.stop());
  // Esc stops the ask under way (not while a chart is open large: Esc closes that).
  box.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || !busy || root.querySelector("dialog[open]")) return;
    ev.preventDefault();
    reckon.stop();
    setStatus("stopping…");
  });
  return { ask, busy: () => busy };
}
