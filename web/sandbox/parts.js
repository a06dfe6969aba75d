// The sandbox's classic scripts that are made of parts, each one job: the worker
// (worker/main.js says why one closure) and the snapshot recipe (snapshot/make.js).
// The page joins each into one script inside one closure; the build joins the recipe
// the same way to run it under Node.js (sitebuild/snapshot.mjs), so both run one source.

/** The sandbox worker's parts, in order. */
export const WORKER_PARTS = ["sandbox/worker/state.js", "sandbox/worker/memory.js", "sandbox/worker/memory-apis.js", "sandbox/worker/wasm-exports.js", "sandbox/worker/fetch.js", "sandbox/worker/boot.js", "sandbox/worker/rest.js", "sandbox/worker/sql.js", "sandbox/worker/outputs.js", "sandbox/worker/tools.js", "sandbox/worker/handlers.js", "sandbox/worker/queue.js", "sandbox/worker/main.js"];
/** The snapshot recipe's parts, in order: every file of sandbox/snapshot/ (the build's
 * snapshot is named by a hash of that folder and this file). */
export const RECIPE_PARTS = ["sandbox/snapshot/make.js", "sandbox/snapshot/image.js", "sandbox/snapshot/restore.js"];

/** The parts' sources as one script, inside one closure. @param {string[]} texts @param {string} [first] run first, inside it */
export function joinParts(texts, first = "") {
  return ["(() => {\n", first, ...texts.map((text) => `${text}\n`), "})();\n"].join("");
}

/** The parts fetched from the site and joined, as one Blob.
 * @param {URL} root @param {string[]} names @param {string} [first] run first, inside the closure (the worker's SEAM_SOURCE) */
export async function fetchParts(root, names, first = "") {
  const texts = await Promise.all(
    names.map(async (name) => {
      const resp = await fetch(new URL(name, root));
      if (!resp.ok) throw new Error(`could not load ${name}: HTTP ${resp.status}; rebuild the site with \`python build.py\``);
      return resp.text();
    }),
  );
  return new Blob([joinParts(texts, first)], { type: "text/javascript" });
}
