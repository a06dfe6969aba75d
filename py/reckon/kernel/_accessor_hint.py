"""A hint for ``.str`` used on a column that holds no text.

Reckon reads a column of dates written as text as dates when it loads a table, so a
small model's ``df['UpdatedOn'].str.contains('2012')`` meets datetimes and pandas says
only "Can only use .str accessor with string values!". Seen on a question not written
for the agent: the same cell twice, then no answer. The hint names the column, what it
holds and the accessor that works on it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["accessor_hint"]

_MESSAGE = "Can only use .str accessor with string values"


def accessor_hint(exc: BaseException) -> str:
    """For ``.str`` on dates or numbers: what the column holds and what to use, or ``""``."""
    import pandas as pd

    if not isinstance(exc, AttributeError) or _MESSAGE not in str(exc):
        return ""
    series: Any = None
    tb = exc.__traceback__
    while tb is not None:  # the innermost Series: the one .str was asked of
        for value in tb.tb_frame.f_locals.values():
            if isinstance(value, pd.Series):
                series = value
        tb = tb.tb_next
    if series is None:
        return ""
    column = f"df[{series.name!r}]" if isinstance(series.name, str) else "the column"
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
