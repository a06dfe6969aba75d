"""What a ``KeyError`` for a column leaves unsaid (``_hints``): the real columns
closest to the one asked for, a row label asked for as a column, a date part asked of
a table with only a date column, what the text columns hold, and which sheet a table
came from. It reads the failing frames, never runs anything.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any

__all__ = ["LISTED", "asked_key", "closest_column", "folded", "missing_column"]

LISTED = 30  # column or table names listed at most
_SAMPLED = 3  # text columns shown with their first values
_SAMPLE_CHARS = 30
_DATE_PARTS = {
    "year": "year", "years": "year", "month": "month", "months": "month", "day": "day",
    "days": "day", "hour": "hour", "hours": "hour", "weekday": "dayofweek",
    "dayofweek": "dayofweek", "date": "date", "quarter": "quarter", "minute": "minute",
}  # fmt: skip
_SHEET_KEYS = {"sheet", "sheetname", "sheets"}


# How pandas words a KeyError for names asked in a list or of a groupby, around the
# names themselves: "Column not found: X" (a groupby's column), "Columns not found:
# 'X'", "['X'] not in index", "None of [Index(['X', 'Y'], ...)] are in the [columns]".
# Seen: the hint said "there is no column 'Column not found: Aantal inwoners'".
_GROUPBY_KEY = re.compile(r"Column not found: (.+)", re.S)
LISTED_KEYS = re.compile(r"^(?:Columns not found: |\[|None of \[Index\(\[)")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def asked_key(message: str) -> str:
    """The column name a pandas ``KeyError`` message is about (the first, of several)."""
    single = _GROUPBY_KEY.fullmatch(message)
    if single:
        return single.group(1)
    if LISTED_KEYS.match(message):
        quoted = _QUOTED.search(message)
        if quoted:
            try:
                name = ast.literal_eval(quoted.group(0))
            except (SyntaxError, ValueError):
                return message
            return name if isinstance(name, str) else message
    return message


def folded(name: str) -> str:
    """``name`` without case, spaces or punctuation: how a person may misremember it."""
    return re.sub(r"[\W_]+", "", name).lower()


def missing_column(key: str, frames: list[Any]) -> str:
    for frame in frames:
        columns = [c for c in frame.columns if isinstance(c, str)]
        if not columns or key in frame.columns:
            continue
        said = closest_column(key, columns, frame)
        if len(frame) == 0:
            # Seen: a filter that caught nothing, then a made-up label column asked of
            # it; what the labels are is read from the table the filter was taken from.
            same = [f for f in frames if len(f) and list(f.columns) == list(frame.columns)]
            full = same[0] if same else None
            said += (_text_columns(full, key) if full is not None else "") + (
                "; note: the table it was asked of has 0 rows (a filter that matched none)"
            )
        return said
    return ""


def closest_column(key: str, columns: list[str], frame: Any) -> str:
    import pandas as pd

    same = [c for c in columns if folded(c) == folded(key)]
    if same:
        return f"there is no column {key!r}; the table's column is spelled {same[0]!r}"
    if folded(key) in _SHEET_KEYS:
        # Seen: each sheet read in a list, joined, then grouped by a 'Sheet' column
        # that no read made, four times.
        return (
            f"there is no column {key!r}: a table read from one sheet does not say "
            "which sheet it came from. read_table(path, sheet=None) reads every sheet of "
            "a workbook into one table with a 'sheet' column (or add it to each sheet "
            "read: read_table(path, sheet=s).assign(sheet=s))"
        )
    holder = _holding_column(key, frame)
    if holder is not None:
        row = f"df[df[{holder!r}] == {key!r}]"
        numeric = sum(frame[c].dtype.kind in "iuf" for c in frame.columns if c != holder)
        if (frame[holder] == key).sum() == 1 and numeric >= max(2, (len(frame.columns) - 1) / 2):
            # Seen: told to select the row, the model asked it for the row as a column.
            return (
                f"{key!r} is not a column but a row, a value of the column {holder!r}: to "
                f"use such rows as columns, flip the table first: t = "
                f"df.set_index({holder!r}).T, then t[{key!r}] (and each other row of "
                f"{holder!r} the same way); or select the row itself with {row}"
            )
        return (
            f"{key!r} is not a column but a value of the column {holder!r}: select its row "
            f"with {row} (or df.set_index({holder!r}).loc[{key!r}])"
        )
    part = _DATE_PARTS.get(key.strip().lower())
    dates = [c for c in columns if pd.api.types.is_datetime64_any_dtype(frame[c])]
    if part and dates:
        return (
            f"there is no column {key!r}; take it from the date column {dates[0]!r}: "
            f"df[{dates[0]!r}].dt.{part}"
        )
    close = difflib.get_close_matches(key, columns, n=3, cutoff=0.6)
    close += [c for c in columns if folded(key) in folded(c) and c not in close][:3]
    listed = ", ".join(repr(c) for c in columns[:LISTED])
    listed += ", …" if len(columns) > LISTED else ""
    if close:
        meant = " or ".join(repr(c) for c in close[:3])
        return f"there is no column {key!r}; did you mean {meant}? the columns are: {listed}"
    return f"there is no column {key!r}; the columns are: {listed}{_text_columns(frame, key)}"


def _text_columns(frame: Any, key: str) -> str:
    """What the text columns hold, for a name asked of no column: seen, 'Sub_Group'
    asked three times of a table whose sub-groups sat under the header 'Year'. With one
    text column, the hint says to use it: told only what it holds, the model guessed
    'SubGroup' next."""
    shown: list[str] = []
    names: list[str] = []
    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind != "O":
            continue
        first = [str(v)[:_SAMPLE_CHARS] for v in values.head(1000).dropna().unique()[:2]]
        if first:
            names.append(column)
            shown.append(f"{column!r} holds {', '.join(repr(v) for v in first)}, …")
        if len(shown) == _SAMPLED:
            break
    if len(shown) == 1:
        return f"; the one text column: {shown[0]}; if {key!r} means these, use [{names[0]!r}]"
    return f"; the text columns: {'; '.join(shown)}" if shown else ""


def _holding_column(key: str, frame: Any) -> str | None:
    """The text column that holds ``key`` as a value (a row label such as 'Aantal
    inwoners' asked for as a column), if one does."""
    for column in frame.columns:
        values = frame[column]
        if isinstance(column, str) and values.dtype.kind == "O" and (values == key).any():
            return column
    return None
