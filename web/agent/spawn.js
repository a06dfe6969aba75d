// How the page starts the agent worker under the agent's policy, wherever the site is
// served (agent/client.js keeps the worker and the frame it came from).
import { SEAM_SOURCE } from "../shared/seam.js";

/**
 * A worker running `url`, held to the agent's CSP wherever the site is served.
 * A worker started from a URL gets its policy from that response's headers only,
 * and a plain static server sends none. So the worker starts from a blob: script
 * made through agent.html's Worker: a blob: worker inherits its creator's policy,
 * and that frame's <meta> policy is AGENT_CSP. A page cannot start a worker from
 * another origin's script (an embedded <reckon-chat> whose files are hosted
 * elsewhere); then the blob: script is the page's own and inherits the page's policy
 * (docs/javascript.md, "From another origin"). Either way the script is told where the site's files are.
 * @param {URL} root the site's root @param {URL} url @param {string} name
 * @param {HTMLElement} container where agent.html's frame goes
 * @returns {Promise<{worker: Worker, frame: HTMLIFrameElement | null}>}
 */
export async function spawnWorker(root, url, name, container) {
  const source = `self.RECKON_BASE = ${JSON.stringify(root.href)};\n${SEAM_SOURCE}importScripts(${JSON.stringify(url.href)});\n`;
  /** @type {Window & typeof globalThis} */
  let realm = window;
  /** @type {HTMLIFrameElement | null} */
  let frame = null;
  if (url.origin === location.origin) {
    frame = await openFrame(new URL("agent.html", root), container);
    realm = /** @type {Window & typeof globalThis} */ (frame.contentWindow);
  }
  const blob = realm.URL.createObjectURL(new realm.Blob([source], { type: "text/javascript" }));
  try {
    return { worker: new realm.Worker(blob, { name }), frame };
  } finally {
    realm.URL.revokeObjectURL(blob);
  }
}

/** A hidden frame at `src`, once loaded. @param {URL} src @param {HTMLElement} container @returns {Promise<HTMLIFrameElement>} */
function openFrame(src, container) {
  return new Promise((resolve, reject) => {
    const frame = document.createElement("iframe");
    frame.title = "Reckon agent";
    frame.setAttribute("aria-hidden", "true");
    frame.style.display = "none";
    frame.src = src.href;
    // A missing agent.html still "loads" (a 404 page, with no policy): check it is ours.
    const ours = () => Boolean(frame.contentDocument && frame.contentDocument.title === frame.title);
    frame.addEventListener("load", () => (ours() ? resolve(frame) : reject(new Error(`${src.href} did not load, so the agent cannot start under its policy: rebuild the site (python build.py)`))), { once: true });
    frame.addEventListener("error", () => reject(new Error(`the agent frame (${src.href}) did not load`)), { once: true });
    container.appendChild(frame);
  });
}
