"""Hints for rows and columns asked of a table's ``[]`` in one go.

A table's ``[]`` takes one column name, a list of names or a mask of rows; a small model
writes the two of ``.loc`` into it. Seen on a question not written for the agent:
``df[df['SERIES'] != 'GRAND TOTALS', 'BONDS OUTSTANDING']``, and pandas answered with
the whole mask as its message (``InvalidIndexError: (0 True 1 True …)``), twice, then
the model went back to older code. ``df['a', 'b']`` for two columns is the same slip.
"""

from __future__ import annotations

from typing import Any

__all__ = ["selection_hint"]


def selection_hint(exc: BaseException) -> str:
    """For ``table[rows, column]`` or ``table['a', 'b']``: how to write it, or ``""``."""
    import pandas as pd

    if not isinstance(exc, KeyError | pd.errors.InvalidIndexError) or len(exc.args) != 1:
        return ""
    key = exc.args[0]
    if not isinstance(key, tuple) or len(key) != 2:
        return ""
    rows, columns = key
    if _mask(rows) and _labels(columns):
        over = f" (the mask over {rows.name!r} as it is)" if isinstance(rows.name, str) else ""
        return (
            "a table's [] takes a column name, a list of them or a mask of rows, not a mask "
            f"and columns together: write it with .loc, table.loc[mask, {columns!r}]{over}"
        )
    if all(isinstance(part, str) for part in key):
        return f"to take two columns, give a list of them: df[[{key[0]!r}, {key[1]!r}]]"
    return ""


def _mask(rows: Any) -> bool:
    import pandas as pd

    return isinstance(rows, pd.Series) and pd.api.types.is_bool_dtype(rows)


def _labels(columns: Any) -> bool:
    if isinstance(columns, list):
        return all(isinstance(c, str | int) for c in columns)
    return isinstance(columns, str | int)
