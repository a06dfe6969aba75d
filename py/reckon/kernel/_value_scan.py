"""Schema privacy's own look at the uploads: what each file is (``inspect``), every
value it holds that must not reach the model, and the names that may (``scan_uploads``).

It runs where no cell can reach it, in a fresh worker with only the person's uploads
mounted (PROTOCOL.md §3), or, where there is no page, in a hidden cell. Every sheet of
a workbook and every member of an archive is read (also the rows above a header); a
part it cannot read is a *problem*, and schema privacy then sends nothing.
Column names count as values unless they look like a header (``_headerlike``) or
their column is allowed. Text files, images and PDFs are described, not read.
"""

from __future__ import annotations

import csv
import gzip
import os
import tempfile
import zipfile
from collections.abc import Iterable
from typing import Any

from reckon.kernel._headerlike import header_names
from reckon.kernel._inspect import inspect
from reckon.kernel._sql import table_name
from reckon.kernel.tables import load_table, read_head, scan_text, table_format
from reckon.kernel.tables._sheets import ENGINES, _with_header
from reckon.kernel.tables._sniff import WHITESPACE, sniff_layout
from reckon.kernel.tables._workbook import open_workbook

__all__ = ["MEMBER_BYTES", "scan_uploads"]

MEMBER_BYTES = 256_000_000  # an archive's member is read up to this size, uncompressed
_MAX_MEMBERS = 2_000
_MAX_DEPTH = 2  # an archive in an archive is read; one more level is a problem
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
        try:
            if fmt in ("zip", "gz") and extension != "whl":
                return self._archive(path, shown, fmt, depth)
            if info.get("status") == "ok" and info.get("kind") == "table":
                if fmt in ENGINES:
                    return self._workbook(path, shown, str(fmt))
                return self._table(path, shown, extension)
        except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
            self.problems.append(f"{shown}: {exc}")
            return 0
        if info.get("status") != "ok" and extension in _TABLE_EXTENSIONS:
            self.problems.append(f"{shown}: {info.get('message')}")
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

    def _archive(self, path: str, shown: str, fmt: str, depth: int) -> int:
        """Every member, each read as if it were an upload of its own."""
        if depth >= _MAX_DEPTH:
            self.problems.append(f"{shown}: an archive inside an archive inside an archive")
            return 0
        count = 0
        with tempfile.TemporaryDirectory() as folder:
            if fmt == "gz":
                inner = os.path.basename(path)[: -len(".gz")] or "data"
                target = os.path.join(folder, inner)
                with gzip.open(path, "rb") as source:
                    copied = self._copy(source, target, f"{shown} ({inner})")
                return self._member(target, f"{shown} ({inner})", depth) if copied else 0
            with zipfile.ZipFile(path) as archive:
                members = [m for m in archive.infolist() if not m.is_dir()]
                members = [m for m in members if not m.filename.startswith(_SKIPPED)]
                if len(members) > _MAX_MEMBERS:
                    raise ValueError(f"it holds {len(members)} files, too many to read")
                for number, member in enumerate(members):
                    where = f"{shown} ({member.filename})"
                    if member.flag_bits & 0x1:
                        self.problems.append(f"{where}: the member is password protected")
                        continue
                    name = os.path.basename(member.filename) or f"member-{number}"
                    target = os.path.join(folder, f"{number}-{name}")
                    with archive.open(member) as source:
                        copied = self._copy(source, target, where)
                    count += self._member(target, where, depth) if copied else 0
                    os.remove(target)
        return count

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
