// The Sandbox's events that a listener may hold up: `started`, `replaced` and `ran`
// (docs/architecture.md). Persistence listens to them; what it hands to
// `detail.waitUntil()` is awaited before the sandbox goes on (ready() resolving, the
// requests waiting for a replacement, a run's result being handed back).

/** @typedef {{waitUntil: (work: Promise<unknown>) => void}} Waitable */

/**
 * Dispatch `type` on `target` and wait for what its listeners gave to waitUntil (they
 * run during the dispatch, so they must call it at once, as a service worker does).
 * Rejects with the first failure among them.
 * @param {EventTarget} target @param {string} type @param {object} detail
 */
export async function dispatchAndWait(target, type, detail) {
  /** @type {Promise<unknown>[]} */
  const waits = [];
  target.dispatchEvent(new CustomEvent(type, { detail: { ...detail, waitUntil: (/** @type {Promise<unknown>} */ work) => void waits.push(work) } }));
  await Promise.all(waits);
}
