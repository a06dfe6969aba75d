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
from typing import Any
from xml.etree.ElementTree import Element, iterparse

__all__ = ["ods_sheet_names", "read_ods_rows"]

_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
# Formatting-only repeats (a styled empty column to the sheet's end) can claim
# a million cells; empty repeats past real data are dropped, the rest capped.
_MAX_REPEAT = 10_000
_SHEET_NAME = re.compile(rb'<table:table [^>]*?table:name="([^"]*)"')


def ods_sheet_names(path: str) -> list[str]:
    # A regex over the raw bytes: parsing 100 MB of XML just for the names is slow.
    names: list[str] = []
    tail = b""
    with zipfile.ZipFile(path) as archive, archive.open("content.xml") as content:
        while True:
            chunk = content.read(1 << 20)
            data = tail + chunk
            # Keep an overlap so a tag cut between two chunks is still found once.
            cut = max(len(data) - 4096, 0) if chunk else len(data)
            for match in _SHEET_NAME.finditer(data):
                if match.start() < cut:
                    names.append(html.unescape(match.group(1).decode("utf-8", "replace")))
            tail = data[cut:]
            if not chunk:
                return names


def read_ods_rows(path: str, sheet: str | int = 0) -> list[list[Any]]:
    """The cell values of one sheet, trailing empty rows and cells dropped."""
    rows: list[list[Any]] = []
    index = -1
    inside = False
    with zipfile.ZipFile(path) as archive, archive.open("content.xml") as content:
        for event, element in iterparse(content, events=("start", "end")):
            if element.tag == f"{_TABLE}table":
                if event == "start":
                    index += 1
                    name = element.get(f"{_TABLE}name")
                    inside = sheet == index if isinstance(sheet, int) else sheet == name
                elif inside:
                    break
            elif inside and event == "end" and element.tag == f"{_TABLE}table-row":
                cells = _row(element)
                repeat = int(element.get(f"{_TABLE}number-rows-repeated", "1"))
                rows.extend([cells] * min(repeat, _MAX_REPEAT if cells else 1))
                element.clear()
    while rows and not rows[-1]:
        rows.pop()
    return rows


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
