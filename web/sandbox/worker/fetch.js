"use strict";
// Pyodide fetches its files from indexURL: answered from the Blobs the page handed
// over (asking for one the page still holds back). Nothing else has a network.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.
/* exported RuntimeFiles */

const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };

/** The runtime's files, by name: those the page handed over, and those still on their way. */
class RuntimeFiles {
  /** @param {PageLink} link asks the page for the files it holds back */
  constructor(link) {
    this.link = link;
    /** @type {Record<string, Blob>} runtime files by name, handed over by the page */
    this.runtime = {};
    this.indexURL = "";
    /** @type {Set<string>} named by the lock, still on their way from the page */
    this.lazy = new Set();
    /** @type {Map<string, Array<(value?: unknown) => void>>} file name -> who waits for it */
    this.waiting = new Map();
    /** @type {Map<string, string>} file name -> why the page could not fetch it */
    this.refused = new Map();
    /** @type {Array<(value?: unknown) => void>} whenAllHere() calls waiting for the rest of the files */
    this.restWaiters = [];
  }

  /** Answer Pyodide's fetches under indexURL from here, from now on. */
  hook() {
    const networkFetch = self.fetch.bind(self);
    self.fetch = (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (this.indexURL && url.startsWith(this.indexURL)) return this.serve(url);
      return networkFetch(input, init); // refused by CSP: the sandbox has no network
    };
  }

  /** @param {string} url */
  async serve(url) {
    const name = decodeURIComponent(url.slice(this.indexURL.length).split(/[?#]/)[0]);
    if (!this.runtime[name] && this.lazy.has(name)) {
      // The page may be holding it back (the boot's package files, or the rest of the
      // stack until the sandbox is idle): ask for it now.
      this.link.needFiles();
      await this.arrival(name);
    }
    const blob = this.runtime[name];
    if (!blob && this.refused.has(name)) return new Response(`${name} could not be loaded: ${this.refused.get(name)}`, { status: 503 });
    if (!blob) return new Response(`not in this build: ${name}`, { status: 404 });
    const ext = /** @type {keyof typeof MIME} */ (name.split(".").pop());
    return new Response(blob, { headers: { "Content-Type": MIME[ext] || "application/octet-stream" } });
  }

  /** Resolves when the page sent `name`, or said it could not. @param {string} name */
  arrival(name) {
    return new Promise((resolve) => this.waiting.set(name, [...(this.waiting.get(name) || []), resolve]));
  }

  /** The page holds the rest of the stack's files back until a request needs them: ask
   * for them now, and wait until they are all here. */
  async whenAllHere() {
    if (!this.lazy.size) return;
    this.link.needFiles();
    await new Promise((resolve) => this.restWaiters.push(resolve));
  }

  /** Files from the page (addRuntime, PROTOCOL.md §3), or the names it could not fetch.
   * @param {Record<string, any>} msg */
  add(msg) {
    Object.assign(this.runtime, msg.files);
    for (const name of Array.isArray(msg.failed) ? msg.failed : []) {
      if (this.runtime[name]) continue;
      this.refused.set(name, String(msg.message || "it could not be downloaded"));
      this.arrived(name);
    }
    for (const name of Object.keys(msg.files)) this.arrived(name);
    if (this.lazy.size === 0) for (const resolve of this.restWaiters.splice(0)) resolve();
  }

  /** @param {string} name */
  arrived(name) {
    for (const resolve of this.waiting.get(name) || []) resolve();
    this.waiting.delete(name);
    this.lazy.delete(name);
  }
}

// Nothing a cell starts may outlive it: no worker of its own, which would keep running
// after the run, a restart or reset() (the second outside attack). Nothing here needs
// one, and a worker has no other realm to fetch the constructors back from.
for (const name of ["Worker", "SharedWorker"]) {
  delete (/** @type {any} */ (self)[name]);
  Object.defineProperty(self, name, { value: undefined, writable: false, configurable: false });
}
