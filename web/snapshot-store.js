// The page's side of warm starts: where the sandbox's memory snapshot is kept between
// visits. The sandbox frame has an opaque origin (no storage of its own), so its
// snapshot-making worker hands the buffers to the page, which keeps them in its Cache
// Storage and hands them back, as Blobs, with the next boot. README "Warm starts".

const CACHE = "reckon-snapshot";

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The key: this build (its build-info), the snapshot code (the recipe) and the browser.
 * Anything else changes it, so a stale snapshot is never even looked at. */
export async function snapshotKey(info, recipeSource) {
  const recipe = await recipeSource.text();
  return sha256(JSON.stringify([info, info.pyodide, recipe, navigator.userAgent]));
}

function url(root, key, part) {
  return new URL(`reckon-snapshot/${key}/${part}`, root).href;
}

function available() {
  return typeof caches !== "undefined" && typeof caches.open === "function";
}

/** @returns {Promise<{meta: object, snap: Blob, fs: Blob} | null>} */
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

/** Keep one snapshot: this one replaces any other (older builds, other recipes). */
export async function saveSnapshot(root, key, { meta, snap, fs }) {
  if (!available()) throw new Error("this page has no Cache Storage (it needs a secure context)");
  await dropSnapshots();
  const cache = await caches.open(CACHE);
  await cache.put(url(root, key, "snap"), new Response(snap));
  await cache.put(url(root, key, "fs"), new Response(fs));
  await cache.put(url(root, key, "meta"), new Response(JSON.stringify(meta), { headers: { "Content-Type": "application/json" } }));
  // Read back as the cache's Blobs (kept on disk by the browser), not 180 MB in the page.
  return loadSnapshot(root, key);
}

export async function dropSnapshots() {
  if (available()) await caches.delete(CACHE);
}
