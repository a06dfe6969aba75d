// The Sandbox's files: putting, mounting, reading, listing, inspecting and deleting
// them in the worker, and keeping the uploads (`files`, path -> Blob) that recovery.js
// mounts again in a new worker and persistence reads. One part of the Sandbox
// (client.js): every call goes through the Sandbox's `request` (it waits for a
// running replacement unless `direct`).

/** @typedef {Pick<import("./client.js").Sandbox, "request">} Requester */

export class SandboxFiles {
  /** @param {{sandbox: Requester, files: Map<string, Blob>}} options */
  constructor({ sandbox, files }) {
    this.sandbox = sandbox;
    /** @type {Map<string, Blob>} path -> Blob/File of the uploads (the Sandbox's) */
    this.files = files;
  }

  /**
   * Put bytes or text at `path` (under /data unless absolute). `remember: false`
   * leaves it out of what is re-mounted after a restart (persisted outputs are
   * written back as plain, writable files instead).
   * @param {string} path @param {string | ArrayBuffer | Uint8Array} data
   * @param {{direct?: boolean, remember?: boolean}} [options]
   */
  async writeFile(path, data, { direct = false, remember = true } = {}) {
    const full = resolvePath(path);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data instanceof Uint8Array ? data : new Uint8Array(data);
    const copy = bytes.slice(); // handed over (transferred), so the caller's bytes stay theirs
    const reply = await this.sandbox.request("writeFile", { path: full, data: copy }, [copy.buffer], { direct });
    if (reply.status === "ok") {
      if (remember) this.files.set(full, new Blob([/** @type {Uint8Array<ArrayBuffer>} */ (bytes)]));
      else this.files.delete(full);
    }
    return reply;
  }

  /** Mount a File/Blob under /data without copying it into memory.
   * @param {string} path @param {Blob} file @param {{direct?: boolean}} [options] */
  async mountFile(path, file, { direct = false } = {}) {
    const full = resolvePath(path);
    const reply = await this.sandbox.request("mountFile", { path: full, file }, [], { direct });
    if (reply.status === "ok") this.files.set(full, file);
    return reply;
  }

  /** `output: true` reads only a regular file a cell wrote under /output, reached
   * without a link (what persistence keeps).
   * @param {string} path @param {{direct?: boolean, output?: boolean}} [options] @returns {Promise<Uint8Array>} */
  async readFile(path, { direct = false, output = false } = {}) {
    const reply = await this.sandbox.request("readFile", { path: resolvePath(path), ...(output ? { output: true } : {}) }, [], { direct });
    if (reply.status !== "ok") throw new Error(`readFile(${path}): ${reply.message}`);
    return reply.data;
  }

  /** Plain data: rejects when the sandbox cannot list (README, JS API's error rule).
   * @param {string} [dir] @returns {Promise<import("../shared/protocol.js").FileEntry[]>} */
  async listFiles(dir = "/data") {
    const reply = await this.sandbox.request("listFiles", { dir: resolvePath(dir) });
    if (reply.status !== "ok") throw new Error(`listFiles(${dir}): ${reply.message}`);
    return reply.files;
  }

  /** What the worker knows of one file. @param {string} path */
  async inspect(path) {
    const { type, id, ...rest } = await this.sandbox.request("inspect", { path: resolvePath(path) });
    void type;
    void id;
    return rest;
  }

  /** Delete it in the worker, and from the uploads. @param {string} path @param {{direct?: boolean}} [options] */
  async deleteFile(path, { direct = false } = {}) {
    const full = resolvePath(path);
    this.files.delete(full);
    return this.sandbox.request("deleteFile", { path: full }, [], { direct });
  }
}

/** A path under /data unless absolute. @param {unknown} path */
function resolvePath(path) {
  if (typeof path !== "string" || !path) throw new TypeError("path must be a non-empty string");
  return path.startsWith("/") ? path : `/data/${path}`;
}
