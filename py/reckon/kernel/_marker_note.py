"""A note for a cell that looks for a missing-value marker that reading turned into NaN.

``read_table`` reads the cells a file writes as a missing marker (``****``, ``.``,
``-``) as missing values (NaN) and says so in the file's notes. Asked how many cells
of mixedGLB.csv hold a missing value written as asterisks, the 1.5B model counted
``df.isin(['*'])``: 0, for 13, and answered 0 with nothing in the output to say why.
So when a cell compares a table or a column with a marker (``==``, ``!=``, ``isin``,
``eq``, ``.str.contains``, ``.str.count``), no cell of it holds that text and it has
missing values, the note says where the markers went and how to count them. It reads
the namespace; it never runs the cell's code.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["marker_note"]

_MARKER = re.compile(r"^\s*[^\w\s'\"]{1,8}\s*$")  # '*', '****', '.', '-', '--', '?'
_CALLS = frozenset({"isin", "eq", "ne", "contains", "count", "startswith", "endswith"})


def marker_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it looks for a marker text in a
    table or column that holds none but has missing values, else ``""``."""
    # Every cell that ran comes here: most hold no quoted marker.
    if not re.search(r"""(['"])[^\w\s'"]{1,8}\1""", code) or (tree := parsed(code)) is None:
        return ""
    for node in ast.walk(tree):
        for expr, marker in _looked_for(node):
            said = _said(code, expr, marker, namespace)
            if said:
                return said
    return ""


def _looked_for(node: ast.AST) -> list[tuple[ast.expr, str]]:
    """The (table or column, marker) pairs ``node`` compares."""
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        sides = (node.left, node.comparators[0])
        return [(e, m) for e, o in (sides, sides[::-1]) if (m := _marker(o))]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr not in _CALLS or not node.args:
            return []
        target = node.func.value
        if isinstance(target, ast.Attribute) and target.attr == "str":
            target = target.value
        # df['Feb'].astype(str): its missing cells become the text 'nan', no marker.
        if isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
            target = target.func.value if target.func.attr == "astype" else target
        first = node.args[0]
        values = first.elts if isinstance(first, ast.List | ast.Tuple | ast.Set) else [first]
        return [(target, m) for value in values if (m := _marker(value))]
    return []


def _marker(expr: ast.expr) -> str:
    value = expr.value if isinstance(expr, ast.Constant) else None
    return value.strip() if isinstance(value, str) and _MARKER.match(value) else ""


def _said(code: str, expr: ast.expr, marker: str, namespace: dict[str, Any]) -> str:
    import pandas as pd

    table = namespace.get(expr.id) if isinstance(expr, ast.Name) else None
    if not isinstance(table, pd.DataFrame):
        table = named_series(expr, namespace)
    if table is None:
        return ""
    frame = table.to_frame() if isinstance(table, pd.Series) else table
    missing = int(frame.isna().sum().sum())
    if not missing or _holds(frame, marker):
        return ""
    name = spelled(code, expr)
    count = (
        f"{name}.isna().sum().sum()" if isinstance(table, pd.DataFrame) else f"{name}.isna().sum()"
    )
    return (
        f"no cell of {name} holds the text {marker!r}: read_table reads the cells a file "
        f"writes as a missing-value marker ('****', '.', 'n/a') as missing values (NaN), "
        f"and {name} has {missing}. Count them with {count}; read_table(path, "
        "tidy=False) reads the file as written."
    )


def _holds(frame: Any, marker: str) -> bool:
    """Whether a cell of ``frame`` holds ``marker`` in its text."""
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object and values.astype(str).str.contains(marker, regex=False).any():
            return True
    return False
