"""What a failed cell's error leaves unsaid, said: the fix the error points at.

A small model could not fix in three tries errors whose fix is in the data: a
``KeyError`` for a column the file spells otherwise (``' WINDSPEED'``, a shortened
name, ``'year'`` of a table with only a date column), an ``idxmax`` called on the one
number a ``.sum()`` left, the answer's ``@name[value]`` written into the code. The
hint names the real columns closest to the one asked for, or what to do instead; it
reads the failing frames (the DataFrame pandas raised in, the cell's namespace),
never runs anything.
"""

from __future__ import annotations

import difflib
import linecache
import re
from types import TracebackType
from typing import Any

from reckon.kernel._column_hints import LISTED, asked_key, closest_column, folded, missing_column
from reckon.kernel._dtype_hints import accessor_hint, format_hint, text_number_hint
from reckon.kernel._frames import cell_frame, frame_locals
from reckon.kernel._pattern_note import unmatched_pattern
from reckon.kernel._read_hints import header_row_hint, nan_mask_hint, plain_read_hint, reader_hint
from reckon.kernel._selection_hints import selection_hint
from reckon.kernel._self_compare import self_comparison

__all__ = ["error_hint", "syntax_hint"]

_ANSWER_FORM = re.compile(r"@[A-Za-z_]\w*\[")
_SCALAR = re.compile(r"'(numpy\.\w+|float|int|str|bool)' object has no attribute '(\w+)'")
_DATE_METHODS = {"strftime", "month_name", "day_name", "year", "month", "day", "hour",
                 "date", "isoformat", "weekday", "dt", "to_pydatetime"}  # fmt: skip
# What numpy, pandas and Python say when a reduction or a lookup meets no rows.
_EMPTY = re.compile(
    r"empty sequence|iterable argument is empty|zero-size array|out-of-bounds|"
    r"out of bounds for axis \d+ with size 0"
)
# numpy's and pandas' words for NaN cast to int: a column with empty cells, or the
# rows a `.str.extract` did not match (seen: prices extracted from free text).
_NAN_INT = re.compile(r"cannot convert float NaN to integer|non-finite values \(NA or inf\)", re.I)
_NAN_INT_HINT = (
    "the values hold missing values (NaN), and an integer cannot be NaN: drop them first "
    "(.dropna()), or keep the numbers as floats (.astype(float))"
)
_FRAME_ATTRIBUTE = re.compile(r"'(DataFrame|Series)' object has no attribute '([^']+)'")


def syntax_hint(text: str) -> str:
    """A hint for a cell that does not compile, or ``""``."""
    if _ANSWER_FORM.search(text):
        return (
            "the @name[value] form is for your final answer, not for code: print the "
            "value with code, then write the form in your answer"
        )
    return ""


def error_hint(exc: BaseException) -> str:
    """A hint for ``exc`` raised by a cell, or ``""``."""
    try:
        if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
            key, frames = asked_key(exc.args[0]), _frames(exc.__traceback__)
            tb = exc.__traceback__
            said = header_row_hint(key, frames, tb) or plain_read_hint(key, frames, tb)
            return said or missing_column(key, frames)
        if said := nan_mask_hint(exc) or reader_hint(exc) or accessor_hint(exc):
            return said
        if said := text_number_hint(exc) or format_hint(exc) or selection_hint(exc):
            return said
        if isinstance(exc, AttributeError):
            return _attribute(str(exc), _frames(exc.__traceback__))
        if isinstance(exc, NameError) and getattr(exc, "name", None):
            return _undefined(str(exc.name), _cell_globals(exc.__traceback__))
        if isinstance(exc, ValueError | TypeError) and _NAN_INT.search(str(exc)):
            return _NAN_INT_HINT
        if isinstance(exc, ValueError | IndexError) and _EMPTY.search(str(exc)):
            return _empty(exc.__traceback__)
    except Exception:  # a hint is a courtesy; it never hides the error itself
        return ""
    return ""


def _frames(tb: TracebackType | None) -> list[Any]:
    """The DataFrames the failing calls ran on (pandas' own ``self``), innermost
    first, then those of the cell's namespace."""
    import pandas as pd

    found: list[Any] = []
    for owner in frame_locals(tb, lambda v: isinstance(v, pd.DataFrame), name="self"):
        if not any(owner is f for f in found):
            found.insert(0, owner)
    for value in cell_frame(tb)[2].values():
        if isinstance(value, pd.DataFrame) and not any(value is f for f in found):
            found.append(value)
    return found


def _cell_globals(tb: TracebackType | None) -> dict[str, Any]:
    # The outermost cell frame's, as it always was: every cell runs in the one namespace.
    return cell_frame(tb, innermost=False)[2]


