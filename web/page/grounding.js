// Numbers in a rendered answer, tied to the steps that computed them.
//
// The agent sends `grounding: {numbers: [{text, start, end, steps, computed}], ungrounded}`
// with offsets into the answer's Markdown source. Rendering drops markup characters,
// so offsets do not carry over; instead the rendered text nodes are walked and each
// number's text is found in order, at number boundaries (the agent's own rule: no
// letter, digit or dot before it, no letter or digit after it).

const SKIP = "button, .code-head, .answer-meta, .rc-footer";

/** A number of an answer, and where its value came from (PROTOCOL.md §4, `grounding`).
 * @typedef {{text: string, start?: number, end?: number, steps?: number[], computed?: boolean, given?: boolean}} GroundedNumber
 * @typedef {{numbers?: GroundedNumber[], ungrounded?: unknown[]}} Grounding
 */

/** Text nodes of `root` in document order, without the page's own controls.
 * @param {Node} root @returns {Text[]} */
function textNodes(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement && node.parentElement.closest(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(/** @type {Text} */ (node));
  return nodes;
}

/** @param {string} text @param {number} at @param {number} length */
const bounded = (text, at, length) => !/[\p{L}\p{N}_.]/u.test(text[at - 1] || "") && !/[\p{L}\p{N}_]/u.test(text[at + length] || "");

/**
 * Find each number of `numbers` (in answer order) in the text nodes: [{node, at, number}].
 * A number not found after the previous one's place is skipped; a later one can still be found.
 * @param {Node} root @param {GroundedNumber[]} numbers
 * @returns {Array<{node: Text, at: number, number: GroundedNumber}>}
 */
export function locateNumbers(root, numbers) {
  const nodes = textNodes(root);
  /** @type {Array<{node: Text, at: number, number: GroundedNumber}>} */
  const found = [];
  let n = 0;
  let offset = 0;
  for (const number of [...numbers].sort((a, b) => (a.start ?? 0) - (b.start ?? 0))) {
    const text = String(number.text || "");
    if (!text) continue;
    for (let i = n, from = offset; i < nodes.length; i++, from = 0) {
      const value = nodes[i].data;
      let at = value.indexOf(text, from);
      while (at !== -1 && !bounded(value, at, text.length)) at = value.indexOf(text, at + 1);
      if (at === -1) continue;
      found.push({ node: nodes[i], at, number });
      n = i;
      offset = at + text.length;
      break;
    }
  }
  return found;
}

/**
 * Mark the numbers of `grounding` in the rendered answer `root`: a computed number
 * with steps becomes a button that calls `onJump(stepIndexes)`; a number no step's
 * output holds is marked "not computed". Numbers counted as given (the question's,
 * small counts, list markers) stay plain. Returns how many were linked and flagged.
 * @param {Element} root
 * @param {Grounding} grounding
 * @param {{onJump?: (steps: number[]) => void, stepLabel?: (index: number) => string}} [options]
 */
export function markGrounding(root, grounding, { onJump, stepLabel = (i) => `step ${i + 1}` } = {}) {
  const numbers = grounding && Array.isArray(grounding.numbers) ? grounding.numbers : [];
  const wanted = numbers.filter((n) => n && typeof n.text === "string" && (!n.computed || (Array.isArray(n.steps) && n.steps.length)));
  const hits = locateNumbers(root, wanted);
  let linked = 0;
  let flagged = 0;
  // Right to left, so splitting a node leaves the earlier offsets in it valid.
  for (const { node, at, number } of hits.reverse()) {
    const middle = node.splitText(at);
    middle.splitText(number.text.length);
    let mark;
    if (number.computed) {
      const steps = (number.steps || []).filter((s) => Number.isInteger(s));
      mark = document.createElement("button");
      mark.type = "button";
      mark.className = "num-link";
      mark.dataset.steps = steps.join(",");
      mark.title = `Computed in ${steps.map(stepLabel).join(", ")}: click to see it`;
      mark.addEventListener("click", () => onJump && onJump(steps));
      linked++;
    } else {
      mark = document.createElement("span");
      mark.className = "num-unverified";
      mark.title = "Not computed: no step's output contains this number";
      flagged++;
    }
    middle.replaceWith(mark);
    mark.appendChild(middle);
  }
  return { linked, flagged };
}
