"""Reading spreadsheets (.xlsx, .xlsm, .xls, .ods): the first sheet, a named one, or all.

Each sheet's header row is found (junk rows above it skipped). ``sheet=None``
stacks every sheet into one table with a ``sheet`` column saying where each
row came from.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from reckon.kernel.tables._delimited import Loaded, dedupe_names, pandas_call
from reckon.kernel.tables._numbers import NumberStyle
from reckon.kernel.tables._sniff import find_header
from reckon.kernel.tables._workbook import ENGINES, Workbook, encrypted, open_workbook

__all__ = ["ALL_SHEETS", "ENGINES", "read_sheet"]

ALL_SHEETS = (None, "*")  # sheet= values that mean every sheet
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_LISTED = 10


def read_sheet(
    path: str,
    *,
    fmt: str,
    head: bytes,
    sheet: str | int | None = 0,
    display_path: str | None = None,
    sizes: bool = False,
    **kwargs: Any,
) -> Loaded:
    """Read one sheet (by name or position) or all (``sheet=None``).

    ``sheet_name=`` (pandas' spelling) means the same. ``sizes=True`` also lists
    every sheet's rows and columns (``inspect`` wants them; counting costs a pass
    over the file). Other keyword arguments go to ``pandas.read_excel``
    unchanged, and then no header row is looked for.
    """
    shown = display_path or path
    if fmt in ("xlsx", "xlsm") and head.startswith(_OLE_MAGIC):
        raise ValueError(encrypted(shown))
    if fmt == "xls" and head.startswith(b"PK"):
        fmt = "xlsx"  # a renamed .xlsx; openpyxl reads it
    if "sheet_name" in kwargs:  # pandas' spelling: the same thing
        sheet = kwargs.pop("sheet_name")
    with open_workbook(path, shown, fmt) as book:
        names = _chosen(book, sheet)
        headers: dict[str, int] = {}
        if kwargs:
            frames = {name: book.parse(name, **kwargs) for name in names}
            notes: list[str] = []
        else:
            frames, headers, notes = _framed(book.raw(names))
        loaded = _combine(book, frames, headers, notes, sheet=sheet, options=kwargs)
        if len(book.names) > 1:
            loaded.notes.insert(0, _sheets_note(book, shown, names))
            if sizes:
                loaded.sheets = _sizes(book, loaded, names)
    return loaded


def _chosen(book: Workbook, sheet: str | int | None) -> list[str]:
    if sheet in ALL_SHEETS:
        return list(book.names)
    if isinstance(sheet, int) and not isinstance(sheet, bool):
        if -len(book.names) <= sheet < len(book.names):
            return [book.names[sheet]]
    elif str(sheet) in book.names:
        return [str(sheet)]
    listed = ", ".join(repr(name) for name in book.names[:30])
    raise ValueError(
        f"{book.shown} has no sheet {sheet!r}; its {len(book.names)} sheet(s): {listed}. "
        f"Pass one of them as read_table({book.shown!r}, sheet=...), or sheet=None for all."
    )


def _framed(raws: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    """Each sheet below its header row (``None`` if empty), the header rows, notes."""
    frames: dict[str, Any] = {}
    headers: dict[str, int] = {}
    notes: list[str] = []
    for name, raw in raws.items():
        frame, header_at = _with_header(raw)
        frames[name], headers[name] = frame, header_at
        if frame is None:
            notes.append(f"sheet {name!r} is empty")
        elif header_at:
            notes.append(
                f"header is row {header_at + 1} of sheet {name!r}; rows above skipped"
                if len(raws) > 1
                else f"header is row {header_at + 1} of the sheet; rows above skipped"
            )
    return frames, headers, notes


def _combine(
    book: Workbook,
    frames: dict[str, Any],
    headers: dict[str, int],
    notes: list[str],
    *,
    sheet: Any,
    options: dict[str, Any],
) -> Loaded:
    import pandas as pd

    if sheet not in ALL_SHEETS:
        name, frame = next(iter(frames.items()))
        call = _read_with(book, name, headers.get(name, 0), options)
        loaded = Loaded(pd.DataFrame() if frame is None else frame, book.fmt, notes, call)
        loaded.style = None if options else NumberStyle()
        return loaded
    kept = {name: frame for name, frame in frames.items() if frame is not None}
    column = "sheet" if not any("sheet" in map(str, f.columns) for f in kept.values()) else "_sheet"
    parts = [frame.assign(**{column: name}) for name, frame in kept.items()]
    combined = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if parts:
        combined = combined[[column, *[c for c in combined.columns if c != column]]]
    if len({tuple(map(str, frame.columns)) for frame in kept.values()}) > 1:
        notes.append("the sheets have different columns; values a sheet lacks are NaN")
    notes.insert(0, f"all {len(frames)} sheets in one table; {column!r} says each row's sheet")
    call = pandas_call("read_table", book.shown, {"sheet": None, **options})
    return Loaded(combined, book.fmt, notes, call, style=None if options else NumberStyle())


def _read_with(book: Workbook, name: str, header_at: int, options: dict[str, Any]) -> str:
    shown, first = book.shown, name == book.names[0]
    call: dict[str, Any] = {} if first else {"sheet_name": name}
    if options:
        return pandas_call("pd.read_excel", shown, {**call, **options})
    if book.fmt == "ods":  # the odf engine takes close to a minute on a big .ods; ours does not
        return f"read_table({shown!r})" if first else f"read_table({shown!r}, sheet={name!r})"
    if header_at:
        call["header"] = header_at
    return pandas_call("pd.read_excel", shown, call)


def _sheets_note(book: Workbook, shown: str, names: list[str]) -> str:
    listed = ", ".join(repr(s) for s in book.names[:_LISTED])
    listed += " …" if len(book.names) > _LISTED else ""
    other = book.names[1] if names[0] == book.names[0] else book.names[0]
    if len(names) > 1:
        return f"{len(book.names)} sheets: {listed}"
    which = "the first" if names[0] == book.names[0] else repr(names[0])
    return (
        f"{len(book.names)} sheets: {listed}; read_with reads {which}; "
        f"read_table({shown!r}, sheet={other!r}) reads another, "
        f"read_table({shown!r}, sheet=None) all of them with a 'sheet' column"
    )


def _sizes(book: Workbook, loaded: Loaded, names: list[str]) -> list[dict[str, Any]]:
    """Every sheet's size: exact for the one read, from the file's structure otherwise."""
    sizes = [size.as_dict() for size in book.sizes()]
    if len(names) == 1:
        for entry in sizes:
            if entry["name"] == names[0]:
                entry["rows"], entry["columns"] = (int(n) for n in loaded.frame.shape)
    return sizes


def _with_header(raw: Any) -> tuple[Any, int]:
    """The sheet's table below its header row, and that row's index; ``None`` if empty."""
    filled = raw.notna().any(axis=1).to_numpy().nonzero()[0]
    if not len(filled):
        return None, 0
    # Empty rows around the table go; empty rows inside it stay, as pandas keeps them.
    raw = raw.iloc[filled[0] : filled[-1] + 1]
    header = _header_row(raw.dropna(axis=0, how="all"))
    header_at = int(raw.dropna(axis=0, how="all").index[header])
    names = [_name(value, index) for index, value in enumerate(raw.loc[header_at])]
    frame = raw.loc[header_at + 1 :].reset_index(drop=True).infer_objects()
    frame.columns = dedupe_names(names)
    return frame, header_at


def _header_row(raw: Any) -> int:
    records = []
    for row in raw.head(50).itertuples(index=False):
        cells = ["" if _missing(v) else str(v) for v in row]
        while cells and not cells[-1]:
            cells.pop()
        records.append(cells)
    widths = [len(r) for r in records if r]
    width = Counter(widths).most_common(1)[0][0] if widths else 1
    return find_header(records, width)


def _missing(value: Any) -> bool:
    try:
        return bool(value != value) or value is None
    except (TypeError, ValueError):
        return False


def _name(value: Any, index: int) -> Any:
    if _missing(value) or (isinstance(value, str) and not value.strip()):
        return f"Unnamed: {index}"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
