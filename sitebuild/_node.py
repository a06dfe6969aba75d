"""The assemble stage's Node.js steps: Pyodide itself, run once at build time.

    precompile  bytecode bundles for the sandbox's packages (sitebuild/precompile.mjs)
    snapshot    the sandbox's start-up memory snapshot (sitebuild/snapshot.mjs)

Each runs into a cache folder named by a hash of its inputs, so a rebuild with the
same packages and recipe reuses it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import time
from pathlib import Path

from reckon._exceptions import BuildError

from ._commands import link_or_copy, run_reporting
from ._context import Context

__all__ = ["precompile", "snapshot"]

HERE = Path(__file__).resolve().parent


def node_step(ctx: Context, name: str, *, key_parts: list[bytes], outputs: list[str],
              args: list[str], what: str) -> Path | None:  # fmt: skip
    """Run sitebuild/<name>.mjs under Node.js into a cache folder named by its inputs
    (saying ``what`` it makes, when it has to run).

    Returns the folder holding `outputs`, or None when Node.js is missing.
    """
    script = HERE / f"{name}.mjs"
    node = shutil.which("node")
    if node is None:
        return None
    key = hashlib.sha256(b"\0".join([script.read_bytes(), *key_parts])).hexdigest()[:16]
    cached = ctx.paths.cache / name / key
    if not all((cached / n).exists() for n in outputs):
        tmp = cached.with_name(key + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        started = time.monotonic()
        ctx.log(f"{name}: {what}; running {script.name} under Node.js")
        run_reporting([node, str(script), *args, str(tmp)], name=name, log=ctx.log)
        ctx.made.append(name)
        shutil.rmtree(cached, ignore_errors=True)
        tmp.rename(cached)
        ctx.log(f"{name}: done in {time.monotonic() - started:.0f} s (cached as {cached.name})")
    else:
        ctx.log(f"{name}: cached ({cached.name}), nothing to run")
    return cached


def precompile(ctx: Context, pyodide_dir: Path, *, core: Path, eager: list[str],
               rest: list[str]) -> list[str]:  # fmt: skip
    """Bytecode bundles for the sandbox's packages (see sitebuild/precompile.mjs).

    Cached by the served lock and the script, so it runs once per package set.
    Returns the bundle file names, or [] when Node.js is missing (the sandbox then
    compiles on import, as plain Pyodide does).
    """
    names = ["pycache-eager.zip", "pycache-rest.zip"]
    cached = node_step(
        ctx,
        "precompile",
        key_parts=[(pyodide_dir / "pyodide-lock.json").read_bytes(), ",".join(eager).encode()],
        outputs=names,
        args=[str(core / "pyodide.mjs"), str(pyodide_dir) + "/", ",".join(eager), ",".join(rest)],
        what=f"bytecode for the sandbox's {len(eager) + len(rest)} packages, so that no "
        "browser compiles them (one to two minutes, once per package set)",
    )
    if cached is None:
        ctx.log("precompile: skipped (node not found); the sandbox will compile on import")
        return []
    for name in names:
        link_or_copy(cached / name, pyodide_dir / name)
    return names


def snapshot(ctx: Context, pyodide_dir: Path, *, web: Path, core: Path,
             eager: list[str]) -> dict[str, object]:  # fmt: skip
    """The start-up memory snapshot (see sitebuild/snapshot.mjs), named by its inputs.

    Returns build-info's "snapshot" entry, or {} when Node.js is missing or the
    recipe fails there (the browser then boots cold and makes its own).
    """
    bytecode = pyodide_dir / "pycache-eager.zip"
    # The recipe: every part in web/sandbox/snapshot/, and the list that joins them
    # (tests/build/test_protocol_doc.py checks that it lists exactly that folder).
    recipe = [web / "sandbox" / "parts.js", *sorted((web / "sandbox" / "snapshot").glob("*.js"))]
    inputs = [(pyodide_dir / "pyodide-lock.json").read_bytes(),
              *(part.read_bytes() for part in recipe), ",".join(eager).encode()]  # fmt: skip
    inputs += [bytecode.read_bytes()] if bytecode.exists() else []
    try:
        cached = node_step(
            ctx,
            "snapshot",
            key_parts=inputs,
            outputs=["heap.bin", "fs.bin", "meta.json"],
            args=[str(core / "pyodide.mjs"), f"{pyodide_dir}/", f"{web}/", ",".join(eager)],
            what="the interpreter's memory with pandas and matplotlib imported, so that first "
            "visits skip that (half a minute, once per package set)",
        )
    except BuildError as exc:
        ctx.log(f"snapshot: skipped ({exc}); first visits boot cold")
        return {}
    if cached is None:
        ctx.log("snapshot: skipped (node not found); first visits boot cold")
        return {}
    key = cached.name
    files = {
        "heap": f"snapshot-{key}.heap",
        "fs": f"snapshot-{key}.fs",
        "meta": f"snapshot-{key}.json",
    }
    for part, source in (("heap", "heap.bin"), ("fs", "fs.bin"), ("meta", "meta.json")):
        link_or_copy(cached / source, pyodide_dir / files[part])
    # `reckon serve` sends these to clients off this machine (a quarter of the bytes).
    for part, source in (("heap", "heap.bin"), ("fs", "fs.bin")):
        packed = cached / f"{source}.gz"
        if not packed.exists():
            with (cached / source).open("rb") as raw, gzip.open(f"{packed}.tmp", "wb", 6) as out:
                shutil.copyfileobj(raw, out, 1 << 20)
            os.replace(f"{packed}.tmp", packed)
        link_or_copy(packed, pyodide_dir / f"{files[part]}.gz")
    return {"key": key, **files}
