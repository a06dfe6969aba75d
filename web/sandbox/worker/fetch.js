"use strict";
// Pyodide fetches its files from indexURL: answered from the Blobs the page handed
// over (asking for one the page still holds back). Nothing else has a network.
// A part of the sandbox worker (see main.js): the page joins the parts into
// one closure, so nothing here is reachable from a cell.

const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };

async function serveRuntime(url) {
  const name = decodeURIComponent(url.slice(indexURL.length).split(/[?#]/)[0]);
  if (!runtime[name] && lazyFiles.has(name)) {
    // The page may be holding it back (the boot's package files, or the rest of the
    // stack until the sandbox is idle): ask for it now.
    post({ type: "need-files", id: currentRequest });
    await new Promise((resolve) => waiting.set(name, [...(waiting.get(name) || []), resolve]));
  }
  const blob = runtime[name];
  if (!blob && refused.has(name)) return new Response(`${name} could not be loaded: ${refused.get(name)}`, { status: 503 });
  if (!blob) return new Response(`not in this build: ${name}`, { status: 404 });
  const ext = name.split(".").pop();
  return new Response(blob, { headers: { "Content-Type": MIME[ext] || "application/octet-stream" } });
}

// Nothing a cell starts may outlive it: no worker of its own, which would keep running
// after the run, a restart or reset() (the second outside attack). Nothing here needs
// one, and a worker has no other realm to fetch the constructors back from.
for (const name of ["Worker", "SharedWorker"]) {
  delete self[name];
  Object.defineProperty(self, name, { value: undefined, writable: false, configurable: false });
}

const networkFetch = self.fetch.bind(self);

self.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (indexURL && url.startsWith(indexURL)) return serveRuntime(url);
  return networkFetch(input, init); // refused by CSP: the sandbox has no network
};

function addRuntime(msg) {
  Object.assign(runtime, msg.files);
  for (const name of Array.isArray(msg.failed) ? msg.failed : []) {
    if (runtime[name]) continue;
    refused.set(name, String(msg.message || "it could not be downloaded"));
    for (const resolve of waiting.get(name) || []) resolve();
    waiting.delete(name);
    lazyFiles.delete(name);
  }
  for (const name of Object.keys(msg.files)) {
    for (const resolve of waiting.get(name) || []) resolve();
    waiting.delete(name);
    lazyFiles.delete(name);
  }
  if (lazyFiles.size === 0) for (const resolve of restWaiters.splice(0)) resolve();
}
