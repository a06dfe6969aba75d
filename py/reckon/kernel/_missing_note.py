"""A note for a cell that compared a column with the text of a missing value.

Empty cells are read as missing values (NaN), not as the text ``'nan'`` or ``''``.
Asked how many attractions have parking information, the 1.5B model wrote
``df[df['停車資訊'] != 'nan']``: every row passed, missing or not, and it answered 382
where 95 cells are filled in; nothing in the output looked wrong. So when a cell that
ran compares a column that has missing values with ``'nan'``, ``'NaN'``, ``'None'``,
``'null'``, ``'NA'`` or ``''``, and no cell of the column holds that text, the cell's
stderr says so and names ``notna()``. The same for the column's text taken through
``.str`` methods first, which keep a missing value missing (seen:
``df[col].str.strip() != ''`` counted 382 of 382 rows as filled in, where 26 are),
even when some cells do hold that text. It reads the namespace; it never runs the
cell's code.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["missing_note"]

_TEXTS = frozenset({"nan", "NaN", "NAN", "None", "none", "null", "NULL", "NA", "N/A", ""})
_QUOTES = ("'", '"')
# ``.str`` methods that give a missing value back as missing.
_KEEPS_MISSING = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title"})


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
            column = _column(expr)
            series = named_series(column, namespace)
            if series is None:
                continue
            missing = int(series.isna().sum())
            if not missing:
                continue
            str_methods = column is not expr
            if str_methods or not (series == other.value).any():
                said = str(other.value)
                return _say(code, column, said, missing, len(series), str_methods=str_methods)
    return ""


def _column(expr: ast.expr) -> ast.expr:
    """The column under ``.str.strip()``, ``.str.lower()`` and the like, or ``expr``."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _KEEPS_MISSING
        and isinstance(expr.func.value, ast.Attribute)
        and expr.func.value.attr == "str"
    ):
        expr = expr.func.value.value
    return expr


def _say(
    code: str, expr: ast.expr, text: str, missing: int, rows: int, *, str_methods: bool
) -> str:
    column = spelled(code, expr)
    head = (
        f"{column} has {missing} missing values (NaN) of {rows} cells, and .str methods "
        "keep them NaN"
        if str_methods
        else f"no cell of {column} holds the text {text!r}: its {missing} empty cells "
        f"(of {rows}) are missing values (NaN)"
    )
    return (
        f"{head}: == {text!r} never matches them and != {text!r} always does. Use "
        f"{column}.notna() or {column}.isna()."
    )
