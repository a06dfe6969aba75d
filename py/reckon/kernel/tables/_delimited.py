"""Reading delimited text (CSV, TSV, PSV, SSV, and text of unknown kind) with pandas."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any

from reckon.kernel.tables._encoding import TextScan, scan_text
from reckon.kernel.tables._numbers import NumberStyle
from reckon.kernel.tables._sniff import WHITESPACE, Layout, sniff_layout

__all__ = ["Loaded", "dedupe_names", "pandas_call", "read_delimited"]


@dataclass
class Loaded:
    """A table read from a file, with what we found out and how to repeat it."""

    frame: Any
    format: str
    notes: list[str]
    read_with: str
    rows: int | None = None
    estimated: bool = False
    sheets: list[dict[str, Any]] | None = None  # a workbook's sheets: name, rows, columns
    style: NumberStyle | None = None  # how the file writes numbers, for tidying


def pandas_call(function: str, path: str, options: dict[str, Any]) -> str:
    args = [repr(path)] + [f"{key}={_literal(value)}" for key, value in options.items()]
    return f"{function}({', '.join(args)})"


def _literal(value: Any) -> str:
    if value == WHITESPACE:
        return "r'\\s+'"
    return repr(value)


def read_delimited(
    path: str,
    *,
    extension: str,
    nrows: int | None = None,
    scan: TextScan | None = None,
    display_path: str | None = None,
    tidy: bool = False,
) -> Loaded:
    """Read a delimited text file, sniffing encoding and layout first. ``tidy``: read
    for ``_tidy``, which wants the blank lines (where notes below a table begin) and,
    in a file that groups thousands with a dot, the numbers as written."""
    import pandas as pd

    scan = scan or scan_text(path)
    if scan.size == 0:
        raise ValueError(f"{display_path or path} is empty (0 bytes); upload the file again.")
    layout = sniff_layout(path, scan, extension=extension)
    options: dict[str, Any] = dict(scan.pandas_options())
    options.update(layout.read_csv_options())
    notes = list(scan.notes) + layout.notes
    shown = display_path or path
    fmt = {"\t": "tsv", "|": "psv", ";": "csv", WHITESPACE: "ssv"}.get(layout.sep, "csv")
    style = NumberStyle(decimal=layout.decimal, dot_thousands=layout.dot_thousands)
    call = pandas_call("pd.read_csv", shown, options)
    if tidy:
        options["skip_blank_lines"] = False
        if layout.dot_thousands:
            options["dtype"] = str
    if not layout.ragged:
        try:
            frame = pd.read_csv(path, nrows=nrows, **options)
            return Loaded(frame, fmt, notes, call, style=style)
        except pd.errors.ParserError as exc:
            if "Expected" not in str(exc):
                raise ValueError(_parse_message(shown, exc)) from exc
        except pd.errors.EmptyDataError as exc:
            raise ValueError(f"{shown} holds no rows or columns that pandas can read.") from exc
    frame = _read_ragged(path, layout, options, nrows=nrows, notes=notes)
    return Loaded(frame, fmt, notes, f"read_table({shown!r})", style=style)


def _parse_message(path: str, exc: Exception) -> str:
    return (
        f"{path} could not be parsed as delimited text ({exc}). "
        "Look at its first lines with open(path).read(2000) and pass sep=, skiprows= "
        "or encoding= to pd.read_csv."
    )


def _read_ragged(
    path: str,
    layout: Layout,
    options: dict[str, Any],
    *,
    nrows: int | None,
    notes: list[str],
) -> Any:
    """Rows longer than the header: keep them, in extra columns named ``extra_N``."""
    import pandas as pd

    encoding = str(options.get("encoding", "utf-8"))
    widest, longer, header = _widths(path, layout, encoding)
    if layout.header is None:
        names: list[Any] = list(range(widest))
        skip = layout.skiprows
    else:
        names = _unique([c.strip() if layout.skipinitialspace else c for c in header])
        names = names + [f"extra_{n}" for n in range(1, widest - len(names) + 1)]
        skip = layout.skiprows + 1
    call = {k: v for k, v in options.items() if k not in ("skiprows", "header")}
    frame = pd.read_csv(path, header=None, names=names, skiprows=skip, nrows=nrows, **call)
    extra = widest - len(header) if layout.header is not None else 0
    notes.append(
        f"{longer} row(s) have more fields than the header"
        + (f"; the extra values are in columns extra_1..extra_{extra}" if extra else "")
    )
    return frame


def _widths(path: str, layout: Layout, encoding: str) -> tuple[int, int, list[str]]:
    with open(path, encoding=encoding, errors="replace", newline="") as file:
        if layout.sep == WHITESPACE:
            rows: Any = (line.split() for line in file)
        else:
            rows = csv.reader(file, delimiter=layout.sep, skipinitialspace=layout.skipinitialspace)
        header: list[str] = []
        widest = longer = 0
        for index, row in enumerate(rows):
            if index < layout.skiprows:
                continue
            if index == layout.skiprows:
                header = row
                widest = len(row)
                continue
            if len(row) > len(header):
                longer += 1
            widest = max(widest, len(row))
    return widest, longer, header


def _unique(names: list[str]) -> list[str]:
    return dedupe_names([name or f"Unnamed: {index}" for index, name in enumerate(names)])


def dedupe_names(names: list[Any]) -> list[Any]:
    """Names made unique as pandas makes them: a repeat gets ``.1``, ``.2``, ..."""
    seen: dict[Any, int] = {}
    unique: list[Any] = []
    for name in names:
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        unique.append(name)
    return unique
