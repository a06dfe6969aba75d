"""A note for a ``run_sql`` query whose ``WHERE column = 'text'`` matched no row.

A query that selects nothing raises nothing: ``SUM`` of no rows is NULL (NaN in the
frame), ``COUNT`` is 0. Seen (twenty-four questions not written for the agent):
"the sum of 'Number of Offences' on the sheet '2010-11'" of large.ods ran
``SELECT SUM("Number of Offences") FROM large WHERE "Financial Year" = '2010-11'``.
The column is written '2007/08', and the SQL table is the workbook's first sheet
only; the result was NaN, and the 1.5B model answered with a number it made up. So
when a result holds nothing, each equality that no row meets is said, with values the
column does hold (those spelt like the text first), and a text that names a sheet of
the workbook says how to read that sheet. Only run when a result is empty: it reads
the table again.
"""

from __future__ import annotations

import difflib
import os
import re
from typing import Any

from reckon.kernel._column_hints import folded
from reckon.kernel._sql_database import _Database, _table_columns
from reckon.kernel._sql_engines import SqlError, _ident, _string

__all__ = ["caught_nothing", "no_match_note"]

# column = 'text', the column bare or in double quotes; the text as SQL writes it.
_EQUALS = re.compile(r'(?:"((?:[^"]|"")+)"|\b([A-Za-z_]\w*))\s*=\s*\'((?:[^\']|\'\')*)\'')
_SHOWN = 5
# Distinct values read to find the ones spelt like the text: enough for a code or a
# category column, not a scan of an identifier column's every value.
_READ = 500
_SHEETS = (".xlsx", ".xlsm", ".xls", ".ods")


def caught_nothing(frame: Any) -> bool:
    """A result with no rows, or one row of nothing but NULL and zeros (an aggregate
    over no rows)."""
    if not len(frame.columns):
        return False
    if not len(frame):
        return True
    if len(frame) > 1:
        return False
    row = frame.iloc[0]
    return all(_is_nothing(value) for value in row)


def _is_nothing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and value != value):
        return True
    try:
        import pandas as pd

        if pd.isna(value):
            return True
    except (TypeError, ValueError):
        return False
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


def no_match_note(db: _Database, query: str, tables: dict[str, str]) -> str:
    """What ``query``'s equalities against ``tables`` (name -> file) match nothing, said;
    ``""`` when each matches some row, or none can be checked."""
    said = []
    for match in _EQUALS.finditer(query):
        quoted, bare, text = match.groups()
        column = quoted.replace('""', '"') if quoted else bare
        text = text.replace("''", "'")
        for name, path in tables.items():
            found = _column_named(db, name, path, column)
            if found is None:
                continue
            note = _unmatched(db, name, path, found, text, match.group(0))
            if note:
                said.append(note)
            break
    return " ".join(said)


def _column_named(db: _Database, name: str, path: str, column: str) -> str | None:
    try:
        columns = _table_columns(db, name, path)
    except (SqlError, ValueError):
        return None
    if column in columns:
        return column
    # DuckDB folds a bare name's case.
    folded = [c for c in columns if c.lower() == column.lower()]
    return folded[0] if len(folded) == 1 else None


def _unmatched(db: _Database, name: str, path: str, column: str, text: str, said: str) -> str:
    where = f"FROM {_ident(name)} WHERE {_ident(column)} = {_string(text)}"
    try:
        if int(db.engine.query(f"SELECT COUNT(*) {where}").iloc[0, 0]):
            return ""
        held = db.engine.query(
            f"SELECT DISTINCT CAST({_ident(column)} AS VARCHAR) AS v FROM {_ident(name)} "
            f"WHERE {_ident(column)} IS NOT NULL LIMIT {_READ}"
        )
    except (SqlError, ValueError, TypeError):
        return ""
    values = [str(v) for v in held.iloc[:, 0]]
    note = f"{said} matches no row of {name}"
    if values:
        shown = ", ".join(repr(v) for v in _spelt_like(text, values)[:_SHOWN])
        note += f"; {column!r} holds values such as {shown}"
    sheet = _sheet_named(path, text)
    if sheet:
        note += (
            f". {text!r} is a sheet of {os.path.basename(path)}, and the SQL table {name} "
            f"is its first sheet only: read_table({path!r}, sheet={sheet!r}) reads that one"
        )
    return note + "."


def _spelt_like(text: str, values: list[str]) -> list[str]:
    """``values`` with those spelt like ``text`` first (case, spaces and punctuation
    aside, then close), the rest in their order."""
    same = [v for v in values if folded(v) == folded(text)]
    close = difflib.get_close_matches(text, values, n=_SHOWN, cutoff=0.75)
    first = list(dict.fromkeys([*same, *close]))
    return first + [v for v in values if v not in first]


def _sheet_named(path: str, text: str) -> str | None:
    if not path.lower().endswith(_SHEETS):
        return None
    from reckon.kernel.tables._workbook import open_workbook

    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    try:
        with open_workbook(path, os.path.basename(path), fmt) as book:
            names = book.names
    except Exception:  # a note is a courtesy: a file that will not open says nothing
        return None
    if len(names) < 2 or names[0].strip().lower() == text.strip().lower():
        return None
    return next((n for n in names if n.strip().lower() == text.strip().lower()), None)
