// The JS API's file calls (reckon.js adds them to createReckon()'s object; documented
// in docs/javascript.md): write, read, list, inspect, delete and upload the sandbox's
// files. What a person writes, uploads or deletes is kept in (or removed from) this
// browser here, through the persistence (persist.js), not on the Sandbox's `ran`
// event: upload() says whether it was kept.

/**
 * @typedef {import("./sandbox/client.js").Sandbox} Sandbox
 * @typedef {import("./persist.js").Persistence} Persistence
 */

/** @param {{sandbox: Sandbox, persist: Persistence | null}} parts */
export function fileCalls({ sandbox, persist }) {
  return {
    /** Write a file; under /data or /output it is also kept in the browser.
     * @param {string} path @param {string | ArrayBuffer | Uint8Array} data */
    async writeFile(path, data) {
      const reply = await sandbox.writeFile(path, data);
      if (persist && reply.status === "ok") {
        const kind = reply.path.startsWith("/output/") ? "output" : "upload";
        await persist.saveFile(reply.path, new Blob([typeof data === "string" ? new TextEncoder().encode(data) : /** @type {ArrayBuffer | Uint8Array<ArrayBuffer>} */ (data)]), kind);
      }
      return reply;
    },
    /** @param {string} path */
    readFile: (path) => sandbox.readFile(path),
    /** @param {string} [dir] */
    listFiles: (dir) => sandbox.listFiles(dir),
    /** @param {string} path */
    inspect: (path) => sandbox.inspect(path),
    /** Delete a file from the sandbox and from the browser's storage. @param {string} path */
    async deleteFile(path) {
      const reply = await sandbox.deleteFile(path);
      if (persist) await persist.deleteFile(reply.path || (path.startsWith("/") ? path : `/data/${path}`));
      return reply;
    },
    /** Upload a File/Blob ({name} required) or {name, bytes}; returns its inspect() summary
     * (with `saved`: whether it is also kept in the browser for next time).
     * @param {Blob | {name: string, bytes: string | ArrayBuffer | Uint8Array}} file */
    async upload(file) {
      let reply;
      let blob;
      if (file instanceof Blob) {
        const name = /** @type {File} */ (file).name || "upload.bin";
        blob = file;
        reply = await sandbox.mountFile(`/data/${safeName(name)}`, file);
      } else if (file && typeof file.name === "string" && file.bytes !== undefined) {
        reply = await sandbox.writeFile(`/data/${safeName(file.name)}`, file.bytes);
        blob = sandbox.files.get(reply.path);
      } else {
        throw new TypeError("upload(file): pass a File, or {name, bytes}");
      }
      if (reply.status !== "ok") return reply;
      const saved = persist && blob ? await persist.saveFile(reply.path, blob, "upload") : false;
      return { ...(await sandbox.inspect(reply.path)), size: reply.size, saved };
    },
  };
}

/** Keep the user's file name (spaces, "=", "+", accents), but never a path.
 * @param {unknown} name */
export function safeName(name) {
  // Control characters are meant here: they never belong in a file name.
  // eslint-disable-next-line no-control-regex
  const base = String(String(name).split(/[\\/]/).pop()).replace(/[\u0000-\u001f]/g, "").trim();
  return base && base !== "." && base !== ".." ? base : "upload.bin";
}
