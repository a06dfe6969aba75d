"""A table tidied the way an analyst tidies it before the first question.

A reader hands over what the file says; people ask about what it means. So after a
text table or a sheet is read: a header spread over several lines becomes one name
per column, notes and sources below the table and columns with neither a name nor a
value are left out, names and text values lose the padding around them, numbers
written with separators, currency or percent signs and missing markers (``****``,
``.``, ``n/a``) become numbers, and dates become dates. Each change is said in the
notes, so the person and the model know what was done. A column changes type only
when every value reads: no text becomes ``NaN``.
"""

from __future__ import annotations

import functools
import numbers
import re
from typing import Any

from reckon.kernel.tables._dates import column_dates
from reckon.kernel.tables._delimited import dedupe_names
from reckon.kernel.tables._numbers import NumberStyle, column_numbers, is_marker, parse_number

__all__ = ["tidy_frame"]

_SPACE_RUN = re.compile(r"\s+")
_HEADER_ROWS = 8  # header lines looked for below the header row
_WIDE = 4  # rows of a table before a block under it can stand apart
_SAMPLE = 200
_UNNAMED = re.compile(r"^Unnamed: \d+$")
_NOTES_HEAD = re.compile(r"\s*(?:notes?|sources?|footnotes?)\s*(?::|$)", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3}")  # three letters in a row: a word, not a code


def tidy_frame(frame: Any, *, style: NumberStyle) -> tuple[Any, list[str]]:
    """``frame`` tidied, and a note for each kind of change (none: nothing changed)."""
    notes: list[str] = []
    frame = frame.copy()
    names = dedupe_names([_clean_name(c) for c in frame.columns])
    if names != list(frame.columns):
        notes.append("spaces and line breaks in column names made single spaces")
    frame.columns = names
    # Float only because of a note or header line with no numbers: int again below.
    floats = {c for c, t in frame.dtypes.items() if t == "float64" and frame[c].isna().any()}
    padded = []  # by position: the header's lines may rename the columns
    for position, column in enumerate(frame.columns):
        if frame[column].dtype.kind == "O":
            cleaned, changed = _clean_texts(frame[column])
            if changed:
                frame[column] = cleaned
                padded.append(position)
    frame = _merge_header_rows(frame, style, notes)
    frame = _drop_footer(frame, style, notes)
    frame = _drop_other_block(frame, style, notes)
    empty = frame.isna().all(axis=1)
    if empty.any() and len(frame.columns) > 1:
        frame = frame[~empty].reset_index(drop=True)
        notes.append(f"{int(empty.sum())} empty line(s) left out")
    if padded:
        names = [frame.columns[p] for p in padded]
        notes.append(f"spaces around the text values of {_listed(names)} removed")
    # A trailing delimiter on every line makes a column with no name and no value.
    blank = [c for c in frame.columns if _UNNAMED.match(str(c)) and frame[c].isna().all()]
    if blank and len(frame) and len(blank) < len(frame.columns):
        frame = frame.drop(columns=blank)
        notes.append(f"{len(blank)} empty column(s) without a name left out")
    _convert(frame, style, notes)
    for column in floats & set(frame.columns):
        values = frame[column]
        if values.dtype == "float64" and values.notna().all() and (values % 1 == 0).all():
            frame[column] = values.astype("int64")
    return frame, notes


def _clean_name(name: Any) -> Any:
    if not isinstance(name, str):
        return name
    return _SPACE_RUN.sub(" ", name).strip() or name


def _object_columns(frame: Any) -> list[Any]:
    return [c for c, dtype in frame.dtypes.items() if dtype.kind == "O"]


def _clean_texts(series: Any) -> tuple[Any, bool]:
    """Strings without the spaces (no-break ones too) and line breaks around them, a
    string of only spaces missing; and whether anything changed. Inside, a value
    stays as written (a line break in an address is the person's)."""
    import pandas as pd

    # Each distinct value once: a million rows hold a few thousand names.
    stripped = {
        value: value.strip() or None
        for value in pd.unique(series.to_numpy())
        if isinstance(value, str) and value != value.strip()
    }
    if not stripped:
        return series, False
    mapped = series.map(stripped)
    return series.where(~series.isin(list(stripped)), mapped), True


