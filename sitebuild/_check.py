"""The check stage: an assembled site holds every file its served lock names, each
matching its sha256, and the pages and build info beside them."""

from __future__ import annotations

import json
from pathlib import Path

from reckon._exceptions import BuildError

from ._commands import sha256_of
from ._context import Context, Log
from ._pins import CORE_FILES

__all__ = ["check", "check_site"]


def check(ctx: Context) -> None:
    check_site(ctx.paths.out, log=ctx.log)


def check_site(out: Path, *, log: Log) -> None:
    lock_path = out / "pyodide" / "pyodide-lock.json"
    if not lock_path.exists():
        raise BuildError(f"{lock_path}: missing; run the build first")
    lock = json.loads(lock_path.read_text())
    problems = []
    for name, pkg in lock["packages"].items():
        path = out / "pyodide" / pkg["file_name"]
        if not path.exists():
            problems.append(f"{pkg['file_name']} ({name}): missing")
        elif sha256_of(path) != pkg["sha256"]:
            problems.append(f"{pkg['file_name']} ({name}): sha256 mismatch")
        for dep in pkg["depends"]:
            if dep not in lock["packages"]:
                problems.append(f"{name}: depends on {dep}, which the lock does not name")
    for name in [*CORE_FILES, "../index.html", "../sandbox.html", "../build-info.json"]:
        if not (out / "pyodide" / name).exists():
            problems.append(f"{name}: missing")
    if problems:
        raise BuildError("site check failed:\n  " + "\n  ".join(problems))
    log(f"check: {len(lock['packages'])} packages present and verified")
