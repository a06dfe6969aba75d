"""The wheels stage: the project's own `reckon` wheel, rebuilt only when its sources
change, and byte for byte the same for the same sources."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from reckon._exceptions import BuildError

from ._commands import run, sha256_of
from ._context import Context, Paths

__all__ = ["build_reckon_wheel", "reckon_sources", "reckon_wheel_key", "wheels"]


def wheels(ctx: Context) -> None:
    ctx.wheel = build_reckon_wheel(ctx)
    ctx.log(f"wheels: {ctx.wheel.name}")


def reckon_sources(paths: Paths) -> list[Path]:
    """What the reckon wheel is made of: pyproject.toml and the package's own files.

    Not the rest of py/: pip rewrites py/reckon.egg-info on every install and wheel
    build, and a key that covered it rebuilt the wheel on a second `scripts/run`, and
    so reran precompile and snapshot (keyed on the wheel's hash): two minutes, not two
    seconds. Nor bytecode. README.md (the wheel's long description) is left out on
    purpose: nothing in the browser reads it, and an edit there must not cost that.
    """
    package = paths.root / "py" / "reckon"
    files = [
        p
        for p in package.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.relative_to(package).parts
        and p.suffix not in (".pyc", ".pyo")
    ]
    return [paths.root / "pyproject.toml", *sorted(files)]


def reckon_wheel_key(paths: Paths) -> dict[str, str]:
    """sha256 of each source, by path: the wheel is rebuilt when this differs."""
    return {
        p.relative_to(paths.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in reckon_sources(paths)
    }


def build_reckon_wheel(ctx: Context) -> Path:
    paths = ctx.paths
    paths.wheels.mkdir(exist_ok=True)
    key = reckon_wheel_key(paths)
    # The stamp names the wheel it was made with: a wheels/ of another checkout (a
    # shared RECKON_BUILD_CACHE) is not taken for this one's.
    stamp = paths.cache / "reckon-wheel.json"
    before: dict[str, str] = json.loads(stamp.read_text()) if stamp.exists() else {}
    made = before.pop("wheel", "")
    existing = sorted(paths.wheels.glob("reckon-*.whl"))
    if len(existing) == 1 and before == key and sha256_of(existing[0]) == made:
        return existing[0]
    changed = sorted(n for n in key.keys() | before.keys() if key.get(n) != before.get(n))
    if not before or not existing:
        why = "none built yet"
    elif not changed:
        why = "wheels/ holds another wheel"
    else:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        why = f"changed: {', '.join(changed[:3])}{more}"
    ctx.log(f"wheels: building the reckon wheel ({why})")
    ctx.made.append("reckon wheel")
    for old in existing:
        old.unlink()
    # setuptools copies into build/lib and never deletes there: a module removed from
    # py/ would still ship. The folder is only its scratch space.
    shutil.rmtree(paths.root / "build", ignore_errors=True)
    # A fixed timestamp makes the same sources give the same bytes (wheel honours
    # SOURCE_DATE_EPOCH), so a rebuild with nothing changed keeps the served lock's
    # hash, and with it the precompile and snapshot caches.
    env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}  # 1980-01-01, zip's first day
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "-w", str(paths.wheels), str(paths.root)], env=env)  # fmt: skip
    built = sorted(paths.wheels.glob("reckon-*.whl"))
    if len(built) != 1:
        raise BuildError(f"pip wheel left {len(built)} reckon wheels in {paths.wheels}, not one")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({**key, "wheel": sha256_of(built[0])}, indent=0, sort_keys=True))
    return built[0]
