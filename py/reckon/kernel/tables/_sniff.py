"""Guessing a delimited file's layout: delimiter, header row, junk lines, number style."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, field

from reckon.kernel.tables._encoding import HEAD_BYTES, TextScan, read_head

__all__ = ["Layout", "find_header", "sample_records", "sniff_layout"]

_SAMPLE_RECORDS = 300
_HEADER_SEARCH = 50
_DELIMITERS = (",", ";", "\t", "|")
_PREFERRED = {".tsv": "\t", ".tab": "\t", ".psv": "|", ".ssv": ";"}
WHITESPACE = r"\s+"
_NA = {"", "na", "n/a", "nan", "null", "none", "-", "#n/a", "nil"}
_NUMBER = re.compile(r"^[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?%?$")
_COMMA_THOUSANDS = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")
_DOT_THOUSANDS = re.compile(r"^-?[1-9]\d{0,2}(\.\d{3})+(,\d+)?$")
_COMMA_DECIMAL = re.compile(r"^-?\d+,\d+$")
_DOT_DECIMAL = re.compile(r"^-?\d+\.\d+$")


@dataclass
class Layout:
    """How to read one delimited text file with ``pandas.read_csv``."""

    sep: str = ","
    skipinitialspace: bool = False
    skiprows: int = 0
    header: int | None = 0
    decimal: str = "."
    thousands: str | None = None
    # "2.830" is 2830: a ';' file whose dotted numbers all have three decimals. pandas
    # cannot read it so (its thousands= must differ from its decimal=); tidying does.
    dot_thousands: bool = False
    width: int = 1
    ragged: bool = False
    notes: list[str] = field(default_factory=list)

    def read_csv_options(self) -> dict[str, object]:
        """Only the options that differ from pandas' defaults, in a stable order."""
        options: dict[str, object] = {}
        if self.sep != ",":
            options["sep"] = self.sep
        if self.skiprows:
            options["skiprows"] = self.skiprows
        if self.header is None:
            options["header"] = None
        if self.skipinitialspace:
            options["skipinitialspace"] = True
        if self.decimal != ".":
            options["decimal"] = self.decimal
        if self.thousands:
            options["thousands"] = self.thousands
        return options


def sample_text(path: str, scan: TextScan) -> tuple[str, bool]:
    """The first complete lines of the file, decoded; and whether the file goes on."""
    head = read_head(path, HEAD_BYTES)
    text = head.decode(scan.encoding, errors="replace")
    more = len(head) < scan.size
    if more:
        cut = max(text.rfind("\n"), text.rfind("\r"))
        if cut > 0:
            text = text[: cut + 1]
    return text, more


def sample_records(text: str, sep: str, *, skipinitialspace: bool, more: bool) -> list[list[str]]:
    if sep == WHITESPACE:
        lines = io.StringIO(text, newline="").readlines()[:_SAMPLE_RECORDS]
        return [line.split() for line in lines]
    reader = csv.reader(
        io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=skipinitialspace
    )
    records: list[list[str]] = []
    try:
        for record in reader:
            records.append(record)
            if len(records) >= _SAMPLE_RECORDS:
                return records
    except csv.Error:
        pass
    if more and records:
        records.pop()  # may be cut in the middle of a quoted field
    return records


