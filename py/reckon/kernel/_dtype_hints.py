"""Hints for a column used as what it does not hold: text methods on dates or numbers,
date methods on a numpy date, arithmetic on text, many values formatted as one number.

Reckon reads a column of dates written as text as dates when it loads a table, so a
small model's ``df['UpdatedOn'].str.contains('2012')`` meets datetimes and pandas says
only "Can only use .str accessor with string values!" (seen on a question not written
for the agent: the same cell twice, then no answer). The other way round, a column of
numbers with some text among them (a footnote, "n/a", a header row read as data) is
object-typed, and ``.sum()`` says "can only concatenate str (not "int") to str". Each
hint names the column, what it holds and what works on it.
"""

from __future__ import annotations

import ast
import linecache
import re
from types import TracebackType
from typing import Any

from reckon.kernel._frames import cell_frame, frame_locals

__all__ = ["accessor_hint", "format_hint", "text_number_hint"]

_ACCESSOR = "Can only use .str accessor with string values"
_NUMPY_DATE = re.compile(r"'(numpy\.datetime64)' object has no attribute '(\w+)'")
# What Python, numpy and pandas say when arithmetic or a comparison meets text.
_TEXT_NUMBER = re.compile(
    r"can only concatenate str|unsupported operand type\(s\) for .*'str'|"
    r"not supported between instances of '(?:str|int|float)' and '(?:str|int|float)'|"
    r"Could not convert string .* to numeric|agg function failed .*dtype->object|"
    r"can't multiply sequence by non-int|could not convert string to float"
)
_SHOWN = 3
_FORMAT = re.compile(r"unsupported format string passed to (Series|DataFrame)\.__format__")


def accessor_hint(exc: BaseException) -> str:
    """For ``.str`` on dates or numbers: what the column holds and what to use; for a
    date method on a numpy date (what ``.values[0]`` gives): how to get a pandas one;
    else ``""``."""
    import pandas as pd

    if isinstance(exc, AttributeError) and (numpy := _NUMPY_DATE.search(str(exc))):
        # Seen on a question not written for the agent: .values[0] of a date column,
        # then .strftime('%Y-%m-%d') on it, failing twice until the answer gave up.
        return (
            f"this value is a {numpy.group(1)} (what .values[0] gives), which has no "
            f".{numpy.group(2)}: take the value with .iloc[0] instead (a pandas Timestamp), "
            f"or make it one with pd.Timestamp(value); pd.Timestamp(value).strftime('%Y-%m-%d') "
            "gives the date as text"
        )
    if not isinstance(exc, AttributeError) or _ACCESSOR not in str(exc):
        return ""
    series = _innermost_series(exc.__traceback__)
    if series is None:
        return ""
    column = _column(series, exc.__traceback__)
    if pd.api.types.is_datetime64_any_dtype(series):
        return (
            f"{column} holds dates and times (read as dates when the table loaded), not "
            f"text: use .dt instead of .str ({column}.dt.year, .dt.month or .dt.date give "
            f"its parts), or {column}.dt.strftime('%Y-%m-%d') for the dates as text"
        )
    if pd.api.types.is_numeric_dtype(series):
        return (
            f"{column} holds numbers, not text: compare the numbers themselves (==, >, "
            f".between(...)), or make them text first with {column}.astype(str)"
        )
    return ""


def text_number_hint(exc: BaseException) -> str:
    """For arithmetic on a column of text (or numbers with text among them): the text
    values it holds and how to make them numbers, or ``""``."""
    import pandas as pd

    if not isinstance(exc, TypeError | ValueError) or not _TEXT_NUMBER.search(str(exc)):
        return ""
    series = _innermost_series(exc.__traceback__, text=True)
    if series is None:
        return ""
    texts = [v for v in series.dropna().unique() if isinstance(v, str)]
    numbers = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce")
    shown = [repr(v) for v, n in zip(texts, numbers, strict=True) if pd.isna(n)][:_SHOWN]
    column = _column(series, exc.__traceback__)
    if not shown:  # numbers written as text: each converts
        return f"{column} holds numbers as text: make them numbers first with " + (
            f"pd.to_numeric({column})"
        )
    return (
        f"{column} holds text where numbers were expected ({', '.join(shown)}): make it "
        f"numbers first with pd.to_numeric({column}, errors='coerce') (text that is no "
        f"number becomes NaN), or select the rows that hold numbers"
    )


def format_hint(exc: BaseException) -> str:
    """For a Series or a table formatted as one number (``f"{share:.2f}"``, seen after
    the model dropped the ``idxmax`` that picked one row): which name holds many values
    and how to pick one, or ``""``."""
    import pandas as pd

    found = _FORMAT.search(str(exc)) if isinstance(exc, TypeError) else None
    if found is None:
        return ""
    filename, line, namespace = cell_frame(exc.__traceback__)
    try:
        tree = ast.parse(linecache.getline(filename, line).strip())
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.FormattedValue) else None
        many = namespace.get(value.id) if isinstance(value, ast.Name) else None
        if isinstance(value, ast.Name) and isinstance(many, pd.Series | pd.DataFrame):
            name = value.id
            return (
                f"{name} is a {found.group(1)} of {len(many)} values, and a format such "
                f"as :.2f takes one number: pick the one first ({name}.max(), "
                f"{name}.iloc[0], {name}.loc[label]), or round them all ({name}.round(2))"
            )
    return (
        f"a {found.group(1)} (many values) was given to a format such as :.2f, which takes "
        "one number: pick the one first (.max(), .iloc[0], .loc[label])"
    )


def _innermost_series(tb: TracebackType | None, *, text: bool = False) -> Any:
    """The innermost Series among the traceback's frames (of object dtype: ``text``),
    a named one before any other."""
    import pandas as pd

    found = frame_locals(
        tb, lambda v: isinstance(v, pd.Series) and (not text or v.dtype == object), groupby=True
    )
    # A named one first: pandas' own inner Series (a groupby's) have no name.
    named = [series for series in found if isinstance(series.name, str)]
    return (named or found or [None])[-1]


def _column(series: Any, tb: TracebackType | None) -> str:
    """How the cell names ``series``: a table's column (``bonds['total']``), a variable,
    or the column by its name."""
    import pandas as pd

    _, _, namespace = cell_frame(tb)
    name = series.name
    for variable, value in namespace.items():
        if variable.startswith("_"):
            continue
        if value is series:
            return variable
        table = isinstance(value, pd.DataFrame) and isinstance(name, str)
        if table and name in value.columns and value[name].dtype == series.dtype:
            return f"{variable}[{name!r}]"
    return f"the column {name!r}" if isinstance(name, str) else "the column"
