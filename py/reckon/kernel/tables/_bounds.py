"""What reading one file may cost: bytes unpacked, cells made, columns parsed.

A few hundred bytes can claim far more: an .ods row repeated a billion times, a
cell at column XFD of row 1,048,576 in an .xlsx (pandas pads every row to the
widest), a zip holding 600 MB of one repeated line, a header line of 5 MB. Each
reader checks its bound before it spends the memory, and says which file and
what to do instead (``TooBig``, a ``ValueError``: the caller's data, not our bug).
"""

from __future__ import annotations

import re
import zipfile
from typing import IO

__all__ = ["ARCHIVE_MEMBER_BYTES", "MAX_CELLS", "MAX_COLUMNS", "MAX_HEADER_CHARS",
           "WORKBOOK_XML_BYTES", "TooBig", "check_columns", "check_workbook", "count_cells",
           "too_many_cells"]  # fmt: skip

# A workbook's cells as pandas holds them (every row padded to the widest): ten million
# is about 80 MB of pointers before any value, and minutes of parsing in the browser.
MAX_CELLS = 10_000_000
# Columns of one table: pandas works column by column, so 125,000 columns took 35 s
# to inspect on CPython (five times that in the browser) for a 1 MB file.
MAX_COLUMNS = 5_000
MAX_HEADER_CHARS = 1_000_000  # a header line longer than this is not a header
# The XML inside an .xlsx or .ods, uncompressed: zipfile returns no more than a
# member declares, so the declared sizes bound what is read.
WORKBOOK_XML_BYTES = 400_000_000
# One archive member unpacked by read_table (the browser's file system is memory).
ARCHIVE_MEMBER_BYTES = 256_000_000

_MB = 1_000_000
_CONVERT = "open it in a spreadsheet program, save it as .csv and upload that"
_ROW = b"<row"
_ROW_NUMBER = re.compile(rb'\br="(\d+)"')
_CELL = re.compile(rb"<c[\s>/]")
_CELL_COLUMN = re.compile(rb'<c\b[^>]*?\br="([A-Z]{1,3})\d+"')


class TooBig(ValueError):
    """A file over one of the bounds above; the message names it and says what to do."""


def too_many_cells(shown: str, cells: int, *, what: str, part: bool = False) -> TooBig:
    """``part``: pandas can read the first rows without the rest (not an .ods: its
    reader expands every repeat it meets)."""
    first = f", or read its first rows with pd.read_excel({shown!r}, nrows=1000)" if part else ""
    return TooBig(
        f"{shown} is too big to read as a table: {what} expand to {cells:,} cells or more "
        f"(the limit is {MAX_CELLS:,}); {_CONVERT}{first}."
    )


def check_columns(shown: str, columns: int, *, header_chars: int = 0) -> None:
    """A table too wide to inspect: its header line, then its column count."""
    if header_chars > MAX_HEADER_CHARS:
        raise TooBig(
            f"{shown}'s first line is over {header_chars // _MB or 1} MB long, too long for "
            "a header; look at its start with open(path).read(2000) and read a part with "
            f"pd.read_csv({shown!r}, usecols=range(20), nrows=1000)."
        )
    if columns > MAX_COLUMNS:
        raise TooBig(
            f"{shown} has {columns:,} columns, more than Reckon inspects ({MAX_COLUMNS:,}); "
            f"read the ones you need with pd.read_csv({shown!r}, usecols=range(100)) "
            "(or usecols=[names]), or query it with run_sql."
        )


def check_workbook(path: str, shown: str, fmt: str) -> None:
    """An .xlsx/.xlsm/.ods whose XML is too big, or whose cells (an .xlsx's, padded as
    pandas pads them) pass ``MAX_CELLS``. The .ods cells are counted as they are read."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        return  # the reader says what is wrong with it
    with archive:
        infos = archive.infolist()
        unpacked = sum(info.file_size for info in infos)
        if unpacked > WORKBOOK_XML_BYTES:
            raise TooBig(
                f"{shown} unpacks to {unpacked / _MB:,.0f} MB of XML (the limit is "
                f"{WORKBOOK_XML_BYTES // _MB} MB); {_CONVERT}."
            )
        if fmt not in ("xlsx", "xlsm"):
            return
        for info in infos:
            if info.filename == "xl/sharedStrings.xml":
                with archive.open(info) as strings:
                    count = _count_tag(strings, b"<si")
                if count > MAX_CELLS:
                    raise too_many_cells(shown, count, what="its shared strings")
            elif info.filename.startswith("xl/worksheets/") and info.filename.endswith(".xml"):
                with archive.open(info) as sheet:
                    cells = count_cells(sheet)
                if cells > MAX_CELLS:
                    raise too_many_cells(
                        shown, cells, what="a sheet's rows times its widest row", part=True
                    )


def count_cells(stream: IO[bytes]) -> int:
    """Rows times the widest row of an .xlsx sheet's XML, as openpyxl and pandas fill
    them: a row numbered N makes N rows, a cell in column C makes C cells in its row.
    One pass in chunks, each cut before its last tag (no tag holds a ``<``)."""
    rows = widest = width = count = 0
    carry = b""
    while True:
        chunk = stream.read(1 << 20)
        data = carry + chunk
        cut = data.rfind(b"<") if chunk else len(data)
        if cut <= 0 and chunk and len(data) < (1 << 24):
            carry = data
            continue
        segment, carry = (data[:cut], data[cut:]) if cut > 0 else (data, b"")
        for index, part in enumerate(segment.split(_ROW)):
            if index and part[:1] in (b" ", b">", b"/"):  # a row starts (not <rowBreaks>)
                opening = part[: part.find(b">") + 1]
                number = _ROW_NUMBER.search(opening)
                rows = max(rows + 1, int(number.group(1)) if number else 0)
                width = count = 0
            count += len(_CELL.findall(part))
            width = max(width, count, *(_column_number(c) for c in _CELL_COLUMN.findall(part)))
            widest = max(widest, width)
        if not chunk:
            return rows * widest


def _count_tag(stream: IO[bytes], tag: bytes) -> int:
    count, carry = 0, b""
    while chunk := stream.read(1 << 20):
        data = carry + chunk
        count += data.count(tag)
        carry = data[-(len(tag) - 1) :]
    return count


def _column_number(letters: bytes) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + letter - 64
    return number
