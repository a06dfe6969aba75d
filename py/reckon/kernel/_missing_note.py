"""A note for a cell that compared a column with the text of a missing value.

Empty cells are read as missing values (NaN), not as the text ``'nan'`` or ``''``.
Asked how many attractions have parking information, the 1.5B model wrote
``df[df['停車資訊'] != 'nan']``: every row passed, missing or not, and it answered 382
where 95 cells are filled in; nothing in the output looked wrong. So when a cell that
ran compares a column that has missing values with ``'nan'``, ``'NaN'``, ``'None'``,
``'null'``, ``'NA'`` or ``''``, and no cell of the column holds that text, the cell's
stderr says so and names ``notna()``. It reads the namespace; it never runs the
cell's code.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["missing_note"]

_TEXTS = frozenset({"nan", "NaN", "NAN", "None", "none", "null", "NULL", "NA", "N/A", ""})
_QUOTES = ("'", '"')


def missing_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it compares a column with missing
    values to the text of a missing value that none of its cells holds, else ``""``."""
    # Every cell that ran comes here: most hold no quoted text of a missing value.
    if not any(f"{q}{t}{q}" in code for t in _TEXTS for q in _QUOTES):
        return ""
    if (tree := parsed(code)) is None:
        return ""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        if not isinstance(node.ops[0], ast.Eq | ast.NotEq):
            continue
        sides = (node.left, node.comparators[0])
        for expr, other in (sides, sides[::-1]):
            if not (isinstance(other, ast.Constant) and other.value in _TEXTS):
                continue
            series = named_series(expr, namespace)
            if series is None:
                continue
            missing = int(series.isna().sum())
            if missing and not (series == other.value).any():
                return _say(code, expr, str(other.value), missing, len(series))
    return ""


def _say(code: str, expr: ast.expr, text: str, missing: int, rows: int) -> str:
    column = spelled(code, expr)
    return (
        f"no cell of {column} holds the text {text!r}: its {missing} empty cells "
        f"(of {rows}) are missing values (NaN), which == {text!r} never matches and "
        f"!= {text!r} always does. Use {column}.notna() or {column}.isna()."
    )