def _accessor_of(name: str) -> str:
    """``dt`` or ``str`` when ``name`` is an attribute of that accessor, else ``""``."""
    import pandas as pd

    if name.startswith("_"):
        return ""
    if any(hasattr(kind, name) for kind in (pd.Timestamp, pd.Timedelta)):
        return "dt"
    return "str" if hasattr(str, name) else ""


def _attribute(message: str, frames: list[Any]) -> str:
    scalar = _SCALAR.search(message)
    if scalar and scalar.group(2) in _DATE_METHODS:
        # Seen: a month taken with .dt.month (or .dt.month_name()), then .strftime('%B')
        # called on the number (or the name) it gave, three times over.
        if scalar.group(1) == "str":
            return (
                f"this value is already text (a str, such as a name that .dt.month_name() "
                f"or .dt.day_name() gave), not a date: it has no .{scalar.group(2)}; use "
                f"the value as it is (drop the .{scalar.group(2)}(...) call)"
            )
        if "int" in scalar.group(1):
            return (
                f"this value is a plain number ({scalar.group(1)}), not a date: a part "
                f"taken with .dt.month, .dt.year or .dt.hour is already a number; name a "
                f"month number with calendar.month_name[value] (import calendar), or group "
                f"by .dt.month_name() / .dt.day_name() to get names"
            )
    if scalar and scalar.group(2) in _SERIES_METHODS:
        return (
            f"this value is a single {scalar.group(1)}, not a Series: an earlier step (such "
            f"as .sum(), .max() or .mean()) already reduced the data to one number; call "
            f".{scalar.group(2)}() on the Series before reducing it"
        )
    named = _FRAME_ATTRIBUTE.search(message)
    spelt = {folded(c) for f in frames for c in f.columns if isinstance(c, str)}
    attribute = named.group(2) if named and named.group(1) == "Series" else ""
    if attribute and folded(attribute) not in spelt and (accessor := _accessor_of(attribute)):
        # Seen: pd.to_timedelta(df['wait']).total_seconds(), then the same, three times
        # over, told there was no column 'total_seconds'.
        return (
            f".{attribute} is a method of one value, not of a Series: on a column of "
            f"them, use .{accessor}.{attribute} (for example "
            f"pd.to_timedelta(df['time']).dt.total_seconds() or df['name'].str.lower())"
        )
    if named:
        for frame in frames:
            columns = [c for c in frame.columns if isinstance(c, str)]
            if columns and named.group(2) not in _SERIES_METHODS:
                return closest_column(named.group(2), columns, frame)
    return ""


_SERIES_METHODS = {
    "idxmax", "idxmin", "sort_values", "nlargest", "nsmallest", "groupby", "value_counts",
    "mean", "sum", "max", "min", "count", "unique", "nunique", "head", "tail", "iloc",
    "loc", "index", "values", "plot", "round", "dt", "str", "apply", "median", "std",
}  # fmt: skip


def _undefined(name: str, namespace: dict[str, Any]) -> str:
    import pandas as pd

    tables = [k for k, v in namespace.items() if isinstance(v, pd.DataFrame)]
    if not tables:
        return ""
    loaded = f"the tables loaded are: {', '.join(tables[:LISTED])}"
    close = difflib.get_close_matches(name, tables, n=1, cutoff=0.5)
    if close:
        return f"did you mean {close[0]!r}? {loaded}"
    # Seen: a cell that printed mean_with_outliers and computed only mean_without_outliers;
    # told only the tables, the model explained the error in its answer instead.
    return f"no line assigns {name}: compute it first ({name} = ...), then use it; {loaded}"


def _empty(tb: TracebackType | None) -> str:
    """Seen: a year filtered as a row value when the years were columns, then
    ``idxmax`` of what was left; the model patched the line that raised, three times."""
    import pandas as pd

    filename, _, namespace = cell_frame(tb, innermost=False)
    code = "".join(linecache.getlines(filename))
    why = [self_comparison(code, namespace), unmatched_pattern(code, namespace)]

    empty = [
        name
        for name, value in namespace.items()
        if not name.startswith("_") and isinstance(value, pd.DataFrame | pd.Series)
        and len(value) == 0
    ]  # fmt: skip
    named = f" ({', '.join(empty[:5])} {'has' if len(empty) == 1 else 'have'} 0 rows)"
    return (
        f"the data it ran on is empty{named if empty else ''}: a filter or group before it "
        "selected no rows. Print len() after each filter and the values it compares with "
        "(e.g. df[column].unique()[:10]); the value may be spelt or typed otherwise, or be "
        "a column name rather than a value"
    ) + "".join(f"; {said}" for said in why if said)