def _consistency(records: list[list[str]]) -> tuple[float, int]:
    widths = [len(r) for r in records if any(cell.strip() for cell in r)]
    if not widths:
        return 0.0, 1
    width, count = Counter(widths).most_common(1)[0]
    # Leading junk lines usually are narrower; judge the body, past the first few.
    body = widths[min(5, len(widths) // 3) :] or widths
    share = sum(1 for w in body if w == width) / len(body)
    # The whole sample breaks ties, e.g. "a;b / 1,5;2" where ',' fits only the body.
    overall = count / len(widths)
    return (0.7 * share + 0.3 * overall if width >= 2 else 0.0), width


def sniff_layout(path: str, scan: TextScan, *, extension: str) -> Layout:
    text, more = sample_text(path, scan)
    preferred = _PREFERRED.get(extension)
    candidates = sorted(_DELIMITERS, key=lambda d: d != preferred)
    best: tuple[float, str, bool, int] = (0.0, ",", False, 1)
    for sep in candidates:
        for skip in (False, True):
            records = sample_records(text, sep, skipinitialspace=skip, more=more)
            share, width = _consistency(records)
            if share > best[0] + 0.02:
                best = (share, sep, skip, width)
    share, sep, skip, width = best
    layout = Layout()
    if share < 0.5:
        records = sample_records(text, WHITESPACE, skipinitialspace=False, more=more)
        ws_share, ws_width = _consistency(records)
        if ws_share >= 0.9 and (extension == ".ssv" or extension not in (".csv",)):
            sep, skip, width, share = WHITESPACE, False, ws_width, ws_share
        elif share == 0.0:
            sep, width = ",", 1
    layout.sep, layout.skipinitialspace, layout.width = sep, skip, width
    if sep != ",":
        layout.notes.append(f"delimiter {_show(sep)}")
    if skip:
        layout.notes.append("spaces after delimiters ignored")
    records = sample_records(text, sep, skipinitialspace=skip, more=more)
    header = find_header(records, width)
    layout.skiprows = header
    if header:
        layout.notes.append(f"skipped {header} line(s) above the header row")
    if header < len(records) - 1 and (
        _all_values(records[header]) or _repeated_below(records, header)
    ):
        layout.header = None
        layout.notes.append("no header row; columns are numbered")
    body = records[header + 1 :]
    if any(len(r) > len(records[header]) for r in body if r) if header < len(records) else False:
        layout.ragged = True
    elif any(0 < len(r) < width for r in body):
        layout.notes.append("some rows have fewer fields than the header; missing values are NaN")
    _number_style(layout, body)
    return layout


def _show(sep: str) -> str:
    return {"\t": "tab", WHITESPACE: "whitespace", "|": "'|'"}.get(sep, repr(sep))


def find_header(records: list[list[str]], width: int) -> int:
    """Index of the first record that looks like a header (or the first row of data)."""
    need = max(2, (width + 1) // 2) if width >= 2 else 1
    first_filled: int | None = None
    for index, record in enumerate(records[:_HEADER_SEARCH]):
        filled = sum(1 for cell in record if str(cell).strip())
        if filled and first_filled is None:
            first_filled = index
        if filled >= need:
            return index
    return first_filled or 0


def _all_values(record: list[str]) -> bool:
    """True when the first row holds only numbers: data, not column names."""
    cells = [c.strip() for c in record]
    numbers = [c for c in cells if _NUMBER.match(c)]
    if len(numbers) >= 2 and all(c.isdigit() and 1800 <= int(c) <= 2100 for c in numbers):
        return len(set(numbers)) < len(numbers)  # distinct years are column names
    return bool(numbers) and all(_NUMBER.match(c) or c.lower() in _NA for c in cells)


def _repeated_below(records: list[list[str]], header: int) -> bool:
    """True when each filled cell of the first row stands again in its column below: a
    value, not a name (seen: a file of one column, every line 'foo', read with 'foo' as
    its name and a row short). A copy of the whole row, where files with a header each
    were joined, is a header again, except in a file of one column."""
    first = [c.strip() for c in records[header]]
    body = [[c.strip() for c in r] for r in records[header + 1 :] if r]
    if len(first) > 1:
        body = [r for r in body if r != first]
    filled = [(i, cell) for i, cell in enumerate(first) if cell]
    return bool(filled) and all(
        any(len(r) > i and r[i] == cell for r in body) for i, cell in filled
    )


def _number_style(layout: Layout, body: list[list[str]]) -> None:
    counts = Counter[str]()
    for record in body:
        for cell in record:
            value = cell.strip()
            if _COMMA_THOUSANDS.match(value):
                counts["comma_thousands"] += 1
            if _DOT_THOUSANDS.match(value):
                counts["dot_thousands"] += 1
            if _COMMA_DECIMAL.match(value) and not _COMMA_THOUSANDS.match(value):
                counts["comma_decimal"] += 1
            if _DOT_DECIMAL.match(value) and not _DOT_THOUSANDS.match(value):
                counts["dot_decimal"] += 1
    if layout.sep != "," and counts["comma_decimal"] and not counts["dot_decimal"]:
        layout.decimal = ","
        layout.thousands = "." if counts["dot_thousands"] else None
        layout.notes.append(
            "decimal comma" + (", '.' between thousands" if layout.thousands else "")
        )
    elif counts["comma_thousands"] and not counts["comma_decimal"]:
        layout.thousands = ","
        layout.notes.append("',' between thousands in numbers")
    elif layout.sep == ";" and counts["dot_thousands"] and not counts["dot_decimal"]:
        layout.dot_thousands = True
        layout.notes.append("'.' between thousands in numbers")
