"""A pure-Python wheel assembled from folders of a pinned source archive, for a
package whose published wheels are compiled (PyYAML: libyaml) and whose sdist builds
the C extension by default. Nothing of the archive runs: its Python files are copied
into a py3-none-any wheel with the archive's own metadata, byte for byte the same on
every build (fixed times and order), so the served lock's hash, and with it the
precompile and snapshot caches, stay put."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from reckon._exceptions import BuildError

__all__ = ["EPOCH", "HOW", "build_source_wheel", "source_wheel_bytes"]

# As SOURCE_DATE_EPOCH for the reckon wheel (sitebuild/_wheel.py): 1980-01-01, the
# first day a zip file can hold.
EPOCH = 315532800
_DATE = (1980, 1, 1, 0, 0, 0)
# Compiled code and its sources have no place in a pure wheel.
_SKIP = (".c", ".h", ".pyx", ".pxd", ".so", ".pyd", ".pyc", ".pyo")
# Sdist-only fields, and Dynamic (for sdists): not part of a wheel's METADATA.
_DROP = ("Dynamic:",)

HOW = """\
How this wheel was made (Reckon's build, sitebuild/_source_wheel.py)

Source: {sdist} (sha256 {sha256}), the sdist pinned in sitebuild/_pins.py.
{name} publishes compiled wheels only, and its sdist builds a C extension by default.
This wheel holds the sdist's pure-Python package(s) {folders}, copied unchanged, with
the sdist's PKG-INFO as METADATA (Dynamic lines dropped) and its licence file(s)
under licenses/. The optional C extension is left out: the package falls back to its
pure-Python code when the extension is missing. Tag py3-none-any; every file is
dated {epoch} (SOURCE_DATE_EPOCH={epoch_s}) and stored in sorted order, so the same
sdist always gives the same bytes.
"""


def build_source_wheel(
    sdist: Path, folders: tuple[str, ...], dest: Path, *, sha256: str
) -> tuple[Path, bool]:
    """Write the wheel into ``dest``; returns its path and whether it was (re)written
    (False: the same bytes were there already)."""
    name, data = source_wheel_bytes(sdist, folders, sha256=sha256)
    path = dest / name
    if path.exists() and path.read_bytes() == data:
        return path, False
    dest.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path, True


def source_wheel_bytes(sdist: Path, folders: tuple[str, ...], *, sha256: str) -> tuple[str, bytes]:
    """The wheel's file name and bytes, from ``folders`` (relative to the archive's
    top folder, e.g. ``lib/yaml``) of the ``.tar.gz`` ``sdist``."""
    files, pkg_info, licences = _read_sdist(sdist, folders)
    meta = _metadata(pkg_info)
    name, version = meta["Name"], meta["Version"]
    dist = f"{_normalize(name)}-{version}"
    info = f"{dist}.dist-info"
    top_level = sorted({path.split("/", 1)[0] for path in files})
    how = HOW.format(sdist=sdist.name, sha256=sha256, name=name,
                     folders=", ".join(folders), epoch="1980-01-01", epoch_s=EPOCH)  # fmt: skip
    entries: dict[str, bytes] = dict(sorted(files.items()))
    entries[f"{info}/METADATA"] = meta["_text"].encode()
    entries[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: reckon-sitebuild (see RECKON-BUILD.txt)\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    entries[f"{info}/top_level.txt"] = "".join(f"{t}\n" for t in top_level).encode()
    entries[f"{info}/RECKON-BUILD.txt"] = how.encode()
    for licence_name, text in sorted(licences.items()):
        entries[f"{info}/licenses/{licence_name}"] = text
    record = [f"{path},sha256={_b64(hashlib.sha256(data).digest())},{len(data)}"
              for path, data in entries.items()]  # fmt: skip
    record.append(f"{info}/RECORD,,")
    entries[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for path, data in entries.items():
            item = zipfile.ZipInfo(path, date_time=_DATE)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(item, data, compresslevel=9)
    return f"{dist}-py3-none-any.whl", out.getvalue()


def _read_sdist(
    sdist: Path, folders: tuple[str, ...]
) -> tuple[dict[str, bytes], str, dict[str, bytes]]:
    files: dict[str, bytes] = {}
    pkg_info = ""
    licences: dict[str, bytes] = {}
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        for member in members:
            parts = PurePosixPath(member.name).parts
            if len(parts) < 2:
                continue
            inner = "/".join(parts[1:])  # without the archive's top folder
            data = _read(tar, member)
            if inner == "PKG-INFO":
                pkg_info = data.decode()
            for folder in folders:
                if (
                    inner.startswith(folder + "/")
                    and not inner.endswith(_SKIP)
                    and "__pycache__" not in parts
                ):
                    # the package keeps its own name: lib/yaml/x.py -> yaml/x.py
                    files[folder.rsplit("/", 1)[-1] + inner[len(folder) :]] = data
        if not pkg_info:
            raise BuildError(f"{sdist.name}: no PKG-INFO at the top of the archive")
        for line in pkg_info.splitlines():
            if line.startswith("License-File:"):
                wanted = line.split(":", 1)[1].strip()
                found = next(
                    (m for m in members if "/".join(PurePosixPath(m.name).parts[1:]) == wanted),
                    None,
                )
                if found is None:
                    raise BuildError(f"{sdist.name}: its licence file {wanted} is missing")
                licences[wanted] = _read(tar, found)
    for folder in folders:
        top = folder.rsplit("/", 1)[-1]
        if f"{top}/__init__.py" not in files:
            raise BuildError(f"{sdist.name}: no package at {folder}/ (no __init__.py)")
    return files, pkg_info, licences


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = tar.extractfile(member)
    if handle is None:
        raise BuildError(f"{member.name}: cannot be read from the archive")
    return handle.read()


def _metadata(pkg_info: str) -> dict[str, str]:
    """Name and Version of PKG-INFO, and its text as a wheel's METADATA."""
    head, sep, body = pkg_info.partition("\n\n")
    lines = [line for line in head.splitlines() if not line.startswith(_DROP)]
    fields = {
        k: v.strip()
        for k, _, v in (line.partition(":") for line in lines)
        if k in ("Name", "Version")
    }
    if set(fields) != {"Name", "Version"}:
        raise BuildError("the sdist's PKG-INFO names no Name or Version")
    return {**fields, "_text": "\n".join(lines) + (sep + body if sep else "\n")}


def _normalize(name: str) -> str:
    """A wheel file name's project part (PEP 491): lower case, runs of -_. as one _."""
    out = "".join(c if c.isalnum() else "_" for c in name.lower())
    while "__" in out:
        out = out.replace("__", "_")
    return out


def _b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
