// The page's side of snapshot starts: where the sandbox's memory snapshot is kept
// between visits. The sandbox frame has an opaque origin (no storage of its own), so
// the page keeps the snapshot (the build's, once restored, or one this browser made)
// in its Cache Storage and hands it back, as Blobs, with the next boot. README "Fast starts".

const CACHE = "reckon-snapshot";

/** A snapshot's parts: Blobs as kept, ArrayBuffers as a worker made them.
 * @typedef {Blob | ArrayBuffer} Part */
/** @typedef {{meta: Record<string, any>, snap: Blob, fs: Blob}} KeptSnapshot */

/** @param {string} text */
async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// Outside a secure context (plain http off this machine: a laptop's demo on a LAN) there
// is no crypto.subtle, and no Cache Storage either, so the key names nothing kept: any
// stable digest will do, and the build's snapshot can still be restored on each visit.
/** @param {string} text */
function fnv1a(text) {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, "0");
}

/** The key: this build (its build-info), the snapshot code (the recipe) and the browser.
 * Anything else changes it, so a stale snapshot is never even looked at.
 * @param {Record<string, any>} info @param {Blob} recipeSource */
export async function snapshotKey(info, recipeSource) {
  const recipe = await recipeSource.text();
  const text = JSON.stringify([info, info.pyodide, recipe, navigator.userAgent]);
  return typeof crypto !== "undefined" && crypto.subtle ? sha256(text) : fnv1a(text);
}

/** @param {URL} root @param {string} key @param {string} part */
function url(root, key, part) {
  return new URL(`reckon-snapshot/${key}/${part}`, root).href;
}

/** Whether this page can keep a snapshot at all (Cache Storage needs a secure context). */
export function canKeep() {
  return available();
}

function available() {
  return typeof caches !== "undefined" && typeof caches.open === "function";
}

/** @param {URL} root @param {string} key @returns {Promise<KeptSnapshot | null>} */
export async function loadSnapshot(root, key) {
  if (!available()) return null;
  try {
    const cache = await caches.open(CACHE);
    const [meta, snap, fs] = await Promise.all(["meta", "snap", "fs"].map((part) => cache.match(url(root, key, part))));
    if (!meta || !snap || !fs) return null;
    return { meta: await meta.json(), snap: await snap.blob(), fs: await fs.blob() };
  } catch {
    return null; // unreadable storage: a cold boot
  }
}

/** Pyodide's own files as kept beside the snapshot (the cache's Blobs: nothing is read
 * here), or null unless every name in `sizes` is there at that size.
 * @param {URL} root @param {string} key @param {Record<string, number>} sizes @returns {Promise<Record<string, Blob> | null>} */
export async function loadRuntime(root, key, sizes) {
  if (!available()) return null;
  try {
    const cache = await caches.open(CACHE);
    const names = Object.keys(sizes);
    const found = await Promise.all(names.map((name) => cache.match(url(root, key, `runtime/${name}`))));
    if (found.some((response) => !response)) return null;
    const blobs = await Promise.all(found.map((response) => /** @type {Response} */ (response).blob()));
    if (blobs.some((blob, i) => blob.size !== sizes[names[i]])) return null;
    return Object.fromEntries(names.map((name, i) => [name, blobs[i]]));
  } catch {
    return null; // fetched from the site as usual
  }
}

/** Keep one snapshot: this one replaces any other (older builds, other recipes). It is
 * a cache, and the person's files and conversation share the origin's quota with it:
 * it is kept only with room to spare (four times its size), and a write that fails
 * (the quota ran out meanwhile) leaves nothing half-written behind. `runtime` (Pyodide's
 * own files, {name: Blob}) is kept beside it: a warm start then reads them from here,
 * as Blobs of the cache, instead of copying 14 MB out of the HTTP cache first.
 * @param {URL} root @param {string} key @param {{meta: Record<string, any>, snap: Part, fs: Part}} snapshot @param {Record<string, Blob>} [runtime] */
export async function saveSnapshot(root, key, { meta, snap, fs }, runtime = {}) {
  await keepParts(root, key, { snap, fs }, runtime);
  return commitSnapshot(root, key, meta);
}

/** The first half of saveSnapshot(): everything but the meta, which says the copy is
 * whole and good. The page writes these while the worker restores the same snapshot
 * (a first visit closed soon after ready still leaves it), and commits once it worked.
 * @param {URL} root @param {string} key @param {{snap: Part, fs: Part}} parts @param {Record<string, Blob>} [runtime] */
export async function keepParts(root, key, { snap, fs }, runtime = {}) {
  if (!available()) throw new Error("this page has no Cache Storage (it needs a secure context)");
  await dropSnapshots();
  const size = [snap, fs, ...Object.values(runtime)].reduce((sum, part) => sum + byteSize(part), 0);
  if (navigator.storage && navigator.storage.estimate) {
    const { usage = 0, quota = Infinity } = await navigator.storage.estimate();
    if (quota - usage < 4 * size) throw new Error(`not kept: the browser allows this site ${Math.round((quota - usage) / 1e6)} MB more, and the snapshot (${Math.round(size / 1e6)} MB) is kept only with room to spare`);
  }
  try {
    const cache = await caches.open(CACHE);
    await Promise.all([putRuntime(cache, root, key, runtime), cache.put(url(root, key, "snap"), new Response(snap)), cache.put(url(root, key, "fs"), new Response(fs))]);
  } catch (err) {
    await dropSnapshots().catch(() => {});
    throw err;
  }
}

/** The second half: the meta, written last (a copy without it is never read), then the
 * copy read back as the cache's Blobs (kept on disk by the browser), not 180 MB in the page.
 * @param {URL} root @param {string} key @param {Record<string, any>} meta */
export async function commitSnapshot(root, key, meta) {
  try {
    const cache = await caches.open(CACHE);
    await cache.put(url(root, key, "meta"), new Response(JSON.stringify(meta), { headers: { "Content-Type": "application/json" } }));
  } catch (err) {
    await dropSnapshots().catch(() => {});
    throw err;
  }
  return loadSnapshot(root, key);
}

/** Keep Pyodide's own files beside a kept snapshot that lacks good copies of them.
 * @param {URL} root @param {string} key @param {Record<string, Blob>} runtime */
export async function keepRuntime(root, key, runtime) {
  if (available()) await putRuntime(await caches.open(CACHE), root, key, runtime);
}

/** @param {Cache} cache @param {URL} root @param {string} key @param {Record<string, Blob>} runtime */
async function putRuntime(cache, root, key, runtime) {
  for (const [name, blob] of Object.entries(runtime)) await cache.put(url(root, key, `runtime/${name}`), new Response(blob));
}

/** Store the kept snapshot's meta again (once: after its first restore in this browser).
 * @param {URL} root @param {string} key @param {Record<string, any>} meta */
export async function markChecked(root, key, meta) {
  if (!available()) return;
  const cache = await caches.open(CACHE);
  const request = url(root, key, "meta");
  const stored = await cache.match(request);
  if (!stored || (await stored.json()).checkedIn === meta.checkedIn) return;
  await cache.put(request, new Response(JSON.stringify(meta), { headers: { "Content-Type": "application/json" } }));
}

/** @param {Part} part */
function byteSize(part) {
  return part instanceof Blob ? part.size : part.byteLength;
}

export async function dropSnapshots() {
  if (available()) await caches.delete(CACHE);
}
