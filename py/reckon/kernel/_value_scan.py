"""Schema privacy's own look at the uploads: what each file is (``inspect``), every
value it holds that must not reach the model, and the names that may (``scan_uploads``).

It runs where no cell can reach it, in a fresh worker with only the person's uploads
mounted (PROTOCOL.md §3), or, where there is no page, in a hidden cell. Every sheet of
a workbook and every member of an archive (zip, tar; gz, bz2 and xz files; archives
inside archives) is read, also the rows above a header; a part it cannot read (or a
7z or rar archive, which it cannot open) is a *problem*, and then nothing is sent.
Column names count as values unless they look like a header (``_headerlike``) or
their column is allowed. Text files, images and PDFs are described, not read.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import os
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import IO, Any

from reckon.kernel._headerlike import header_names
from reckon.kernel._inspect import inspect
from reckon.kernel._sql import table_name
from reckon.kernel.tables import load_table, read_head, scan_text, table_format
from reckon.kernel.tables._sheets import ENGINES, _with_header
from reckon.kernel.tables._sniff import WHITESPACE, sniff_layout
from reckon.kernel.tables._workbook import open_workbook

__all__ = ["MEMBER_BYTES", "scan_uploads"]

MEMBER_BYTES = 100_000_000  # an archive's member is read up to this size, uncompressed (as inspect)
_MAX_MEMBERS = 2_000
_MAX_DEPTH = 3  # archives in archives (a .tar.gz is two) are read; one more is a problem
_TABLE_EXTENSIONS = {"csv", "tsv", "psv", "ssv", "tab", "xlsx", "xlsm", "xls", "ods",
                     "json", "jsonl", "ndjson", "parquet"}  # fmt: skip
_SKIPPED = ("__MACOSX/",)  # a Mac's resource forks: metadata, never tables


def scan_uploads(root: str = "/data", *, allow: Iterable[str] = ()) -> dict[str, Any]:
    """Every file under ``root``: ``{files, strings, numbers, names, found, problems}``.

    ``files`` are the files' ``inspect()`` descriptions (the model's file list),
    ``strings``/``numbers`` the values to hide, ``names`` what schema mode may send
    (header-like and allowed column names, sheet, file and SQL table names), ``found``
    how many values each file gave, ``problems`` the parts that could not be read."""
    scan = _Scan(set(allow))
    for folder, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            info = inspect(path)
            scan.files.append(info)
            # Its path is how the model reads it: schema, as the file's own names are.
            stem = os.path.splitext(name)[0]
            scan.names.update({path, name, stem, table_name(path)})
            scan.found[path] = scan.file(path, path, info=info)
    return {
        "files": scan.files,
        "strings": sorted(scan.strings),
        "numbers": sorted(scan.numbers),
        "names": sorted(scan.names),
        "found": scan.found,
        "problems": scan.problems,
    }


class _Scan:
    def __init__(self, allow: set[str]) -> None:
        self.allow = allow
        self.files: list[dict[str, Any]] = []
        self.strings: set[str] = set()
        self.numbers: set[float] = set()
        self.names: set[str] = set()
        self.found: dict[str, int] = {}
        self.problems: list[str] = []

    def file(self, path: str, shown: str, *, info: dict[str, Any], depth: int = 0) -> int:
        """The values of one file (``shown`` in messages); 0 for a file that holds none."""
        head = read_head(path)
        fmt = table_format(path, head) if head else None
        extension = os.path.splitext(path)[1].lower().lstrip(".")
        readable = info.get("status") == "ok"
        if not readable and extension in _TABLE_EXTENSIONS:
            self.problems.append(f"{shown}: {info.get('message')}")
            return 0
        try:
            if readable and info.get("kind") == "table" and fmt in ENGINES:
                return self._workbook(path, shown, str(fmt))
            archive = _archive_kind(head)
            if archive is not None and info.get("kind") != "wheel":  # a wheel is code
                return self._archive(path, shown, archive, depth)
            if readable and info.get("kind") == "table":
                return self._table(path, shown, extension)
        except (ValueError, OSError, EOFError, ImportError, zipfile.BadZipFile,
                tarfile.TarError) as exc:  # fmt: skip
            self.problems.append(f"{shown}: {exc}")
        return 0

    def _workbook(self, path: str, shown: str, fmt: str) -> int:
        """Every sheet: its table as the reader reads it (below the header row it finds)
        and the cells above that row. The file is read once (an .ods is one XML stream)."""
        count = 0
        if fmt == "xls" and read_head(path).startswith(b"PK"):
            fmt = "xlsx"  # a renamed .xlsx, as the reader opens it
        with open_workbook(path, shown, fmt) as book:
            names = list(book.names)
            raws = book.raw(names)
        for sheet in names:
            self.names.add(sheet)
            raw = raws[sheet]
            frame, header_at = _with_header(raw)
            if frame is None:  # an empty sheet
                continue
            count += self._frame(frame)
            # The rows above the header (a title, a note) are not in the frame.
            count += self._cells(raw.iloc[:header_at].values.tolist(), self._allowed(frame))
        return count

    def _table(self, path: str, shown: str, extension: str) -> int:
        """A table of one part; for delimited text also the lines above its header."""
        frame = load_table(path).frame
        count = self._frame(frame)
        if extension in ("json", "jsonl", "ndjson", "parquet"):
            return count
        text = scan_text(path)
        layout = sniff_layout(path, text, extension="." + extension)
        if layout.skiprows:
            with open(path, encoding=text.encoding, errors="replace", newline="") as file:
                lines = [file.readline() for _ in range(layout.skiprows)]
            if layout.sep == WHITESPACE:
                records = [line.split() for line in lines]
            else:
                records = list(csv.reader(lines, delimiter=layout.sep))
            count += self._cells(records, set())
        return count

    def _frame(self, frame: Any) -> int:
        """The distinct values of each column not allowed, and its name unless it looks
        like a header."""
        import pandas as pd

        kept, hidden = header_names(frame)
        self.names.update(kept)
        self.names.update(str(c) for c in frame.columns if str(c) in self.allow)
        self.strings.update(name for name in hidden if name not in self.allow)
        count = 0
        for index, name in enumerate(frame.columns):
            if str(name) in self.allow:
                continue
            column = frame.iloc[:, index].dropna()
            if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
                numbers = {float(v) for v in column.unique()}
                self.numbers.update(numbers)
                count += len(numbers)
            else:
                strings = {str(v) for v in column.astype(str).unique()}
                self.strings.update(strings)
                count += len(strings)
        return count

    def _allowed(self, frame: Any) -> set[int]:
        return {i for i, name in enumerate(frame.columns) if str(name) in self.allow}

    def _cells(self, rows: list[list[Any]], skip: set[int]) -> int:
        """Raw cells (the rows above a header), except those of allowed columns."""
        count = 0
        for row in rows:
            for index, cell in enumerate(row):
                if index in skip or cell is None or cell != cell:  # NaN
                    continue
                if isinstance(cell, bool) or not isinstance(cell, int | float):
                    text = str(cell).strip()
                    if text:
                        self.strings.add(text)
                        count += 1
                else:
                    self.numbers.add(float(cell))
                    count += 1
        return count

    def _archive(self, path: str, shown: str, kind: str, depth: int) -> int:
        """Every member, each read as if it were an upload of its own."""
        if depth >= _MAX_DEPTH:
            self.problems.append(f"{shown}: archives nested {_MAX_DEPTH + 1} deep")
            return 0
        if kind in _UNREADABLE:
            self.problems.append(
                f"{shown}: a {kind} archive, which the scan cannot open; extract its tables "
                "and upload them"
            )
            return 0
        with tempfile.TemporaryDirectory() as folder:
            if kind in _STREAMS:
                return self._stream(path, shown, kind, folder, depth)
            with contextlib.ExitStack() as stack:
                return self._members(list(_members(path, kind, stack)), shown, folder, depth)

    def _members(
        self, members: list[tuple[str, bool, Callable[[], IO[bytes]]]], shown: str,
        folder: str, depth: int,
    ) -> int:  # fmt: skip
        if len(members) > _MAX_MEMBERS:
            raise ValueError(f"it holds {len(members)} files, too many to read")
        count = 0
        for number, (name, flagged, open_member) in enumerate(members):
            where = f"{shown} ({name})"
            if flagged:
                self.problems.append(f"{where}: the member is password protected")
                continue
            target = os.path.join(folder, f"{number}-{os.path.basename(name) or 'member'}")
            with open_member() as source:
                copied = self._copy(source, target, where)
            count += self._member(target, where, depth) if copied else 0
            os.remove(target)
        return count

    def _stream(self, path: str, shown: str, kind: str, folder: str, depth: int) -> int:
        """A compressed file (gz, bz2, xz): what it holds, read as an upload."""
        base = os.path.basename(path)
        stem, extension = os.path.splitext(base)
        inner = stem + ".tar" if extension.lower() in (".tgz", ".tbz", ".txz") else stem
        where = f"{shown} ({inner or 'data'})"
        target = os.path.join(folder, inner or "data")
        with _STREAMS[kind](path) as source:
            copied = self._copy(source, target, where)
        return self._member(target, where, depth) if copied else 0

    def _copy(self, source: Any, target: str, where: str) -> bool:
        """A member extracted, up to ``MEMBER_BYTES``; a bigger one is a problem."""
        with open(target, "wb") as sink:
            copied = 0
            while chunk := source.read(1 << 20):
                copied += len(chunk)
                if copied > MEMBER_BYTES:
                    self.problems.append(
                        f"{where}: over {MEMBER_BYTES // 1_000_000} MB uncompressed, too big "
                        "to read for the values to hide"
                    )
                    return False
                sink.write(chunk)
        return True

    def _member(self, target: str, where: str, depth: int) -> int:
        return self.file(target, where, info=inspect(target), depth=depth + 1)


def _archive_kind(head: bytes) -> str | None:
    """What kind of archive the file is, by its first bytes (``None``: not one)."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    return None


