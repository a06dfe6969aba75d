"""DuckDB-wasm for the sandbox: the pinned npm package fetched into the cache, and the
two files the site ships from it (PROTOCOL.md §3, "SQL"): the synchronous browser
bindings, wrapped into a classic script the worker imports, and the wasm build with
WebAssembly exceptions. Both go under ``pyodide/`` with the version in their names
(that folder is served as immutable), and are handed to the worker only when its
first query needs them."""

from __future__ import annotations

import shutil
from pathlib import Path

from . import _pins as pins
from ._commands import NpmPackage
from ._context import Context

__all__ = ["SQL_FILES", "duckdb_tarball", "fetch_duckdb", "ship_duckdb"]

# name in the site's pyodide/ folder -> file of the npm package
SQL_FILES = {
    f"duckdb-{pins.DUCKDB_VERSION}-blocking.js": "dist/duckdb-browser-blocking.cjs",
    f"duckdb-{pins.DUCKDB_VERSION}-eh.wasm": "dist/duckdb-eh.wasm",
}

_NPM = NpmPackage(
    name="@duckdb/duckdb-wasm",
    version=pins.DUCKDB_VERSION,
    sha256=pins.DUCKDB_NPM_SHA256,
    size="31 MB",
    purpose="DuckDB for run_sql in the sandbox",
    made="duckdb-wasm download",
    under="duckdb-wasm",
    files=(*SQL_FILES.values(), "package.json"),
)

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


def duckdb_tarball(ctx: Context) -> Path:
    return _NPM.tarball(ctx)


def fetch_duckdb(ctx: Context) -> Path:
    """The npm package, checked against its pin; returns the extracted folder."""
    return _NPM.fetch(ctx)


def ship_duckdb(package: Path, pyodide_dir: Path) -> list[str]:
    """The site's copies of the two files; returns their names."""
    for name, source in SQL_FILES.items():
        if name.endswith(".js"):
            text = (package / source).read_text(encoding="utf-8")
            # No source map is shipped: drop its pointer.
            lines = [ln for ln in text.splitlines() if not ln.startswith("//# sourceMappingURL")]
            head = _WRAPPER_HEAD.format(version=pins.DUCKDB_VERSION)
            (pyodide_dir / name).write_text(head + "\n".join(lines) + _WRAPPER_TAIL)
        else:
            shutil.copy2(package / source, pyodide_dir / name)
    return list(SQL_FILES)
