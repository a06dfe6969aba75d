"""The commands a build runs (pip, npm, node) and the file helpers its stages share."""

from __future__ import annotations

import hashlib
import queue
import shutil
import subprocess
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from reckon._exceptions import BuildError, ChecksumError

from ._context import Context, Log

__all__ = [
    "NpmPackage",
    "check_tarball",
    "link_or_copy",
    "npm_pack",
    "npm_tarball",
    "run",
    "run_reporting",
    "sha256_of",
]


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"command failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")


def run_reporting(cmd: list[str], *, name: str, log: Log, quiet_after_s: float = 10.0) -> None:
    """Run ``cmd``, showing its ``progress: ...`` lines as ``<name>: ...``.

    The Node.js stages run for a minute or more on a first build; when one has said
    nothing for ``quiet_after_s`` it is said to be still at work, so the build never
    looks hung.
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
        raise BuildError(f"command failed: {' '.join(cmd)}\n{''.join(output)}\n{''.join(errors)}")


def _pump(stream: IO[str] | None, put: Callable[[str | None], None]) -> None:
    assert stream is not None
    for line in stream:
        put(line)
    put(None)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def npm_tarball(ctx: Context, package: str, version: str) -> Path:
    """Where ``npm pack`` leaves ``package@version`` in the cache."""
    return ctx.paths.cache / "npm" / f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"


def npm_pack(
    ctx: Context, package: str, version: str, sha256: str, *, note: str, made: str
) -> Path:
    """``npm pack package@version`` into the cache unless it is there, checked against
    its pin; ``note`` says what it is for, ``made`` names the download in the build's
    last line. Returns the tarball."""
    tgz = npm_tarball(ctx, package, version)
    if not tgz.exists():
        ctx.log(note)
        ctx.made.append(made)
        tgz.parent.mkdir(parents=True, exist_ok=True)
        run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=tgz.parent)
    check_tarball(tgz, sha256)
    return tgz


@dataclass(frozen=True, kw_only=True)
class NpmPackage:
    """A pinned npm package the build fetches into its cache and extracts there."""

    name: str
    version: str
    sha256: str
    size: str  # of the tarball, said on the download
    purpose: str  # what the site takes from it, said on the download
    made: str  # names the download in the build's last line
    under: str | None = None  # the cache's subfolder it is extracted into
    files: tuple[str, ...] | None = None  # the paths in it to extract, if not all

    def tarball(self, ctx: Context) -> Path:
        return npm_tarball(ctx, self.name, self.version)

    def fetch(self, ctx: Context) -> Path:
        """The tarball (npm_pack), checked against its pin and extracted; returns the
        extracted ``package`` folder."""
        note = f"fetch: {self.name}@{self.version} from npm ({self.size}, once): {self.purpose}"
        tgz = npm_pack(ctx, self.name, self.version, self.sha256, note=note, made=self.made)
        folder = tgz.parent / self.under if self.under else tgz.parent
        extracted = folder / "package"
        # Extracted afresh on every build (a fraction of a second), so the files used
        # are always the ones the pinned tarball holds.
        if extracted.exists():
            shutil.rmtree(extracted)
        folder.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tgz) as tar:
            members = tar.getmembers()
            if self.files is not None:
                members = [m for m in members if m.name.removeprefix("package/") in self.files]
            tar.extractall(folder, members=members, filter="data")
        return extracted


def check_tarball(tgz: Path, sha256: str, *, missing: str | None = None) -> None:
    """``tgz`` against its pin; a wrong one is deleted, so the next build fetches it
    again. With ``missing`` (what to do), one that is not cached is an error too."""
    if missing is not None and not tgz.exists():
        raise BuildError(f"{tgz.name}: not in the cache; {missing}")
    if sha256_of(tgz) != sha256:
        tgz.unlink()
        raise ChecksumError(f"{tgz.name}: sha256 differs from the pinned one; run the build again")


def link_or_copy(src: Path, dst: Path) -> None:
    try:
        dst.hardlink_to(src)
    except OSError:
        shutil.copy2(src, dst)
