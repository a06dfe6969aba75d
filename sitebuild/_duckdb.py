"""DuckDB-wasm for the sandbox: the pinned npm package fetched into the cache, and the
files the site ships from it (PROTOCOL.md §3, "SQL"). Two builds, both run in the
sandbox worker with the synchronous API, the worker taking the one that fits:

- single-threaded, for a frame that is not cross-origin isolated: the synchronous
  browser bindings, wrapped into a classic script the worker imports, and the wasm
  build with WebAssembly exceptions;
- multi-threaded, where the frame is cross-origin isolated (`reckon serve`): the
  package ships it only behind its asynchronous worker (``duckdb-browser-coi.worker.js``,
  whose last lines make the worker answer messages), so that script's bindings class is
  taken out instead of that dispatcher; with it its wasm build (threads, SIMD,
  exceptions) and the script each of DuckDB's threads runs in a worker of its own.

All go under ``pyodide/`` with the version in their names (that folder is served as
immutable), and are handed to the worker only when its first query needs them."""

from __future__ import annotations

import re
import shutil
import tarfile
from pathlib import Path

from reckon._exceptions import BuildError

from . import _pins as pins
from ._commands import npm_pack, npm_tarball
from ._context import Context

__all__ = ["SQL_FILES", "duckdb_tarball", "fetch_duckdb", "ship_duckdb"]

# name in the site's pyodide/ folder -> file of the npm package (web/sandbox/worker/sql.js
# tells them apart by the ends of these names)
SQL_FILES = {
    f"duckdb-{pins.DUCKDB_VERSION}-blocking.js": "dist/duckdb-browser-blocking.cjs",
    f"duckdb-{pins.DUCKDB_VERSION}-eh.wasm": "dist/duckdb-eh.wasm",
    f"duckdb-{pins.DUCKDB_VERSION}-coi.js": "dist/duckdb-browser-coi.worker.js",
    f"duckdb-{pins.DUCKDB_VERSION}-coi.wasm": "dist/duckdb-coi.wasm",
    f"duckdb-{pins.DUCKDB_VERSION}-coi-pthread.js": "dist/duckdb-browser-coi.pthread.worker.js",
}

# The bindings are a CommonJS module. Their imports: apache-arrow, used only by the
# high-level query API, which the sandbox does not call (it takes Arrow IPC bytes from
# runQuery and Python reads them), and Node.js modules on Node-only paths.
_WRAPPER_HEAD = """\
// @duckdb/duckdb-wasm {version} (MIT), dist/duckdb-browser-blocking.cjs, wrapped by
// sitebuild/_duckdb.py into a classic script that leaves self.__reckonDuckDB.
self.__reckonDuckDB = (() => {{
  const module = {{ exports: {{}} }};
  const require = (name) => {{
    if (name === "apache-arrow") return {{}};
    throw new Error(`${{name}} is not available in the sandbox`);
  }};
  (function (module, exports, require) {{
"""
_WRAPPER_TAIL = """
  })(module, module.exports, require);
  return module.exports;
})();
"""
# The multi-threaded script's last statements: a subclass whose instantiate() makes the
# bindings (`new Bindings(logger, runtime, wasmURL, pthreadWorkerURL)`), then a call
# that makes this global scope answer DuckDB's worker protocol. Both are replaced by
# the two names the sandbox worker needs; the package is pinned, so a miss is a build
# error, never a half-patched script.
_COI_DISPATCH = re.compile(
    r"var ([\w$]+)=class extends [\w$]+\{postMessage\(e,t\)\{globalThis\.postMessage\(e,t\)\}"
    r"async instantiate\(e,t,r\)\{return await new ([\w$]+)\(this,([\w$]+),e,t\)"
    r"\.instantiate\(r\)\}\};function ([\w$]+)\(\)\{let o=new \1;globalThis\.onmessage="
    r"async e=>\{await o\.onMessage\(e\.data\)\}\}\4\(\);"
)
# The sandbox worker has no Worker constructor (a cell may start no worker): the script
# is a function of the one the worker keeps for DuckDB's threads, which Emscripten's
# thread pool calls by its global name. In a function too, so that the script's
# top-level `var duckdb` is no global of the worker.
_COI_HEAD = """\
// @duckdb/duckdb-wasm {version} (MIT), dist/duckdb-browser-coi.worker.js, its message
// dispatcher replaced by sitebuild/_duckdb.py: leaves self.__reckonDuckDBThreads, a
// function of the Worker constructor that returns the bindings class and its runtime.
self.__reckonDuckDBThreads = (Worker) => {{
  "use strict";
  let made = null;
"""
_COI_TAIL = """
  return made;
};
"""
# Each thread's worker runs only DuckDB: it never starts one of its own (Emscripten
# starts threads from the main thread), so it has no Worker either.
_PTHREAD_HEAD = """\
// @duckdb/duckdb-wasm {version} (MIT), dist/duckdb-browser-coi.pthread.worker.js.
for (const name of ["Worker", "SharedWorker"]) {{
  delete self[name];
  Object.defineProperty(self, name, {{ value: undefined, writable: false, configurable: false }});
}}
"""


