"""The verify stage: every file the cache holds for the site, hashed again against
the official lock and the pins; it downloads nothing (the fetch stage does)."""

from __future__ import annotations

import json
import tarfile

from reckon._exceptions import BuildError

from . import _pins as pins
from ._commands import check_tarball, sha256_of
from ._context import Context
from ._duckdb import duckdb_tarball
from ._fetch import check_pin, close_over, core_tarball, find_artifact, mismatch, normalize_name

__all__ = ["official_lock", "verify", "verify_duckdb", "verify_packages", "verify_pure"]

_FETCH_FIRST = "run `python build.py --stage fetch` first"


def official_lock(ctx: Context) -> dict[str, dict[str, str]]:
    """The packages of the official pyodide-lock.json, read from the pinned tarball."""
    tgz = core_tarball(ctx)
    check_tarball(tgz, pins.PYODIDE_NPM_SHA256, missing=_FETCH_FIRST)
    with tarfile.open(tgz) as tar:
        member = tar.extractfile("package/pyodide-lock.json")
        if member is None:
            raise BuildError(f"{tgz.name} holds no package/pyodide-lock.json")
        packages: dict[str, dict[str, str]] = json.load(member)["packages"]
    return packages


def verify(ctx: Context) -> None:
    checked = verify_packages(ctx, official_lock(ctx))
    verify_pure(ctx)
    verify_duckdb(ctx)
    ctx.log(f"verify: {checked} package files match the official pyodide-lock.json and "
            f"{len(pins.PURE_PACKAGES)} pure-Python archives their pinned sha256")  # fmt: skip


def verify_packages(ctx: Context, lock: dict[str, dict[str, str]]) -> int:
    """Hash each cached package file the sandbox needs against ``lock``; returns
    how many there are."""
    packages = ctx.paths.cache / "packages"
    names = close_over(lock, pins.SANDBOX_PACKAGES)  # type: ignore[arg-type]
    for name in names:
        path = packages / lock[name]["file_name"]
        if not path.exists():
            raise BuildError(f"{path.name} ({name}): not in the cache; {_FETCH_FIRST}")
        if sha256_of(path) != lock[name]["sha256"]:
            raise mismatch(path)
    return len(names)


def verify_pure(ctx: Context) -> None:
    """Hash each cached pure-Python archive against its pin."""
    downloads = ctx.paths.cache / "pure-downloads"
    for spec, pin in pins.PURE_PACKAGES.items():
        name, version = spec.split("==")
        key = (normalize_name(name), version)
        sdist = name in pins.FROM_SOURCE
        found = find_artifact(downloads, key, sdist=sdist) if downloads.exists() else None
        if found is None:
            raise BuildError(f"{spec}: not in the cache; {_FETCH_FIRST}")
        check_pin(found, pin)


def verify_duckdb(ctx: Context) -> None:
    """The DuckDB-wasm npm tarball against its pin (sitebuild/_duckdb.py)."""
    tgz = duckdb_tarball(ctx)
    check_tarball(tgz, pins.DUCKDB_NPM_SHA256, missing=_FETCH_FIRST)
