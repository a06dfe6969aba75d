// One turn of the chat: the question, the steps as they finish (code, output,
// tables, charts, the model's thinking), the streamed text, a "waiting for the
// model" line while nothing arrives, and the answer with its numbers tied to the
// steps that computed them. Plain DOM; model and file text goes in as text only.

import { el, renderResult } from "./render.js";
import { renderMarkdown } from "./markdown.js";
import { codeBlock, copyButton, proposedBlock } from "./code-block.js";
import { markGrounding } from "./grounding.js";
import { estimateRead, recordCall, tokensToRead } from "./prompt-rate.js";

/** @typedef {import("../shared/protocol.js").AskOutcome} AskOutcome */
/** @typedef {import("../shared/protocol.js").RunResult} RunResult */
/** @typedef {import("./grounding.js").Grounding} Grounding */
/** @typedef {import("./control-ui.js").Usage} Usage */
/** @typedef {import("./control-ui.js").Verification} Verification */
/**
 * What the page reads of a step (PROTOCOL.md §4, "A step in the transcript"), and of
 * an ask's outcome (protocol.js leaves its steps, usage, verification and grounding
 * open); `method` is the "How:" line of the code that printed the answer's value.
 * @typedef {{index?: number, kind: string, text?: string, code?: string, result?: RunResult, message?: string,
 *   model?: string, ms?: number, first_token_ms?: number, origin?: string, phase?: string, proposed?: string, decision?: string,
 *   grounding?: Grounding, method?: Method}} Step
 * @typedef {{text?: string, step?: number}} Method
 * @typedef {Omit<AskOutcome, "steps" | "usage" | "sessionUsage" | "verification" | "grounding"> & {steps: Step[],
 *   usage?: Usage, sessionUsage?: Usage, verification?: Verification, grounding?: Grounding, method?: Method}} Outcome
 * @typedef {{model?: string, tokens?: number, new_tokens?: number}} Waiting the agent's `waiting` event
 */

// The waiting line shows only when the wait is long enough to wonder about.
const WAIT_SHOWN_AFTER_MS = 700;

