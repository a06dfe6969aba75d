// Keeping the newest of the conversation in view, without pulling a reader who
// scrolled up back down. The page scrolls as a whole; the widget scrolls its <main>.

/** How close to the end (in px) still counts as reading the end. */
const NEAR_END_PX = 160;

/**
 * @typedef {{nearEnd: () => boolean, toEnd: () => void, reveal: (node: HTMLElement) => void}} Scrolling
 */

/**
 * The scrolling helpers for a chat mounted in `root`.
 * @param {Document | ShadowRoot} root
 * @returns {Scrolling}
 */
export function scrolling(root) {
  const isDocument = root instanceof Document;
  // Neither there (a document without a body yet): nothing scrolls.
  const scroller = () => (isDocument ? root.scrollingElement : root.querySelector("main"));
  const nearEnd = () => {
    const s = scroller();
    return !s || s.scrollHeight - s.scrollTop - s.clientHeight < NEAR_END_PX;
  };
  const toEnd = () => {
    const s = scroller();
    if (s) s.scrollTop = s.scrollHeight;
  };
  /** The newest answer in view: its start when it is taller than the window, else all of it.
   * @param {HTMLElement} node */
  const reveal = (node) => {
    const s = scroller();
    if (s && node.offsetHeight > s.clientHeight * 0.7) node.scrollIntoView({ block: "start" });
    else toEnd();
  };
  return { nearEnd, toEnd, reveal };
}
