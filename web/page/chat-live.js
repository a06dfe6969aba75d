// The turn being shown (question, then steps as they finish, then the answer) and the
// agent's events that feed it. Answers are shown from events, so asks made through the
// JS API show up just as typed ones do.
import { Turn } from "./chat-turn.js";

/**
 * @typedef {import("./chat-turn.js").Outcome} Outcome
 * @typedef {import("./chat-turn.js").Step} Step
 * @typedef {import("./chat-turn.js").Waiting} Waiting
 * @typedef {import("./chat-scroll.js").Scrolling} Scrolling
 * @typedef {import("./render.js").Find} Find
 */

/** The conversation's turns as shown in `messages`; at most one is still under way. */
export class Turns {
  /**
   * @param {{messages: HTMLElement, save: (path: string) => void,
   *          footer: (outcome: Outcome, index?: number) => HTMLElement}} parts
   * `footer` builds what goes under an answer (usage, verification, "What was sent").
   */
  constructor({ messages, save, footer }) {
    this.messages = messages;
    this.save = save;
    this.footer = footer;
    /** @type {Turn | null} the turn under way */
    this.current = null;
    // A question typed here shows at once (the agent may still be starting); the
    // agent's `ask` event then adopts that turn instead of starting another.
    /** @type {Turn | null} */
    this.typed = null;
  }

  /** @param {string} question @param {string} [model] @param {{restoring?: boolean}} [options] */
  start(question, model, { restoring = false } = {}) {
    if (this.current) this.current.stopWaiting();
    const started = new Turn({ question, model, save: this.save });
    this.current = started;
    this.messages.appendChild(started.element);
    if (!restoring) started.waitFor("reading the prompt");
    return started;
  }

  /** End the turn under way with its outcome; null when none is under way.
   * @param {Outcome} outcome @param {number} [index] the saved ask's (a restored one) */
  finish(outcome, index) {
    if (!this.current) return null;
    const answer = this.current.finish(outcome, this.footer(outcome, index));
    this.current = null;
    return answer;
  }

  /** Whether the turn under way is the one typed here that no event has finished yet. */
  typedUnderWay() {
    return Boolean(this.current && this.current === this.typed);
  }

  /** Forget the turn under way (another conversation is shown instead). */
  drop() {
    if (this.current) this.current.stopWaiting();
    this.current = null;
    this.typed = null;
  }
}

/**
 * Show the agent's events in `turns`: an ask starts (or adopts) a turn, deltas and
 * steps grow it, an answer or ask-error finishes it.
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{turns: Turns, $: Find, scroll: Scrolling, refresh: () => void,
 *          models: {ok: (model: string | undefined) => void,
 *                   failed: (model: string | undefined, message: unknown) => void}}} parts
 */
export function followAgent(reckon, { turns, $, scroll, refresh, models }) {
  reckon.on("ask", /** @param {{question: string, model?: string}} detail */ ({ question, model }) => {
    const typed = turns.typed;
    if (typed && turns.current === typed && typed.question === question) {
      typed.model = model || typed.model;
      typed.waitFor("reading the prompt");
    } else turns.start(question, model);
    turns.typed = null;
    $("suggestions").hidden = true;
    scroll.toEnd();
  });
  // Before each model call the agent says how big the prompt is (agent-client's
  // `waiting` event; reckon.on() does not forward it, so it is taken from the agent).
  if (reckon.agent && typeof reckon.agent.addEventListener === "function") {
    reckon.agent.addEventListener("waiting", (ev) => turns.current && turns.current.calling(/** @type {CustomEvent<Waiting | null>} */ (ev).detail || {}));
  }
  /** Add to the turn; a reader at the end stays at the end. @param {(turn: Turn) => void} add */
  const grow = (add) => {
    if (!turns.current) return;
    const stick = scroll.nearEnd();
    add(turns.current);
    if (stick) scroll.toEnd();
  };
  reckon.on("delta", /** @param {{text: string}} detail */ ({ text }) => grow((shown) => shown.delta(text)));
  reckon.on("step", /** @param {{step: Step}} detail */ ({ step }) => {
    if (!turns.current) return;
    grow((shown) => shown.addStep(step));
    // Only a cell can change the files; each refresh lists both folders (6 messages).
    if (step.kind === "code") refresh();
  });
  for (const type of ["answer", "ask-error"]) {
    reckon.on(type, /** @param {Outcome} outcome */ (outcome) => {
      const answer = turns.finish(outcome);
      if (outcome.status === "ok") models.ok(outcome.model);
      else if (!(outcome.steps || []).some((s) => s.kind === "code")) models.failed(outcome.model, outcome.message);
      if (answer) scroll.reveal(answer);
      refresh();
    });
  }
}
