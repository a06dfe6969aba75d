"""Unpacking the one table of a zip or .gz upload, bounded in bytes.

Deflate packs a repeated line a thousand to one, so a 0.6 MB upload can hold a
600 MB CSV; in the browser every unpacked byte is memory. A member is copied up
to a limit and refused past it, and an archive inside an archive is not opened
(``zipfile`` and ``gzip`` both stream, so nothing is held but the copy).
"""

from __future__ import annotations

import gzip
import os
import zipfile
from typing import IO

from reckon.kernel.tables._bounds import TooBig

__all__ = ["TABLE_MEMBERS", "unpack_member"]

TABLE_MEMBERS = ("csv", "tsv", "psv", "ssv", "xlsx", "xlsm", "xls", "ods", "json", "parquet",
                 "txt")  # fmt: skip
_SKIPPED_MEMBERS = ("__MACOSX/", ".")
_ARCHIVE_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf", b"Rar!")
_MB = 1_000_000


def unpack_member(path: str, shown: str, fmt: str, folder: str, *, limit: int) -> str:
    """The table a zip (one member) or .gz file holds, written into ``folder``; its path.
    ``TooBig`` past ``limit`` bytes unpacked, ``ValueError`` for what cannot be read."""
    if fmt == "gz":
        inner = os.path.basename(path)[: -len(".gz")] or "data"
        with gzip.open(path, "rb") as source:
            return _copy(source, os.path.join(folder, inner), (path, shown, fmt), limit)
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{shown} is not a valid zip file; upload it again.") from exc
    with archive:
        member = _single_member(archive, shown)
        inner = os.path.basename(member.filename)
        with archive.open(member) as source:
            return _copy(source, os.path.join(folder, inner), (path, shown, fmt), limit)


def _single_member(archive: zipfile.ZipFile, shown: str) -> zipfile.ZipInfo:
    members = [
        info
        for info in archive.infolist()
        if not info.is_dir()
        and not any(part.startswith(_SKIPPED_MEMBERS[1]) for part in info.filename.split("/"))
        and not info.filename.startswith(_SKIPPED_MEMBERS[0])
    ]
    tables = [m for m in members if _extension(m.filename) in TABLE_MEMBERS]
    chosen = tables if len(tables) == 1 else members
    if len(chosen) != 1:
        names = ", ".join(_short(m.filename) for m in members[:20]) or "nothing"
        raise ValueError(
            f"{shown} holds {len(members)} files ({names}); extract it with "
            f"zipfile.ZipFile({shown!r}).extractall('/output/unzipped') "
            "and read the one you need."
        )
    if chosen[0].flag_bits & 0x1:
        raise ValueError(
            f"{shown} is password protected; zip it again without a password and upload it."
        )
    return chosen[0]


def _copy(
    source: IO[bytes] | gzip.GzipFile, target: str, upload: tuple[str, str, str], limit: int
) -> str:
    path, shown, fmt = upload
    inner = os.path.basename(target)
    copied = 0
    with open(target, "wb") as sink:
        while chunk := source.read(1 << 20):
            if copied == 0 and chunk.startswith(_ARCHIVE_MAGIC):
                raise ValueError(
                    f"{shown} holds another archive ({_short(inner)}); unpack it on your "
                    "computer and upload the tables it holds."
                )
            copied += len(chunk)
            if copied > limit:
                raise TooBig(_too_big(path, shown, inner, fmt, limit))
            sink.write(chunk)
    return target


def _too_big(path: str, shown: str, inner: str, fmt: str, limit: int) -> str:
    size = os.path.getsize(path) / _MB
    # pandas streams a compressed CSV, so reading a part of it needs no unpacking.
    part = (
        f"read a part of it with pd.read_csv({shown!r}, nrows=100_000), or "
        if _extension(inner) in ("csv", "tsv", "txt", "psv", "ssv", "")
        else ""
    )
    return (
        f"{shown} holds {_short(inner)}, over {limit // _MB} MB once unpacked (from a "
        f"{size:,.1f} MB {fmt} file), too big to unpack in the browser: {part}unpack it on "
        "your computer and upload the table itself (a big CSV is then queried in place "
        "with run_sql)."
    )


def _short(name: str) -> str:
    return name if len(name) <= 80 else name[:79] + "…"


def _extension(path: str) -> str:
    return os.path.splitext(path)[1].lower().lstrip(".")
