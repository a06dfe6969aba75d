"""The assemble stage: the site folder, with a served lock that lists exactly the
shipped packages, the Node.js steps' bytecode and snapshot, web/, and build-info.json."""

from __future__ import annotations

import json
import shutil
import time
import tomllib
import warnings
from pathlib import Path

from reckon._exceptions import BuildError

from . import _pins as pins
from ._commands import link_or_copy
from ._context import Context, Fetched
from ._duckdb import ship_duckdb
from ._fetch import close_over
from ._node import precompile, snapshot
from ._pages import copy_web

__all__ = ["assemble"]


def assemble(ctx: Context) -> None:
    from pyodide_lock import PyodideLockSpec
    from pyodide_lock.utils import add_wheels_to_spec

    fetched, wheel = ctx.fetched, ctx.wheel
    if fetched is None or wheel is None:
        raise BuildError("assemble runs after the fetch and wheels stages")
    out, core = ctx.paths.out, fetched.core
    official = json.loads((core / "pyodide-lock.json").read_text())
    if out.exists():
        shutil.rmtree(out)
    pyodide_dir = out / "pyodide"
    pyodide_dir.mkdir(parents=True)
    added = _copy_packages(fetched, official["packages"], [*fetched.pure.values(), wheel],
                           pyodide_dir)  # fmt: skip

    spec = PyodideLockSpec.from_json(core / "pyodide-lock.json")
    with warnings.catch_warnings():
        # pkginfo 1.12 knows metadata up to 2.4 and reads setuptools' 2.5 as 2.4 (same fields).
        warnings.filterwarnings("ignore", message="New metadata version")
        spec = add_wheels_to_spec(spec, added, base_path=pyodide_dir)
    full = {name: pkg.model_dump() for name, pkg in spec.packages.items()}
    eager = close_over(full, pins.SANDBOX_EAGER)
    sandbox = close_over(full, [*pins.SANDBOX_EAGER, *pins.SANDBOX_PACKAGES, *pins.SANDBOX_PURE])
    agent = close_over(full, ["reckon"])
    spec.packages = {name: spec.packages[name] for name in sorted(set(sandbox) | set(agent))}
    spec.to_json(pyodide_dir / "pyodide-lock.json", indent=1)

    rest = [n for n in sandbox if n not in eager]
    pycache = precompile(ctx, pyodide_dir, core=core, eager=eager, rest=rest)
    shipped = snapshot(ctx, pyodide_dir, web=ctx.paths.web, core=core, eager=eager)
    copy_web(out, web=ctx.paths.web)
    sql_files = ship_duckdb(fetched.duckdb, pyodide_dir) if fetched.duckdb else []
    info = {
        "reckon": _project_version(ctx.paths.root),
        "pyodide": pins.PYODIDE_VERSION,
        "python": official["info"]["python"],
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sandbox": {
            "packages": eager,
            "all_packages": sandbox,
            "files": _files_of(full, sandbox),
            "eager_files": _files_of(full, eager) + pycache[:1],
            "rest_files": pycache[1:],
            "snapshot": shipped,
            # DuckDB-wasm: handed to the worker only when a cell first runs SQL.
            "sql_files": sql_files,
            "duckdb": pins.DUCKDB_VERSION if sql_files else None,
        },
        "agent": {"packages": agent, "files": _files_of(full, agent)},
        # Wheels this build made from a pinned sdist (how: RECKON-BUILD.txt inside each).
        "from_source": _from_source(fetched),
        "sizes": {p.name: p.stat().st_size for p in sorted(pyodide_dir.iterdir()) if p.is_file()},
        "core": list(pins.CORE_FILES),
    }
    (out / "build-info.json").write_text(json.dumps(info, indent=1))
    ctx.log(f"assemble: {out} ({len(spec.packages)} packages, {_tree_size(out) / 1e6:.0f} MB)")


def _copy_packages(fetched: Fetched, official: dict[str, dict[str, str]], wheels: list[Path],
                   pyodide_dir: Path) -> list[Path]:  # fmt: skip
    """The core files, the official packages and the added ``wheels`` into
    ``pyodide_dir``; returns the added wheels' copies."""
    for name in pins.CORE_FILES:
        shutil.copy2(fetched.core / name, pyodide_dir / name)
    for name in fetched.scientific:
        file_name = official[name]["file_name"]
        link_or_copy(fetched.packages / file_name, pyodide_dir / file_name)
    added = []
    for wheel in wheels:
        link_or_copy(wheel, pyodide_dir / wheel.name)
        added.append(pyodide_dir / wheel.name)
    return added


def _from_source(fetched: Fetched) -> dict[str, dict[str, object]]:
    made: dict[str, dict[str, object]] = {}
    for spec, pin in pins.PURE_PACKAGES.items():
        name = spec.split("==")[0]
        if name in pins.FROM_SOURCE and name in fetched.pure:
            made[fetched.pure[name].name] = {
                "sdist": spec, "sdist_sha256": pin, "packages": list(pins.FROM_SOURCE[name]),
                "how": "the sdist's pure-Python package copied into a py3-none-any wheel, "
                       "without the optional C extension (sitebuild/_source_wheel.py)",
            }  # fmt: skip
    return made


def _files_of(lock: dict[str, dict[str, object]], names: list[str]) -> list[str]:
    return [str(lock[name]["file_name"]) for name in names]


def _tree_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _project_version(root: Path) -> str:
    project = tomllib.loads((root / "pyproject.toml").read_text()).get("project", {})
    return str(project.get("version", "0"))