def _kind(value: Any, style: NumberStyle) -> str:
    """``empty``, ``number``, ``marker`` or ``text``."""
    if value is None or (isinstance(value, float) and value != value):
        return "empty"
    if isinstance(value, str):
        if parse_number(value, style) is not None:
            return "number"
        return "marker" if is_marker(value) else "text"
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np_bool()):
        return "number"  # numpy's integers are Real but not int
    return "text"


@functools.cache
def np_bool() -> type:
    import numpy as np

    return np.bool_


def _numeric_columns(frame: Any, style: NumberStyle, start: int) -> set[Any]:
    """Columns whose values from row ``start`` on are mostly numbers."""
    numeric = set()
    for column, dtype in frame.dtypes.items():
        if dtype.kind in "iuf":
            numeric.add(column)
            continue
        if dtype.kind != "O":
            continue
        kinds = [_kind(v, style) for v in frame[column].iloc[start : start + _SAMPLE]]
        filled = [k for k in kinds if k in ("number", "text")]
        if filled and filled.count("number") >= 0.8 * len(filled):
            numeric.add(column)
    return numeric


def _merge_header_rows(frame: Any, style: NumberStyle, notes: list[str]) -> Any:
    """Lines under the header with words and no numbers, over columns that hold numbers
    below them, are more of the header (province names under a line of "provincie")."""
    header = 0
    while header < min(_HEADER_ROWS, len(frame) - 1):
        kinds = {c: _kind(v, style) for c, v in frame.iloc[header].items()}
        if "number" in kinds.values():
            break
        numeric = _numeric_columns(frame, style, header + 1)
        if not any(kinds[c] == "text" for c in numeric):
            break
        header += 1
    if not header:
        return frame
    block = frame.iloc[:header]
    parts = []
    for column in frame.columns:
        named = [] if _UNNAMED.match(str(column)) else [str(column)]
        parts.append(named + [_clean_name(v) for v in block[column] if isinstance(v, str) and v])
    columns = list(frame.columns)
    names: list[Any] = [_last_worded(p) if p else c for p, c in zip(parts, columns, strict=True)]
    named = [n for n in names if not _UNNAMED.match(str(n))]
    if len(set(named)) < len(named):
        names = [" ".join(p) if p else c for p, c in zip(parts, columns, strict=True)]
    frame = frame.iloc[header:].reset_index(drop=True)
    frame.columns = dedupe_names(names)
    notes.append(
        f"the header spans {header + 1} lines; each column is named by its last line with "
        "a word (codes, units and formulas like '(A - C)' aside)"
    )
    return frame


def _last_worded(parts: list[str]) -> str:
    """A report's header often ends in a line of column letters, units or formulas
    ('(A - C) OR (F + I)', '(kg)'); the name a person reads is the line above it."""
    worded = [part for part in parts if _WORD.search(part)]
    return worded[-1] if worded else parts[-1]


def _drop_footer(frame: Any, style: NumberStyle, notes: list[str]) -> Any:
    """Rows from the first blank line below the last row of numbers (sources, notes,
    footnotes) go; so do blank rows at the end. A line of only markers (``****``) is
    blank: pandas skips truly empty lines, and such a line is how files rule one off."""
    numeric = _numeric_columns(frame, style, 0)
    if not numeric or frame.empty:
        return frame
    last = len(frame) - 1
    columns = [c for c in frame.columns if c in numeric]
    while last >= 0 and not any(_kind(frame.iloc[last][c], style) == "number" for c in columns):
        last -= 1
    after = frame.iloc[last + 1 :]
    empty = after.isna().all(axis=1).to_numpy()
    ruled = [all(_kind(v, style) in ("empty", "marker") for v in r) for _, r in after.iterrows()]
    blank = (empty | ruled).nonzero()[0] if len(after) else []
    if last < 0 or not len(blank):
        return frame
    dropped = after.iloc[int(blank[0]) :]
    worded = int((~dropped.isna().all(axis=1)).sum())
    if worded:
        notes.append(f"{worded} line(s) of notes below the table left out")
    return frame.iloc[: last + 1 + int(blank[0])].copy()


