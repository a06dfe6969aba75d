"""Small uploads that claim a lot once read (issue 32, M2): each is built here, in
memory, in well under a second, except the 600 MB archives (about 3 s, built once)."""

from __future__ import annotations

import functools
import gzip
import io
import zipfile
from typing import IO

import pandas as pd

__all__ = ["BOMBS", "deep_zip", "far_cell_xlsx", "gz_of_lines", "long_header", "ods_repeats",
           "ods_xml_bomb", "shared_strings_xlsx", "wide_header", "zip_of_lines"]  # fmt: skip

_ODS_ROOT = (
    '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
    '<office:body><office:spreadsheet><table:table table:name="Sheet1">{rows}'
    "</table:table></office:spreadsheet></office:body></office:document-content>"
)
_LINE = b"alpha,beta,gamma,1234,5678.5\n"


def _ods(*parts: bytes, repeat: tuple[bytes, int] = (b"", 0)) -> bytes:
    """An .ods whose content.xml is ``parts[0]``, ``repeat`` (block, times), the rest."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        kind = "application/vnd.oasis.opendocument.spreadsheet"
        archive.writestr(zipfile.ZipInfo("mimetype"), kind)
        _stream(archive, "content.xml", parts[0], repeat, *parts[1:])
    return buffer.getvalue()


def _stream(
    archive: zipfile.ZipFile, name: str, head: bytes, repeat: tuple[bytes, int], *tail: bytes
) -> None:
    """A member written in blocks of 1 MB or so: a GB of XML never sits in memory."""
    block, times = repeat
    per = max(1, 1_000_000 // max(len(block), 1))
    with archive.open(name, "w", force_zip64=True) as member:
        member.write(head)
        for start in range(0, times, per):
            member.write(block * min(per, times - start))
        for part in tail:
            member.write(part)


def ods_repeats(rows: int = 30_000, columns: int = 10_000) -> bytes:
    """A few hundred bytes whose repeat attributes claim ``rows`` x ``columns`` cells
    (3e8 by default), under a one-cell header row."""
    header = (
        '<table:table-row><table:table-cell office:value-type="string"><text:p>a</text:p>'
        "</table:table-cell></table:table-row>"
    )
    body = (
        f'<table:table-row table:number-rows-repeated="{rows}"><table:table-cell '
        f'table:number-columns-repeated="{columns}" office:value-type="float" '
        'office:value="1"/></table:table-row>'
    )
    return _ods(_ODS_ROOT.format(rows=header + body * 3).encode())


def ods_xml_bomb(megabytes: int = 500) -> bytes:
    """An .ods whose content.xml is ``megabytes`` of empty rows (no repeat attribute)."""
    row = b"<table:table-row/>"
    head, tail = _ODS_ROOT.encode().split(b"{rows}")
    return _ods(head, tail, repeat=(row, megabytes * 1_000_000 // len(row)))


@functools.cache
def zip_of_lines(megabytes: int = 600) -> bytes:
    """A zip holding one CSV of ``megabytes`` of one repeated line."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("big.csv", "w", force_zip64=True) as member,
    ):
        _write_lines(member, megabytes)
    return buffer.getvalue()


@functools.cache
def gz_of_lines(megabytes: int = 600) -> bytes:
    """The same CSV as a .gz file."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as stream:
        _write_lines(stream, megabytes)
    return buffer.getvalue()


def _write_lines(sink: IO[bytes] | gzip.GzipFile, megabytes: int) -> None:
    block = _LINE * 10_000
    sink.write(b"a,b,c,d,e\n")
    for _ in range(megabytes * 1_000_000 // len(block)):
        sink.write(block)


def deep_zip(depth: int = 5) -> bytes:
    """A CSV zipped inside a zip, ``depth`` times."""
    data, name = b"a,b\n1,2\n", "inner.csv"
    for level in range(depth):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(name, data)
        data, name = buffer.getvalue(), f"level{level}.zip"
    return data


def long_header(megabytes: int = 5) -> bytes:
    """A CSV whose header line is one name of ``megabytes`` MB."""
    return b"x" * (megabytes * 1_000_000) + b",b\n1,2\n"


def wide_header(columns: int = 60_000) -> bytes:
    """A CSV of ``columns`` short columns (a header line under 1 MB)."""
    header = ",".join(f"c{i}" for i in range(columns))
    return (header + "\n" + ",".join("1" for _ in range(columns)) + "\n").encode()


def _xlsx(name: str, *parts: bytes, repeat: tuple[bytes, int] = (b"", 0)) -> bytes:
    """A one-sheet .xlsx from pandas with its member ``name`` replaced (as ``_ods``)."""
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_excel(buffer, index=False)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for info in source.infolist():
            if info.filename != name:
                archive.writestr(info.filename, source.read(info))
        _stream(archive, name, parts[0], repeat, *parts[1:])
    return out.getvalue()


_SHEET = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b'<dimension ref="A1:XFD1048576"/><sheetData>%s</sheetData></worksheet>'
)


def far_cell_xlsx() -> bytes:
    """An .xlsx of three cells: A1, and XFD at rows 2 and 1,048,576 (pandas pads every
    row to the widest: 1.7e10 cells)."""
    rows = (
        b'<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row>'
        b'<row r="2"><c r="XFD2"><v>1</v></c></row>'
        b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    )
    return _xlsx("xl/worksheets/sheet1.xml", _SHEET % rows)


def shared_strings_xlsx(megabytes: int = 300) -> bytes:
    """An .xlsx whose sharedStrings.xml is ``megabytes`` of one string repeated."""
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    )
    one = b"<si><t>xxxx</t></si>"
    return _xlsx(
        "xl/sharedStrings.xml", head, b"</sst>", repeat=(one, megabytes * 1_000_000 // len(one))
    )


# name -> (builder, what the refusal says), for the tests that walk every bomb.
BOMBS = {
    "repeats.ods": (ods_repeats, "cells"),
    "lines.zip": (zip_of_lines, "once unpacked"),
    "lines.csv.gz": (gz_of_lines, "once unpacked"),
    "header.csv": (long_header, "first line"),
    "wide.csv": (wide_header, "columns"),
    "far.xlsx": (far_cell_xlsx, "cells"),
    "strings.xlsx": (shared_strings_xlsx, "shared strings"),
    "content.ods": (ods_xml_bomb, "MB of XML"),
    "deep.zip": (deep_zip, "another archive"),
}
