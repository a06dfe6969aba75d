"""``inspect``: what a file is and how to read it, for the page and the model's prompt."""

from __future__ import annotations

import copy
import os
import tempfile
import warnings
from typing import Any

from reckon.kernel._personal import personal_columns
from reckon.kernel._sql import table_name
from reckon.kernel._wheelfile import describe_wheel
from reckon.kernel.tables import (
    Loaded,
    head_encoding,
    load_table,
    looks_binary,
    read_delimited,
    read_head,
    scan_text,
    table_format,
    tidy_loaded,
)
from reckon.kernel.tables._archives import unpack_member
from reckon.kernel.tables._bounds import MAX_HEADER_CHARS, check_columns
from reckon.kernel.tables._encoding import TextScan
from reckon.kernel.tables._sniff import WHITESPACE, sniff_layout

__all__ = ["inspect"]

MAX_COLUMNS = 50
HEAD_ROWS = 3
HEAD_CHARS = 40
# Above this a CSV is sampled for dtypes and its rows are counted by line breaks,
# so a 500 MB upload is decoded once and never parsed whole.
FULL_PARSE_BYTES = 20_000_000
_SAMPLE_ROWS = 5_000
# An archive's table is unpacked up to this to be described (the browser's files are
# memory); the agent loads a table up to this size before the model's first cell.
ARCHIVE_BYTES = 100_000_000
_PREVIEW_CHARS = 600
_IMAGES = {"png", "jpg", "jpeg", "gif", "webp", "bmp", "svg", "tif", "tiff", "ico"}
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM")
_TEXT = {"md", "html", "htm", "xml", "py", "js", "log", "yaml", "yml", "ini", "toml", "sql"}


# Descriptions of big files, by path, with the (mtime, size) they describe: the agent
# inspects every upload on every question, and counting the lines of a 1 GB CSV takes
# 15 s in the browser. Small files are read again (it is quick, and a cell may rewrite
# one within the file system's timestamp resolution).
_described: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}


def inspect(path: str) -> dict[str, Any]:
    """Describe ``path`` (PROTOCOL.md §2); never raises, failures come back as data."""
    try:
        stat = os.stat(path)
        version = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        version = None
    kept = _described.get(path)
    if kept is not None and kept[0] == version:
        return copy.deepcopy(kept[1])
    described = _inspect_now(path)
    if version is not None and version[1] > FULL_PARSE_BYTES and described["status"] == "ok":
        _described[path] = (version, copy.deepcopy(described))
    return described


def _inspect_now(path: str) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            # Reader warnings (openpyxl extensions, dtype guesses) are noise here.
            warnings.simplefilter("ignore")
            return _inspect(path)
    except ValueError as exc:
        return {"status": "error", "path": path, "message": str(exc)}
    except Exception as exc:
        return {
            "status": "error",
            "path": path,
            "message": f"{path} could not be read: {type(exc).__name__}: {exc}",
        }