def _members(
    path: str, kind: str, stack: contextlib.ExitStack
) -> Iterator[tuple[str, bool, Callable[[], IO[bytes]]]]:
    """``(name, password protected, open)`` for each file of a zip or tar archive (open
    while ``stack`` is)."""
    if kind == "zip":
        archive = stack.enter_context(zipfile.ZipFile(path))
        for info in archive.infolist():
            if not info.is_dir() and not info.filename.startswith(_SKIPPED):
                yield info.filename, bool(info.flag_bits & 0x1), partial(archive.open, info)
        return
    bundle = stack.enter_context(tarfile.open(path))  # noqa: SIM115 (the stack closes it)
    for member in bundle.getmembers():
        if member.isfile():
            yield member.name, False, partial(_extracted, bundle, member)


def _extracted(bundle: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    source = bundle.extractfile(member)
    if source is None:
        raise ValueError(f"{member.name} could not be read")
    return source


def _opener(module: str) -> Callable[[str], IO[bytes]]:
    def open_(path: str) -> IO[bytes]:
        return importlib.import_module(module).open(path, "rb")  # type: ignore[no-any-return]

    return open_


_MAGIC = [
    (b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"\x1f\x8b", "gz"), (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"), (b"7z\xbc\xaf\x27\x1c", "7z"), (b"Rar!\x1a\x07", "rar"),
]  # fmt: skip
_STREAMS = {"gz": _opener("gzip"), "bz2": _opener("bz2"), "xz": _opener("lzma")}
_UNREADABLE = ("7z", "rar")