/** @param {number} ms */
const seconds = (ms) => (ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${Math.round(ms / 1000)} s`);

/** A model's name as the page shows it. @param {string | null | undefined} name */
export const modelLabel = (name) => (name === "reckon-demo" ? "the demo model" : name || "the model");

/**
 * What Reckon told the model in a recheck, labelled as such.
 * @param {string} message
 */
function told(message) {
  const box = el("div", "recheck-told");
  box.append(el("p", "muted small", "Reckon told the model:"), renderMarkdown(message));
  return box;
}

/** One step as a collapsible box; `save(path)` downloads a file the step wrote.
 * @param {Step} step @param {(path: string) => void} save */
export function renderStep(step, save) {
  if (step.kind === "thinking") {
    const box = el("details", "step step-thinking");
    box.dataset.stepIndex = String(step.index);
    box.append(el("summary", "", step.ms ? `Thinking · ${seconds(step.ms)}` : "Thinking"), el("div", "thinking-text", String(step.text || "")));
    return box;
  }
  const box = el("details", `step step-${step.kind}`);
  box.dataset.stepIndex = String(step.index);
  if (step.result) box.dataset.status = String(step.result.status);
  box.open = step.result ? step.result.status !== "ok" || (step.result.figures || []).length > 0 || !!step.result.result : true;
  const number = typeof step.index === "number" && Number.isInteger(step.index) ? `Step ${step.index + 1}` : "Step";
  const status = step.result ? step.result.status : "…";
  // A table Reckon loaded, or the model's cell Reckon ran again with a named month,
  // weekday or year put right (its text says which).
  const did = step.origin === "reckon" ? "Reckon loaded a table" : step.origin === "correction" ? "Reckon re-ran the cell, put right" : "ran code";
  // An answer read from a cell's printed output: Reckon took it, no model wrote it.
  const kind = step.origin === "output" ? `${step.kind} (read from the output)` : step.kind;
  const head = step.kind === "code" ? `${number}: ${did} (${status})` : `${number}: ${kind}`;
  const summary = el("summary", "", head);
  if (step.ms) summary.appendChild(el("span", "muted step-time", ` · ${seconds(step.ms)}`));
  box.appendChild(summary);
  if (step.text) box.appendChild(renderMarkdown(step.text));
  if (step.code) box.append(codeBlock(step.code, "python"), proposedBlock(step) || "");
  if (step.result) box.appendChild(renderResult(step.result, save));
  // A recheck's message is what Reckon told the model (markdown, with code blocks),
  // not a failure; any other step's message is an error.
  if (step.message) box.appendChild(step.kind === "recheck" ? told(step.message) : el("p", "error", step.message));
  for (const img of /** @type {NodeListOf<HTMLImageElement>} */ (box.querySelectorAll("img.figure"))) {
    img.tabIndex = 0;
    img.title = "Click to enlarge";
  }
  return box;
}

export class Turn {
  /** @param {{question: string, model?: string, save: (path: string) => void}} options */
  constructor({ question, model, save }) {
    this.question = question;
    this.model = model || "";
    this.save = save;
    this.element = el("div", "turn");
    this.element.appendChild(el("div", "question", question));
    this.steps = el("div", "steps");
    this.live = el("div", "answer streaming");
    this.wait = el("div", "waiting");
    this.wait.setAttribute("aria-live", "off");
    this.wait.hidden = true;
    this.element.append(this.steps, this.wait, this.live);
    /** @type {ReturnType<typeof setInterval> | null} */
    this.timer = null;
    /** What the wait is about, besides its name: the prompt's size. */
    this.waitDetail = "";
    /** @type {{ms: number, perToken: number} | null} how long the model call should take */
    this.estimate = null;
    /** @type {{model: string, read: number} | null} the model call under way, until its first step */
    this.call = null;
    /** Redraws the waiting line (waitFor sets it). */
    this.tick = () => {};
    /** @type {HTMLElement | null} */
    this.answer = null;
  }

  /** "Waiting for <model> · <what> · 12 s", counting, until text or a step arrives
   * (`model: false`: "<what> · 12 s", a wait that is not the model's).
   * @param {string} what @param {{model?: boolean}} [options] */
  waitFor(what, { model = true } = {}) {
    this.stopWaiting();
    const since = performance.now();
    this.waitDetail = "";
    this.estimate = null;
    const tick = () => {
      const ms = performance.now() - since;
      const label = `${what}${this.waitDetail ? ` (${this.waitDetail})` : ""}`;
      this.wait.hidden = ms < WAIT_SHOWN_AFTER_MS;
      // A clock alone says nothing of how long is normal: the estimate does, and says it is one.
      const guess = this.estimate ? Math.max(1000, Math.round(this.estimate.ms / 1000) * 1000) : 0;
      const clock = !guess ? seconds(ms) : ms <= guess ? `${seconds(ms)} of about ${seconds(guess)} (estimate)` : `${seconds(ms)} (estimated ${seconds(guess)})`;
      this.wait.textContent = `${model ? `Waiting for ${modelLabel(this.model)} · ${label}` : label} · ${clock}`;
    };
    this.tick = tick;
    tick();
    this.timer = setInterval(tick, 250);
  }

  /** The agent's `waiting` event ({model, tokens, new_tokens}): a model call went out, this
   * big. A server with a prompt cache reads only the new part, so both are said.
   * @param {Waiting} waiting */
  calling({ model, tokens, new_tokens: fresh }) {
    if (model && model !== this.model) this.model = model;
    if (!this.timer) this.waitFor(this.steps.childElementCount ? "reading the new output" : "reading the prompt");
    /** @param {unknown} n */
    const count = (n) => `≈${Math.round(Number(n)).toLocaleString("en-US")}`;
    if (Number(tokens) > 0) this.waitDetail = Number(fresh) > 0 && Number(fresh) < Number(tokens) ? `${count(tokens)} tokens, ${count(fresh)} new` : `${count(tokens)} tokens`;
    // This call's size, kept until its first step says how long the model took to answer.
    this.call = { model: this.model, read: tokensToRead({ tokens, new_tokens: fresh }) };
    this.estimate = estimateRead(this.model, this.call.read);
    this.wait.title = this.estimate ? `Estimated from this page's earlier calls to ${this.model}: about ${Math.max(1, Math.round(this.estimate.perToken))} ms a token of prompt` : "";
    this.tick();
  }

  stopWaiting() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.wait.hidden = true;
  }

  /** @param {string} text */
  delta(text) {
    this.stopWaiting();
    this.live.append(text); // a node per piece: += would copy the whole text each time
  }

  /** @param {Step} step @returns {HTMLElement | null} the step's box, if it is shown as a step */
  addStep(step) {
    this.live.textContent = "";
    if (step.model && !this.model) this.model = step.model;
    const firstTokenMs = Number(step.first_token_ms) || 0;
    if (this.call && firstTokenMs > 0) recordCall(this.call.model, this.call.read, firstTokenMs);
    if (firstTokenMs > 0) this.call = null;
    // The verification exchange shows in the answer's footer, not as steps.
    if (step.kind === "answer" || step.phase === "verify") return null;
    const box = renderStep(step, this.save);
    this.steps.appendChild(box);
    if (step.kind === "code" && step.origin !== "reckon") this.waitFor(`reading the output of step ${Number(step.index) + 1}`);
    else if (step.kind === "thinking") this.waitFor("writing");
    return box;
  }

  /** The box of step `index`, when this turn shows it (renderStep makes a <details>).
   * @param {unknown} index @returns {HTMLDetailsElement | null} */
  stepBox(index) {
    const box = this.steps.querySelector(`[data-step-index="${Number(index)}"]`);
    return box instanceof HTMLDetailsElement ? box : null;
  }

  /** Open, show and highlight the first of these steps that this turn shows.
   * @param {unknown[]} indexes @returns {HTMLDetailsElement | null} */
  jumpTo(indexes) {
    for (const index of indexes) {
      const box = this.stepBox(index);
      if (!box) continue;
      box.open = true;
      box.scrollIntoView({ block: "center" });
      box.classList.remove("flash");
      void box.offsetWidth; // restart the animation on a second click
      box.classList.add("flash");
      box.focus({ preventScroll: true });
      return box;
    }
    return null;
  }

  /**
   * The answer: Markdown, numbers marked from `grounding`, who answered, a Copy
   * button, then `footer` (usage, verification, what was sent).
   * @param {Outcome} outcome @param {HTMLElement | null} [footer] @returns {HTMLElement}
   */
  finish(outcome, footer) {
    this.stopWaiting();
    this.live.remove();
    const steps = outcome.steps || [];
    const answerStep = [...steps].reverse().find((s) => s && s.kind === "answer");
    const model = outcome.model || (answerStep && answerStep.model) || (steps.find((s) => s && s.model) || {}).model || this.model;
    const text = outcome.answer || outcome.message || "(no answer)";
    const answer = el("div", `answer status-${outcome.status}`);
    const body = el("div", "answer-body");
    body.appendChild(renderMarkdown(text));
    answer.appendChild(body);
    const grounding = outcome.grounding || (answerStep && answerStep.grounding);
    if (grounding && outcome.answer) {
      for (const box of /** @type {HTMLCollectionOf<HTMLElement>} */ (this.steps.children)) box.tabIndex = -1;
      markGrounding(body, grounding, { onJump: (indexes) => this.jumpTo(indexes) });
    }
    if (outcome.status !== "ok" && outcome.message && outcome.answer) answer.appendChild(el("p", "error", outcome.message));
    const method = outcome.method || (answerStep && answerStep.method);
    if (outcome.status === "ok" && method && method.text) answer.appendChild(this.methodLine(method));
    if (outcome.status === "ok") this.showResultStep(method, grounding);
    const meta = el("div", "answer-meta muted");
    // The person's steps: the model's code, not the tables Reckon loaded for it.
    const shown = steps.filter((s) => s && s.kind === "code" && s.origin !== "reckon").length;
    const stepCount = shown ? ` · ${shown} step${shown === 1 ? "" : "s"}` : "";
    const read = answerStep && answerStep.origin === "output" ? ", read from its code's output" : "";
    const who = outcome.status === "ok" ? `Answered by ${model || "the model"}${read}` : `${model || "The model"} · ${outcome.status}`;
    meta.appendChild(el("span", "answered-by", `${who}${stepCount}`));
    const missing = grounding && Array.isArray(grounding.ungrounded) ? [...new Set(grounding.ungrounded.map(String))] : [];
    if (missing.length) {
      const note = el("span", "ungrounded-note", `Not computed by any step: ${missing.join(", ")}`);
      note.title = "No step's output contains these numbers: check them before you rely on them.";
      meta.appendChild(note);
    }
    if (outcome.answer) meta.appendChild(copyButton(() => outcome.answer, "Copy answer"));
    answer.appendChild(meta);
    if (footer) answer.appendChild(footer);
    this.element.appendChild(answer);
    this.answer = answer;
    return answer;
  }

  /** "How: <what the code did> · step N": read from the code that printed the answer's
   * value, so a wrong method shows at a glance; the link opens that step.
   * @param {Method} method */
  methodLine(method) {
    const line = el("p", "answer-method");
    line.append(el("span", "muted", "How: "), el("span", "method-text", String(method.text)));
    if (Number.isInteger(method.step)) {
      const link = el("button", "method-step", `step ${Number(method.step) + 1}`);
      link.type = "button";
      link.title = "Show the step whose code computed this";
      link.addEventListener("click", () => this.jumpTo([method.step]));
      line.append(el("span", "muted", " · "), link);
    }
    return line;
  }

  /** An answer came: open the step that computed it (the method's step, else the first
   * step its numbers are traced to) and fold the failed attempts before it, which
   * stayed open while they were the news.
   * @param {Method | undefined} method @param {Grounding | undefined} grounding */
  showResultStep(method, grounding) {
    const traced = ((grounding && grounding.numbers) || []).flatMap((n) => n.steps || []);
    const index = method && Number.isInteger(method.step) ? method.step : traced[0];
    const box = Number.isInteger(index) ? this.stepBox(index) : null;
    if (!box) return;
    box.open = true;
    for (const other of /** @type {NodeListOf<HTMLDetailsElement>} */ (this.steps.querySelectorAll("details.step-code[data-status]"))) {
      if (other !== box && other.dataset.status !== "ok") other.open = false;
    }
  }
}

/** A figure opened large in a dialog (click, Enter or Space on it); Esc or a click closes it.
 * @param {HTMLImageElement} img @param {Element} container */
export function zoomFigure(img, container) {
  const dialog = el("dialog", "zoom");
  const large = el("img", "zoomed");
  large.src = img.src;
  large.alt = img.alt;
  const close = el("button", "zoom-close", "Close");
  close.type = "button";
  dialog.append(close, large, el("p", "muted small", img.alt));
  dialog.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  container.appendChild(dialog);
  dialog.showModal();
  close.focus();
  return dialog;
}
