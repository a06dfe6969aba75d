"""A streaming reader for OpenDocument spreadsheets.

pandas' ``odf`` engine builds the whole document tree with odfpy, which takes
close to a minute for a 2 MB ``.ods`` on CPython and longer in Pyodide; reading
``content.xml`` with ``iterparse`` takes well under a second.
"""

from __future__ import annotations

import datetime as dt
import html
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element, ParseError, fromstring, iterparse

from reckon.kernel.tables._bounds import MAX_CELLS, too_many_cells

__all__ = ["SheetTally", "ods_sheet_names", "ods_sheet_tallies", "read_ods_rows", "read_ods_sheets"]

_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
# Formatting-only repeats (a styled empty column to the sheet's end) can claim
# a million cells; empty repeats past real data are dropped, the rest capped.
_MAX_REPEAT = 10_000
_SHEET_NAME = re.compile(rb'<table:table [^>]*?table:name="([^"]*)"')
_ROOT = re.compile(rb"<office:document-content\b[^>]*>")
_ROW_TAG = b"<table:table-row"
_ROW_REPEAT = re.compile(rb'number-rows-repeated="(\d+)"')
_WIDTH_ROWS = 50  # rows per sheet whose cells are counted for its width


@dataclass
class SheetTally:
    """A sheet's name and size, counted from the raw XML without reading values."""

    name: str
    rows: int = 0  # from the first row with a value to the last, inner blank rows kept
    columns: int = 0  # the widest of the first rows with values
    _blank: int = field(default=0, repr=False)
    _sampled: int = field(default=0, repr=False)


def ods_sheet_names(path: str) -> list[str]:
    return [tally.name for tally in ods_sheet_tallies(path)]


def ods_sheet_tallies(path: str) -> list[SheetTally]:
    """Every sheet's name, row count and width, in one pass over the bytes.

    Byte searches, not an XML parse: parsing a 100 MB content.xml takes seconds,
    splitting it at each row tag a fraction of that.
    """
    sheets: list[SheetTally] = []
    root = b""
    tail = b""
    with zipfile.ZipFile(path) as archive, archive.open("content.xml") as content:
        while True:
            chunk = content.read(1 << 20)
            data = tail + chunk
            if not root and (found := _ROOT.search(data)):
                root = found.group(0)
            parts = data.split(_ROW_TAG)
            # The last part may be cut; it goes again with the next chunk.
            tail = (_ROW_TAG if len(parts) > 1 else b"") + parts.pop() if chunk else b""
            for index, part in enumerate(parts):
                _tally_part(sheets, part, is_row=index > 0, root=root)
            if not chunk:
                return sheets


def _tally_part(sheets: list[SheetTally], part: bytes, *, is_row: bool, root: bytes) -> None:
    # <table:table-rows> and <table:table-row-group> share the prefix; they hold no values.
    if is_row and part[:1] in (b" ", b">", b"/") and sheets:
        sheet = sheets[-1]
        opening = part[: part.find(b">") + 1]
        repeat = _ROW_REPEAT.search(opening)
        count = int(repeat.group(1)) if repeat else 1
        if b"office:value-type=" in part or b"<text:p" in part:
            sheet.rows += (sheet._blank if sheet.rows else 0) + count
            sheet._blank = 0
            if sheet._sampled < _WIDTH_ROWS:
                sheet._sampled += 1
                sheet.columns = max(sheet.columns, _width(part, root))
        else:
            sheet._blank += count
    if b"<table:table " not in part:
        return
    for match in _SHEET_NAME.finditer(part):
        sheets.append(SheetTally(html.unescape(match.group(1).decode("utf-8", "replace"))))


def _width(part: bytes, root: bytes) -> int:
    end = part.find(b"</table:table-row>")
    if end < 0 or not root:
        return 0
    fragment = (
        root + _ROW_TAG + part[: end + len(b"</table:table-row>")] + b"</office:document-content>"
    )
    try:
        element = fromstring(fragment)
    except ParseError:
        return 0
    row = element.find(f"{_TABLE}table-row")
    return len(_row(row)) if row is not None else 0


