// The sandbox's runtime files: Pyodide's own, the packages and the build's snapshot,
// downloaded from the site as Blobs (the frame has no network) with byte progress.
// One part of the Sandbox (client.js), which hears its progress through `emit`.

/** @typedef {(type: string, detail: object) => void} Emit */
/** What build.py writes to build-info.json, as far as the page reads it.
 * @typedef {{core: string[], sizes: Record<string, number>, python?: string, sandbox: {packages: string[], all_packages: string[], files: string[],
 *   eager_files: string[], rest_files?: string[], sql_files?: string[], snapshot?: {heap?: string, fs?: string, meta?: string}}, [k: string]: any}} BuildInfo */

export class SandboxRuntime {
  /** @param {{root: URL, emit: Emit}} options */
  constructor({ root, emit }) {
    this.root = root;
    this.emit = emit;
    // Over a network the build's snapshot goes as its gzip copies (55 MB, not 185 MB),
    // unpacked here; on this machine unpacking would cost more than it saves.
    this.compressed = typeof DecompressionStream === "function" && !isLoopback(root.hostname);
    /** @type {BuildInfo} build-info.json, once load() has read it */
    this.info = { core: [], sizes: {}, sandbox: { packages: [], all_packages: [], files: [], eager_files: [] } };
    this.progress = { loaded: 0, total: 0 };
    /** @type {Record<string, Blob>} the files the worker boots from */
    this.blobs = {};
    /** @type {number | undefined} when the reported downloads were in (bootMarks.fetched) */
    this.fetchedMs = undefined;
    /** @type {string | null} the sandbox's own site, when the relay gives it one (else an opaque frame) */
    this.sandboxOrigin = null;
  }

  /** Read build-info.json (not cached: a rebuilt site says so at once). `reckon serve
   * --sandbox-origin` says on it where the sandbox frame lives (py/reckon/server/
   * _sandbox_site.py); a plain static server, or a relay seen from another origin (the
   * header is not exposed to it), says nothing: the opaque frame. */
  async load() {
    const resp = await fetch(new URL("build-info.json", this.root), { cache: "no-cache" });
    this.sandboxOrigin = siteOrigin(resp.headers.get("Reckon-Sandbox-Origin"), this.root);
    this.info = await resp.json();
    return this.info;
  }

  /** The bytes of `names` as build-info.json gives them. @param {string[]} names */
  size(names) {
    return names.reduce((sum, n) => sum + (this.info.sizes[n] || 0), 0);
  }

  /** What a start downloads, as the progress bar counts it, once the snapshot plan is
   * known ("kept", "build" or null: README "Fast starts"); `kept`: Pyodide's own files
   * came with the kept snapshot. The package files: `eager` (the boot's), `lazy` (the
   * rest of the stack, handed over when a request needs it).
   * @param {"kept" | "build" | null} plan @param {boolean} kept */
  plan(plan, kept) {
    const core = this.coreNames();
    const eager = this.info.sandbox.eager_files;
    const lazy = [...this.info.sandbox.files, ...(this.info.sandbox.rest_files || [])].filter((name) => !eager.includes(name));
    const shipped = /** @type {string[]} */ (Object.values(this.shippedFiles()).filter(Boolean));
    const extra = plan === "build" ? shipped : plan ? [] : eager;
    this.progress = { loaded: kept ? this.size(core) : 0, total: this.size(core) + this.size(extra) };
    return { core, eager, lazy };
  }

  /** Pyodide's own files: what every start needs, whatever the build put beside them. */
  coreNames() {
    return [...this.info.core, "pyodide-lock.json"];
  }

  /** Pyodide's own files among what the worker was given, to keep with a snapshot. */
  coreRuntime() {
    return Object.fromEntries(this.coreNames().filter((name) => this.blobs[name] instanceof Blob).map((name) => [name, this.blobs[name]]));
  }

  /** The build's snapshot files (build.py stage "snapshot"), or {} if it has none. As
   * downloaded: from a site off this machine, the gzip copies of the two big ones. */
  shippedFiles() {
    const shipped = this.info.sandbox.snapshot || {};
    /** @param {string | undefined} name */
    const packed = (name) => (this.compressed && name && this.info.sizes[`${name}.gz`] ? `${name}.gz` : name);
    return { heap: packed(shipped.heap), fs: packed(shipped.fs), meta: shipped.meta };
  }

  /** Download the build's snapshot. On failure: null, and the worker boots cold. */
  async fetchShippedSnapshot() {
    try {
      const { heap, fs, meta } = this.shippedFiles();
      // Chunk by chunk (a smooth progress bar) only over a network. Read in JS, the
      // 212 MB copies on this machine cost more than fetching them: a first visit
      // started in 1.78 s that way, in 1.39 s as whole Blobs (docs/benchmarks.md).
      if (!heap || !fs || !meta) return null;
      const got = await this.fetchRuntime([heap, fs, meta], { report: true, stream: this.compressed });
      const [snap, image] = await Promise.all([heap, fs].map((name) => unpacked(got[name], name, this.info.sizes)));
      return { meta: JSON.parse(await got[meta].text()), snap, fs: image };
    } catch {
      return null;
    }
  }

  /** Fetch the runtime files as Blobs, reporting byte progress: per chunk with `stream`
   * (the big downloads, where a person watches the bar), else per file (pumping a
   * cached file through JS chunk by chunk costs more than the bar is worth).
   * @param {string[]} names @param {{report?: boolean, stream?: boolean}} [options] @returns {Promise<Record<string, Blob>>} */
  async fetchRuntime(names, { report = false, stream = false } = {}) {
    const progress = () => this.emit("progress", { ...this.progress });
    const entries = await Promise.all(
      names.map(async (name) => {
        const resp = await fetch(new URL(`pyodide/${name}`, this.root));
        if (!resp.ok) throw new Error(`could not load ${name}: HTTP ${resp.status}; rebuild the site with \`python build.py\``);
        if (!report || !stream) {
          const blob = await resp.blob();
          if (report) {
            this.progress.loaded += blob.size;
            progress();
          }
          return [name, blob];
        }
        if (!resp.body) throw new Error(`could not load ${name}: the response had no body`);
        const reader = resp.body.getReader();
        const chunks = [];
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          if (report) {
            this.progress.loaded += value.length;
            progress();
          }
        }
        return [name, new Blob(chunks)];
      }),
    );
    if (report) this.fetchedMs = performance.now();
    return Object.fromEntries(entries);
  }
}

/** The sandbox origin the relay named, if it is an http(s) origin of another site than
 * the page's. @param {string | null} value @param {URL} root */
function siteOrigin(value, root) {
  if (!value) return null;
  try {
    const url = new URL(value);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== value || url.host === root.host) return null;
    return url.origin;
  } catch {
    return null;
  }
}

/** @param {string} host */
function isLoopback(host) {
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A `.gz` download as the file it packs (checked against the build's size for it). A
 * server that already decoded it (Content-Encoding: gzip) sends the file itself. */
/** @param {Blob} blob @param {string} name @param {Record<string, number>} sizes */
async function unpacked(blob, name, sizes) {
  if (!name.endsWith(".gz")) return blob;
  const head = new Uint8Array(await blob.slice(0, 2).arrayBuffer());
  const file = head[0] === 0x1f && head[1] === 0x8b ? await new Response(blob.stream().pipeThrough(new DecompressionStream("gzip"))).blob() : blob;
  const expected = sizes[name.slice(0, -3)];
  if (file.size !== expected) throw new Error(`${name} unpacked to ${file.size} bytes, not ${expected}`);
  return file;
}
