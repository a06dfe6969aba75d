"""What the kernel's notes read of a cell's source: its tree, an expression as the
cell wrote it, the column of the namespace an expression names. A note reads these;
it never runs the cell's code."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

__all__ = ["named_column", "named_series", "parsed", "picked_series", "spelled"]

_LONG = 60


def parsed(code: str) -> ast.Module | None:
    """The cell's source parsed, or ``None`` when it does not parse."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def named_series(expr: ast.expr, namespace: dict[str, Any]) -> Any:
    """The Series ``expr`` names: ``name['column']`` or ``name.column`` of a DataFrame in
    the namespace, or a name bound to a Series; else None."""
    import pandas as pd

    if isinstance(expr, ast.Name):
        value = namespace.get(expr.id)
        return value if isinstance(value, pd.Series) else None
    found = named_column(expr, namespace)
    return found[0][found[1]] if found is not None else None


def named_column(expr: ast.expr, namespace: dict[str, Any]) -> tuple[Any, Any, ast.Name] | None:
    """The table, column and the table's name ``expr`` names as ``name[column]`` (a
    constant) or ``name.column`` of a DataFrame in the namespace, the column one
    Series; else None."""
    import pandas as pd

    column: object = None
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        column, base = expr.slice.value, expr.value
    elif isinstance(expr, ast.Attribute):
        column, base = expr.attr, expr.value
    else:
        return None
    table = namespace.get(base.id) if isinstance(base, ast.Name) else None
    if not isinstance(base, ast.Name) or not isinstance(table, pd.DataFrame):
        return None
    if not isinstance(column, str | int | float) or column not in table.columns:
        return None
    return (table, column, base) if isinstance(table[column], pd.Series) else None


def picked_series(tree: ast.AST, namespace: dict[str, Any]) -> Iterator[tuple[ast.Call, Any]]:
    """Each ``idxmax()``/``idxmin()`` call of the cell, with the non-empty numeric Series
    of the namespace it is called on (``named_series``)."""
    import pandas as pd

    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if call.func.attr not in ("idxmax", "idxmin") or call.args or call.keywords:
            continue
        series = named_series(call.func.value, namespace)
        if series is not None and not series.empty and pd.api.types.is_numeric_dtype(series):
            yield call, series


def spelled(code: str, node: ast.expr) -> str:
    """``node`` as the cell wrote it, shortened when long."""
    text = ast.get_source_segment(code, node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= _LONG else text[: _LONG - 3] + "..."