def read_ods_rows(path: str, sheet: str | int = 0) -> list[list[Any]]:
    """The cell values of one sheet, trailing empty rows and cells dropped."""
    return next(iter(read_ods_sheets(path, [sheet]).values()), [])


def read_ods_sheets(
    path: str, sheets: Sequence[str | int] | None = None, *, shown: str | None = None
) -> dict[str, list[list[Any]]]:
    """Cell values of the named (or numbered) sheets, or of all, in one pass; ``TooBig``
    once their repeats expand past ``MAX_CELLS`` (``shown``: the file in that message)."""
    found: dict[str, list[list[Any]]] = {}
    rows: list[list[Any]] | None = None
    index = -1
    earlier = height = widest = 0  # cells of the sheets read; this sheet's rows, width
    with zipfile.ZipFile(path) as archive, archive.open("content.xml") as content:
        for event, element in iterparse(content, events=("start", "end")):
            if element.tag == f"{_TABLE}table":
                if event == "start":
                    index += 1
                    name = element.get(f"{_TABLE}name") or f"Sheet{index + 1}"
                    wanted = sheets is None or index in sheets or name in sheets
                    rows = found.setdefault(name, []) if wanted else None
                    earlier, height, widest = earlier + height * widest, 0, 0
                else:
                    rows = None
                    if sheets is not None and len(found) == len(sheets):
                        break
            elif rows is not None and event == "end" and element.tag == f"{_TABLE}table-row":
                cells = _row(element)
                repeat = int(element.get(f"{_TABLE}number-rows-repeated", "1"))
                repeat = min(repeat, _MAX_REPEAT if cells else 1)
                # pandas pads each row to the widest: a sheet costs its rows times that.
                height, widest = height + repeat, max(widest, len(cells))
                if earlier + height * widest > MAX_CELLS:
                    made = earlier + height * widest
                    raise too_many_cells(shown or path, made, what="its repeated rows and cells")
                rows.extend([cells] * repeat)
            if event == "end" and element.tag == f"{_TABLE}table-row":
                element.clear()
    for values in found.values():
        while values and not values[-1]:
            values.pop()
    return found


def _row(row: Element) -> list[Any]:
    cells: list[Any] = []
    pending = 0  # empty cells not yet written: only needed if a value follows
    for cell in row:
        if cell.tag not in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"):
            continue
        repeat = int(cell.get(f"{_TABLE}number-columns-repeated", "1"))
        value = _value(cell)
        if value is None:
            pending += repeat
            continue
        cells.extend([None] * min(pending, _MAX_REPEAT))
        pending = 0
        cells.extend([value] * min(repeat, _MAX_REPEAT))
        if len(cells) > _MAX_REPEAT:
            break
    return cells


def _value(cell: Element) -> Any:
    kind = cell.get(f"{_OFFICE}value-type")
    if kind in ("float", "percentage", "currency"):
        number = float(cell.get(f"{_OFFICE}value", "nan"))
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if kind == "date":
        text = cell.get(f"{_OFFICE}date-value", "")
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            return text
    if kind == "time":
        return _duration(cell.get(f"{_OFFICE}time-value", ""))
    if kind == "boolean":
        return cell.get(f"{_OFFICE}boolean-value") == "true"
    paragraphs = ["".join(p.itertext()) for p in cell.iter(f"{_TEXT}p")]
    return "\n".join(paragraphs) if paragraphs else None


def _duration(text: str) -> Any:
    # ISO 8601 durations such as PT27H17M54S; hours may pass 23.
    try:
        hours, rest = text.removeprefix("PT").split("H")
        minutes, seconds = rest.split("M")
        return dt.timedelta(
            hours=int(hours), minutes=int(minutes), seconds=float(seconds.rstrip("S"))
        )
    except ValueError:
        return text
