"""Reading spreadsheets (.xlsx, .xlsm, .xls, .ods), finding the header row in each."""

from __future__ import annotations

import zipfile
from collections import Counter
from typing import Any
from xml.etree import ElementTree

from reckon.kernel._delimited import Loaded, pandas_call
from reckon.kernel._ods import ods_sheet_names, read_ods_rows
from reckon.kernel._sniff import find_header

__all__ = ["ENGINES", "read_sheet"]

ENGINES = {"xlsx": "openpyxl", "xlsm": "openpyxl", "xls": "xlrd", "ods": "odf"}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def read_sheet(
    path: str,
    *,
    fmt: str,
    head: bytes,
    display_path: str | None = None,
    **kwargs: Any,
) -> Loaded:
    """Read the first (or the named) sheet; junk rows above the header are skipped."""
    import pandas as pd

    shown = display_path or path
    if fmt in ("xlsx", "xlsm") and head.startswith(_OLE_MAGIC):
        raise ValueError(_encrypted(shown))
    if fmt == "xls" and head.startswith(b"PK"):
        fmt = "xlsx"  # a renamed .xlsx; openpyxl reads it
    notes: list[str] = []
    options: dict[str, Any] = {}
    if fmt == "ods" and not set(kwargs) - {"sheet_name"}:
        sheets, raw = _ods_sheet(path, shown, kwargs)
    else:
        sheets, raw = _pandas_sheet(path, shown, fmt, kwargs)
    sheet = kwargs.get("sheet_name", sheets[0])
    if len(sheets) > 1:
        listed = ", ".join(repr(s) for s in sheets[:10]) + (" …" if len(sheets) > 10 else "")
        notes.append(f"{len(sheets)} sheets: {listed}; read {sheet!r} (pass sheet_name=...)")
    if sheet != sheets[0]:
        options["sheet_name"] = sheet
    if set(kwargs) - {"sheet_name"}:
        call = pandas_call("pd.read_excel", shown, kwargs)
        return Loaded(raw, fmt, notes, call)
    filled = raw.notna().any(axis=1).to_numpy().nonzero()[0]
    if not len(filled):
        notes.append(f"sheet {sheet!r} is empty")
        return Loaded(pd.DataFrame(), fmt, notes, pandas_call("pd.read_excel", shown, options))
    # Empty rows around the table go; empty rows inside it stay, as pandas keeps them.
    raw = raw.iloc[filled[0] : filled[-1] + 1]
    header = _header_row(raw.dropna(axis=0, how="all"))
    header_at = int(raw.dropna(axis=0, how="all").index[header])
    if header_at:
        notes.append(f"header is row {header_at + 1} of the sheet; rows above skipped")
        options["header"] = header_at
    names = [_name(value, index) for index, value in enumerate(raw.loc[header_at])]
    frame = raw.loc[header_at + 1 :].reset_index(drop=True).infer_objects()
    frame.columns = _dedupe(names)
    # The odf engine takes close to a minute on a big .ods; our reader does not.
    call = (
        f"read_table({shown!r})" if fmt == "ods" else pandas_call("pd.read_excel", shown, options)
    )
    return Loaded(frame, fmt, notes, call)


def _pandas_sheet(path: str, shown: str, fmt: str, kwargs: dict[str, Any]) -> tuple[list[str], Any]:
    import pandas as pd

    try:
        book = pd.ExcelFile(path, engine=ENGINES[fmt])
    except Exception as exc:
        text = str(exc).lower()
        if "encrypt" in text or "password" in text:
            raise ValueError(_encrypted(shown)) from exc
        raise ValueError(
            f"{shown} could not be opened as a .{fmt} workbook ({type(exc).__name__}: {exc}). "
            "Open it in a spreadsheet program, save it as .xlsx or .csv and upload it again."
        ) from exc
    with book:
        sheets = [str(name) for name in book.sheet_names]
        if not sheets:
            raise ValueError(f"{shown} has no sheets.")
        options = dict(kwargs)
        sheet = options.pop("sheet_name", 0)
        if set(options):
            return sheets, book.parse(sheet, **options)
        return sheets, book.parse(sheet, header=None)


def _ods_sheet(path: str, shown: str, kwargs: dict[str, Any]) -> tuple[list[str], Any]:
    import pandas as pd

    try:
        sheets = ods_sheet_names(path)
        rows = read_ods_rows(path, kwargs.get("sheet_name", 0))
    except (KeyError, zipfile.BadZipFile, ElementTree.ParseError) as exc:
        raise ValueError(
            f"{shown} could not be opened as an .ods spreadsheet ({exc}). "
            "Save it again as .ods or .xlsx and upload it again."
        ) from exc
    return sheets or ["Sheet1"], pd.DataFrame(rows)


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


def _dedupe(names: list[Any]) -> list[Any]:
    seen: dict[Any, int] = {}
    unique: list[Any] = []
    for name in names:
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        unique.append(name)
    return unique


def _encrypted(path: str) -> str:
    return (
        f"{path} is encrypted (password protected), so it cannot be read. "
        "Open it, save it again without a password, and upload it again."
    )
