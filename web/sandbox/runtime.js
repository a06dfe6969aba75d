// The sandbox's runtime files: Pyodide's own, the packages and the build's snapshot,
// downloaded from the site as Blobs (the frame has no network) with byte progress.

export class SandboxRuntime extends EventTarget {
  /** @param {{root: URL}} options */
  constructor({ root }) {
    super();
    this.root = root;
    // Over a network the build's snapshot goes as its gzip copies (55 MB, not 185 MB),
    // unpacked here; on this machine unpacking would cost more than it saves.
    this.compressed = typeof DecompressionStream === "function" && !isLoopback(root.hostname);
    /** @type {any} build-info.json, once start() has read it */
    this.info = null;
    this.progress = { loaded: 0, total: 0 };
    /** @type {Record<string, Blob>} the files the worker boots from */
    this.runtime = {};
    /** @type {number | undefined} when the reported downloads were in (bootMarks.fetched) */
    this.fetchedMs = undefined;
  }

  /** Pyodide's own files: what every start needs, whatever the build put beside them. */
  coreNames() {
    return [...this.info.core, "pyodide-lock.json"];
  }

  /** Pyodide's own files among what the worker was given, to keep with a snapshot. */
  coreRuntime() {
    return Object.fromEntries(this.coreNames().filter((name) => this.runtime[name] instanceof Blob).map((name) => [name, this.runtime[name]]));
  }

  /** The build's snapshot files (build.py stage "snapshot"), or {} if it has none. As
   * downloaded: from a site off this machine, the gzip copies of the two big ones. */
  shippedFiles() {
    const shipped = this.info.sandbox.snapshot || {};
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
      const got = await this.fetchRuntime([heap, fs, meta], { report: true, stream: this.compressed });
      const [snap, image] = await Promise.all([heap, fs].map((name) => unpacked(got[name], name, this.info.sizes)));
      return { meta: JSON.parse(await got[meta].text()), snap, fs: image };
    } catch {
      return null;
    }
  }

  /** Fetch the runtime files as Blobs, reporting byte progress: per chunk with `stream`
   * (the big downloads, where a person watches the bar), else per file (pumping a
   * cached file through JS chunk by chunk costs more than the bar is worth). */
  async fetchRuntime(names, { report = false, stream = false } = {}) {
    const progress = () => this.dispatchEvent(new CustomEvent("progress", { detail: { ...this.progress } }));
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

function isLoopback(host) {
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A `.gz` download as the file it packs (checked against the build's size for it). A
 * server that already decoded it (Content-Encoding: gzip) sends the file itself. */
async function unpacked(blob, name, sizes) {
  if (!name.endsWith(".gz")) return blob;
  const head = new Uint8Array(await blob.slice(0, 2).arrayBuffer());
  const file = head[0] === 0x1f && head[1] === 0x8b ? await new Response(blob.stream().pipeThrough(new DecompressionStream("gzip"))).blob() : blob;
  const expected = sizes[name.slice(0, -3)];
  if (file.size !== expected) throw new Error(`${name} unpacked to ${file.size} bytes, not ${expected}`);
  return file;
}