def _inspect(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        raise ValueError(f"{path} does not exist.")
    if os.path.isdir(path):
        raise ValueError(f"{path} is a folder, not a file.")
    size = os.path.getsize(path)
    head = read_head(path)
    extension = os.path.splitext(path)[1].lower().lstrip(".")
    base = {"status": "ok", "path": path, "size": size}
    if extension == "whl":  # a package to install, not a zip of tables
        return describe_wheel(path)
    if extension in _IMAGES or head.startswith(_IMAGE_MAGIC):
        return {**base, "kind": "image"}
    if extension == "pdf" or head.startswith(b"%PDF"):
        return {**base, "kind": "pdf"}
    if not head:
        return {**base, "kind": "text", "preview": "", "notes": ["empty file"]}
    fmt = table_format(path, head) if extension not in _TEXT else None
    if fmt is None or (fmt == "text" and extension not in ("csv", "tsv", "psv", "ssv", "tab")):
        if looks_binary(head):
            return {**base, "kind": "binary"}
        table = _maybe_table(path, extension) if fmt == "text" else None
        return table or {**base, "kind": "text", "preview": _preview(path)}
    if fmt == "parquet" and size > FULL_PARSE_BYTES:
        return _describe(base, _sample_parquet(path))
    if fmt == "text":
        loaded = _read_text_table(path, extension, size)
    elif fmt in ("zip", "gz"):
        loaded = _read_archive(path, fmt)
    else:
        loaded = load_table(path, sizes=True)
    return _describe(base, loaded)


def _read_archive(path: str, fmt: str) -> Loaded:
    """The table a zip or .gz file holds, unpacked up to ``ARCHIVE_BYTES`` into a folder
    that goes when this returns or fails; a big one is sampled as a big upload is."""
    with tempfile.TemporaryDirectory() as folder:
        target = unpack_member(path, path, fmt, folder, limit=ARCHIVE_BYTES)
        inner = os.path.basename(target)
        shown = f"{path} ({inner})"
        head = read_head(target)
        extension = os.path.splitext(inner)[1].lower().lstrip(".")
        if head and table_format(target, head) == "text":
            loaded = _read_text_table(target, extension, os.path.getsize(target), shown=shown)
        else:
            loaded = load_table(target, sizes=True, display_path=shown)
    loaded.notes.insert(0, f"read {inner} from the {fmt} archive")
    loaded.read_with = f"read_table({path!r})"
    return loaded


def _sample_parquet(path: str) -> Loaded:
    """A big Parquet file: its row count from the footer and its dtypes from the first
    rows, without reading the rest (a file larger than memory is inspected too)."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    first = next(parquet.iter_batches(batch_size=_SAMPLE_ROWS), None)
    frame = (first if first is not None else parquet.schema_arrow.empty_table()).to_pandas()
    notes = [f"dtypes from the first {len(frame):,} rows"]
    read_with = f"pd.read_parquet({path!r})"
    return Loaded(frame, "parquet", notes, read_with, rows=parquet.metadata.num_rows)


def _maybe_table(path: str, extension: str) -> dict[str, Any] | None:
    """A ``.txt`` or extension-less file is a table only if it has steady columns."""
    loaded = _read_text_table(path, extension, os.path.getsize(path))
    if loaded.frame.shape[1] < 2:
        return None
    return _describe({"status": "ok", "path": path, "size": os.path.getsize(path)}, loaded)


def _read_text_table(path: str, extension: str, size: int, *, shown: str | None = None) -> Loaded:
    shown = shown or path
    scan = scan_text(path)
    _check_width(path, scan, extension, shown)
    if size <= FULL_PARSE_BYTES:
        loaded = read_delimited(
            path, extension="." + extension, scan=scan, display_path=shown, tidy=True
        )
        tidy_loaded(loaded, shown)
        return loaded
    loaded = read_delimited(
        path, extension="." + extension, scan=scan, nrows=_SAMPLE_ROWS, display_path=shown,
        tidy=True,
    )  # fmt: skip
    tidy_loaded(loaded, shown)
    # Lines, not records: a quoted field holding line breaks makes this an overcount.
    first_data_line = 1 + len([n for n in loaded.notes if n.startswith("skipped")])
    loaded.rows = max(scan.lines - first_data_line, 0)
    loaded.estimated = True
    loaded.notes.append(
        f"about {loaded.rows:,} rows (counted line breaks); dtypes from the first "
        f"{_SAMPLE_ROWS:,} rows"
    )
    return loaded


def _check_width(path: str, scan: TextScan, extension: str, shown: str) -> None:
    """A header line too long or too wide to parse here (pandas works column by column:
    125,000 columns took 35 s), checked on the line itself before anything parses it."""
    layout = sniff_layout(path, scan, extension="." + extension)
    with open(path, encoding=scan.encoding, errors="replace", newline="") as file:
        for _ in range(layout.skiprows):
            file.readline(MAX_HEADER_CHARS + 1)
        line = file.readline(MAX_HEADER_CHARS + 1)
    # Separators counted, not fields parsed: a quoted separator overcounts, never under.
    fields = len(line.split()) if layout.sep == WHITESPACE else line.count(layout.sep) + 1
    check_columns(shown, fields, header_chars=len(line.rstrip("\r\n")))


def _describe(base: dict[str, Any], loaded: Loaded) -> dict[str, Any]:
    frame = loaded.frame
    columns = [{"name": str(name), "dtype": str(dtype)} for name, dtype in frame.dtypes.items()]
    notes = list(loaded.notes)
    if len(columns) > MAX_COLUMNS:
        notes.append(f"{len(columns)} columns; only the first {MAX_COLUMNS} are listed")
        columns = columns[:MAX_COLUMNS]
    described = {
        **base,
        "kind": "table",
        "format": loaded.format,
        "rows": loaded.rows if loaded.rows is not None else len(frame),
        "columns": columns,
        "read_with": loaded.read_with,
        "sql_table": table_name(str(base["path"])),
        "notes": notes,
    }
    if loaded.sheets:
        described["sheets"] = loaded.sheets
    head = _head(frame)
    if head:
        described["head"] = head
    # Columns that look like personal data (the page offers schema privacy for them).
    described["personal"] = personal_columns(frame)
    return described


def _head(frame: Any) -> list[list[str]]:
    """The first rows as text, each cell cut short: the model sees what a column holds
    (a name, a code, a date) without spending a call on ``df.head()``."""
    rows: list[list[str]] = []
    # Sliced first: itertuples over 125,000 columns took 18 s.
    for values in frame.iloc[:HEAD_ROWS, :MAX_COLUMNS].itertuples(index=False):
        cells = []
        for value in values:
            text = "" if value is None else str(value)
            cells.append(text if len(text) <= HEAD_CHARS else text[: HEAD_CHARS - 1] + "…")
        rows.append(cells)
    return rows


def _preview(path: str) -> str:
    head = read_head(path, _PREVIEW_CHARS * 4)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Cut inside a character at the end is fine; anything earlier is not UTF-8.
        text = (
            head[: exc.start].decode()
            if exc.start > len(head) - 4
            else head.decode(head_encoding(head), "replace")
        )
    return text[:_PREVIEW_CHARS]