def duckdb_tarball(ctx: Context) -> Path:
    return npm_tarball(ctx, "@duckdb/duckdb-wasm", pins.DUCKDB_VERSION)


def fetch_duckdb(ctx: Context) -> Path:
    """The npm package, checked against its pin; returns the extracted folder."""
    note = (
        f"fetch: @duckdb/duckdb-wasm@{pins.DUCKDB_VERSION} from npm (31 MB, once): "
        "DuckDB for run_sql in the sandbox"
    )
    tgz = npm_pack(
        ctx,
        "@duckdb/duckdb-wasm",
        pins.DUCKDB_VERSION,
        pins.DUCKDB_NPM_SHA256,
        note=note,
        made="duckdb-wasm download",
    )
    folder = tgz.parent / f"duckdb-wasm-{pins.DUCKDB_VERSION}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    with tarfile.open(tgz) as tar:
        members = [m for m in tar.getmembers() if m.name.removeprefix("package/") in
                   (*SQL_FILES.values(), "package.json")]  # fmt: skip
        tar.extractall(folder, members=members, filter="data")
    return folder / "package"


def ship_duckdb(package: Path, pyodide_dir: Path) -> list[str]:
    """The site's copies of the files; returns their names."""
    for name, source in SQL_FILES.items():
        if not name.endswith(".js"):
            shutil.copy2(package / source, pyodide_dir / name)
            continue
        text = (package / source).read_text(encoding="utf-8")
        # No source map is shipped: drop its pointer.
        lines = text.splitlines()
        text = "\n".join(ln for ln in lines if not ln.startswith("//# sourceMappingURL"))
        if name.endswith("-blocking.js"):
            text = _WRAPPER_HEAD.format(version=pins.DUCKDB_VERSION) + text + _WRAPPER_TAIL
        elif name.endswith("-coi.js"):
            head = _COI_HEAD.format(version=pins.DUCKDB_VERSION)
            text = head + _coi_bindings(text, source) + _COI_TAIL
        else:
            text = _PTHREAD_HEAD.format(version=pins.DUCKDB_VERSION) + text
        (pyodide_dir / name).write_text(text)
    return list(SQL_FILES)


def _coi_bindings(text: str, source: str) -> str:
    found = _COI_DISPATCH.findall(text)
    if len(found) != 1:
        raise BuildError(
            f"@duckdb/duckdb-wasm {pins.DUCKDB_VERSION}: {source} does not end as expected "
            f"(its worker dispatcher was found {len(found)} times); sitebuild/_duckdb.py "
            "must be updated together with the pin"
        )
    _, bindings, runtime, _ = found[0]
    exported = f"made={{Bindings:{bindings},runtime:{runtime}}};"
    return _COI_DISPATCH.sub(lambda _m: exported, text)