def _drop_other_block(frame: Any, style: NumberStyle, notes: list[str]) -> Any:
    """A block below a blank line that starts with a line of words and leaves empty a
    column nearly every row of the table fills is a table of its own (a report sheet's
    percentages under its totals): left out and said, or the table's columns would
    hold its text and their numbers would no longer add up. A block headed "Notes:" or
    "Source:" is the table's notes, in a table of text too (a workbook's list of data
    items, whose notes were counted as three more). A section of the same table
    (numbers from its first line, or every column used) stays."""
    present = frame.notna().to_numpy()
    for blank in (~present.any(axis=1)).nonzero()[0]:
        above, below = present[:blank], present[blank:]
        rows = below[below.any(axis=1)]
        if len(above) < _WIDE or not len(rows):
            continue
        full = above.mean(axis=0) >= 0.9
        start = blank + int(below.any(axis=1).argmax())
        first = next(v for v in frame.iloc[start] if v == v)
        if _NOTES_HEAD.match(str(first)):
            notes.append(f"{len(rows)} line(s) of notes below the table left out")
            return frame.iloc[:blank]
        worded = all(_kind(v, style) != "number" for v in frame.iloc[start])
        if worded and (full & ~rows.any(axis=0)).any():
            notes.append(
                f"{len(rows)} line(s) below a blank line left out: a table of their own "
                f"(from {str(first)[:60]!r}); read the file with header=None to see them"
            )
            return frame.iloc[:blank]
    return frame


def _convert(frame: Any, style: NumberStyle, notes: list[str]) -> None:
    markers: dict[str, int] = {}
    found: dict[str, list[Any]] = {k: [] for k in ("numbers", "grouped", "%", "cur", "dates")}
    dayfirst = False
    for column in _object_columns(frame):
        series = frame[column]
        parsed = column_numbers(series, style) if _may_be_numbers(series, style) else None
        if parsed is not None:
            values = parsed.values
            if values.notna().all() and (values % 1 == 0).all():
                values = values.astype("int64")
            frame[column] = values
            found["numbers"].append(column)
            for text, count in parsed.markers.items():
                markers[text] = markers.get(text, 0) + count
            for key, flag in (("grouped", parsed.grouped), ("%", parsed.percent),
                              ("cur", parsed.currency)):  # fmt: skip
                if flag:
                    found[key].append(column)
            continue
        dates = column_dates(series)
        if dates is not None:
            frame[column] = dates.values
            found["dates"].append(column)
            dayfirst = dayfirst or dates.dayfirst
    _say(found, markers, dayfirst, notes)


def _may_be_numbers(series: Any, style: NumberStyle) -> bool:
    """A quick look at the first values: free text fails here, not after a whole pass."""
    return all(_kind(value, style) != "text" for value in series.dropna().head(_SAMPLE))


def _say(found: dict[str, list[Any]], markers: dict[str, int], dayfirst: bool,
         notes: list[str]) -> None:  # fmt: skip
    if found["numbers"]:
        notes.append(f"read as numbers: {_listed(found['numbers'])}")
    if markers:
        shown = ", ".join(repr(t) for t in sorted(markers, key=lambda t: -markers[t])[:4])
        notes.append(f"{shown} read as missing ({sum(markers.values())} cells)")
    if found["grouped"]:
        notes.append(f"thousands separators dropped in {_listed(found['grouped'])}")
    if found["%"]:
        notes.append(f"'%' dropped in {_listed(found['%'])} (the values are percentages)")
    if found["cur"]:
        notes.append(f"currency signs dropped in {_listed(found['cur'])}")
    if found["dates"]:
        order = " (day before month)" if dayfirst else ""
        notes.append(f"dates parsed in {_listed(found['dates'])}{order}")


def _listed(columns: list[Any], limit: int = 6) -> str:
    shown = ", ".join(repr(str(c)) for c in columns[:limit])
    return shown + (f" and {len(columns) - limit} more" if len(columns) > limit else "")
