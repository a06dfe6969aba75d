// Showing a conversation that was not asked on this page: the saved one after a
// reload (with the question the reload cut off, and the offer to rebuild the
// variables), or another one opened from the list or the JS API.
import { el } from "./render.js";
import { toolRow } from "./chat-tool-calls.js";

/**
 * @typedef {import("./chat-turn.js").Outcome} Outcome
 * @typedef {import("./chat-files.js").FileInfo} FileInfo
 * @typedef {import("./chat-live.js").Turns} Turns
 * @typedef {import("./render.js").Find} Find
 */
/** An ask of a saved conversation, as restore() gives it back (PROTOCOL.md §4, the transcript).
 * @typedef {Outcome & {question: string, model?: string}} SavedAsk */
/** The `restored` event: the saved asks, how many cells the log has, and a question a
 * reload cut off.
 * @typedef {{asks: SavedAsk[], cells: number, interrupted?: {question?: string} | null}} Restored */

/**
 * @param {ReturnType<import("../reckon.js").createReckon>} reckon
 * @param {{$: Find, messages: HTMLElement, turns: Turns, setStatus: (text: string) => void,
 *          reveal: (node: HTMLElement) => void, ask: (question: string) => void,
 *          suggest: (info: FileInfo) => void,
 *          files: {refresh: () => void, infos: Map<string, FileInfo>}}} parts
 */
export function showSaved(reckon, { $, messages, turns, setStatus, reveal, ask, suggest, files }) {
  /** A saved conversation's asks, as they were shown. @param {SavedAsk[]} asks */
  function showAsks(asks) {
    asks.forEach((saved, index) => {
      const shown = turns.start(saved.question, saved.model, { restoring: true });
      for (const step of saved.steps || []) {
        // Live, a cell's host tool calls are rows drawn while it runs, before its step:
        // the same rows, from the records its run result keeps.
        const records = step.result && Array.isArray(step.result.tools) ? step.result.tools : [];
        for (const record of records) shown.steps.appendChild(toolRow(record));
        shown.addStep(step);
      }
      turns.finish(saved, index);
    });
  }
  // Painted first, so the height of what was just added is known.
  const revealLast = () => {
    const last = messages.lastElementChild;
    if (!(last instanceof HTMLElement)) return false;
    requestAnimationFrame(() => reveal(last.querySelector(".answer") || last));
    return true;
  };

  // A reload: show the saved conversation, and offer to rebuild the variables (a
  // fresh interpreter has none; the saved cells can make them again).
  reckon.on("restored", /** @param {Restored} restored */ ({ asks, cells, interrupted }) => {
    showAsks(asks);
    if (cells > 0) {
      const button = $("rebuild");
      button.textContent = `Rebuild variables (${cells} cell${cells === 1 ? "" : "s"})`;
      button.hidden = false;
    }
    if (interrupted && interrupted.question) showInterrupted(interrupted.question);
    revealLast();
  });
  // Another conversation opened (from the list or the JS API; its cells were replayed),
  // or a new one started: show it instead.
  reckon.on("conversation", /** @param {{asks: SavedAsk[]}} shown */ ({ asks }) => {
    turns.drop();
    messages.replaceChildren();
    $("rebuild").hidden = true;
    $("suggestions").hidden = true;
    showAsks(asks);
    if (!revealLast()) {
      const newest = [...files.infos.values()].filter((i) => i.kind === "table").pop();
      if (newest) suggest(newest);
    }
    files.refresh();
  });
  /** A question that a reload cut off: say so, and offer to ask it again.
   * @param {string} question */
  function showInterrupted(question) {
    const note = el("div", "note interrupted");
    note.appendChild(el("p", "", "This question was still being answered when the page was reloaded:"));
    note.appendChild(el("blockquote", "", question));
    const again = el("button", "primary", "Ask it again");
    again.type = "button";
    const forget = el("button", "", "Forget it");
    forget.type = "button";
    const done = () => {
      note.remove();
      if (reckon.persist && reckon.persist.clearPending) reckon.persist.clearPending();
    };
    again.addEventListener("click", () => {
      done();
      ask(question);
    });
    forget.addEventListener("click", done);
    note.appendChild(el("div", "actions")).append(again, forget);
    messages.appendChild(note);
  }
  $("rebuild").addEventListener("click", async () => {
    const button = $("rebuild", HTMLButtonElement);
    button.disabled = true;
    setStatus("re-running the saved cells…");
    const { replayed, failed } = await reckon.replay();
    setStatus(`${replayed} cell${replayed === 1 ? "" : "s"} replayed${failed ? `, ${failed} failed` : ""}: your variables are back`);
    button.hidden = true;
    button.disabled = false;
    files.refresh();
  });
  return {
    /** Show the last `count` asks of the open conversation (a conversation imported
     * whole: its asks, as they were shown when it was exported). @param {number} count */
    async showLatest(count) {
      const { asks } = /** @type {{asks: SavedAsk[]}} */ (await reckon.transcript());
      showAsks(asks.slice(-count));
      revealLast();
    },
  };
}
