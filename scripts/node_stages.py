"""The build's Node.js stages: Pyodide itself, run once at build time.

    precompile  bytecode bundles for the sandbox's packages (scripts/precompile.mjs)
    snapshot    the sandbox's start-up memory snapshot (scripts/snapshot.mjs)

Each runs into a cache folder named by a hash of its inputs, so a rebuild with the
same packages and recipe reuses it. Imported by build.py; not meant to be run alone.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

SCRIPTS = Path(__file__).resolve().parent
Log = Callable[[str], None]
# What this build had to make or download (build.py's last line lists it).
RAN: list[str] = []


class StageError(Exception):
    """A stage's command failed (build.py turns it into a BuildError)."""


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise StageError(f"command failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")


def run_reporting(cmd: list[str], *, name: str, log: Log, quiet_after_s: float = 10.0) -> None:
    """Run ``cmd``, showing its ``progress: ...`` lines as ``<name>: ...``.

    The stages run for a minute or more on a first build; when one has said nothing
    for ``quiet_after_s`` it is said to be still at work, so the build never looks hung.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []
    threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True).start()
    reader = threading.Thread(
        target=_pump, args=(proc.stderr, lambda line: errors.append(line or "")), daemon=True
    )
    reader.start()
    output: list[str] = []
    started = last = time.monotonic()
    doing = "starting"
    while True:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            if time.monotonic() - last >= quiet_after_s:
                log(f"{name}: still at work ({time.monotonic() - started:.0f} s in; {doing})")
                last = time.monotonic()
            continue
        if line is None:
            break
        output.append(line)
        if line.startswith("progress: "):
            doing = line.removeprefix("progress: ").rstrip()
            log(f"{name}: {doing}")
            last = time.monotonic()
    code = proc.wait()
    reader.join()
    if code != 0:
        raise StageError(f"command failed: {' '.join(cmd)}\n{''.join(output)}\n{''.join(errors)}")


def _pump(stream: IO[str] | None, put: Callable[[str | None], None]) -> None:
    assert stream is not None
    for line in stream:
        put(line)
    put(None)


def link_or_copy(src: Path, dst: Path) -> None:
    try:
        dst.hardlink_to(src)
    except OSError:
        shutil.copy2(src, dst)


def node_stage(name: str, *, cache: Path, key_parts: list[bytes], outputs: list[str],
               args: list[str], log: Log, what: str) -> Path | None:  # fmt: skip
    """Run scripts/<name>.mjs under Node.js into a cache folder named by its inputs
    (saying ``what`` it makes, when it has to run).

    Returns the folder holding `outputs`, or None when Node.js is missing.
    """
    script = SCRIPTS / f"{name}.mjs"
    node = shutil.which("node")
    if node is None:
        return None
    key = hashlib.sha256(b"\0".join([script.read_bytes(), *key_parts])).hexdigest()[:16]
    cached = cache / name / key
    if not all((cached / n).exists() for n in outputs):
        tmp = cached.with_name(key + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        started = time.monotonic()
        log(f"{name}: {what}; running {script.name} under Node.js")
        run_reporting([node, str(script), *args, str(tmp)], name=name, log=log)
        RAN.append(name)
        shutil.rmtree(cached, ignore_errors=True)
        tmp.rename(cached)
        log(f"{name}: done in {time.monotonic() - started:.0f} s (cached as {cached.name})")
    else:
        log(f"{name}: cached ({cached.name}), nothing to run")
    return cached


def precompile(pyodide_dir: Path, *, cache: Path, core: Path, eager: list[str],
               rest: list[str], log: Log) -> list[str]:  # fmt: skip
    """Bytecode bundles for the sandbox's packages (see scripts/precompile.mjs).

    Cached by the served lock and the script, so it runs once per package set.
    Returns the bundle file names, or [] when Node.js is missing (the sandbox then
    compiles on import, as plain Pyodide does).
    """
    names = ["pycache-eager.zip", "pycache-rest.zip"]
    cached = node_stage(
        "precompile",
        cache=cache,
        key_parts=[(pyodide_dir / "pyodide-lock.json").read_bytes(), ",".join(eager).encode()],
        outputs=names,
        args=[str(core / "pyodide.mjs"), str(pyodide_dir) + "/", ",".join(eager), ",".join(rest)],
        log=log,
        what=f"bytecode for the sandbox's {len(eager) + len(rest)} packages, so that no "
        "browser compiles them (one to two minutes, once per package set)",
    )
    if cached is None:
        log("precompile: skipped (node not found); the sandbox will compile on import")
        return []
    for name in names:
        link_or_copy(cached / name, pyodide_dir / name)
    return names


def snapshot(pyodide_dir: Path, *, cache: Path, recipe: Path, core: Path, eager: list[str],
             log: Log) -> dict[str, object]:  # fmt: skip
    """The start-up memory snapshot (see scripts/snapshot.mjs), named by its inputs.

    Returns build-info's "snapshot" entry, or {} when Node.js is missing or the
    recipe fails there (the browser then boots cold and makes its own).
    """
    bytecode = pyodide_dir / "pycache-eager.zip"
    inputs = [(pyodide_dir / "pyodide-lock.json").read_bytes(), recipe.read_bytes(),
              ",".join(eager).encode()]  # fmt: skip
    inputs += [bytecode.read_bytes()] if bytecode.exists() else []
    try:
        cached = node_stage(
            "snapshot",
            cache=cache,
            key_parts=inputs,
            outputs=["heap.bin", "fs.bin", "meta.json"],
            args=[str(core / "pyodide.mjs"), str(pyodide_dir) + "/", str(recipe), ",".join(eager)],
            log=log,
            what="the interpreter's memory with pandas and matplotlib imported, so that first "
            "visits skip that (half a minute, once per package set)",
        )
    except StageError as exc:
        log(f"snapshot: skipped ({exc}); first visits boot cold")
        return {}
    if cached is None:
        log("snapshot: skipped (node not found); first visits boot cold")
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
