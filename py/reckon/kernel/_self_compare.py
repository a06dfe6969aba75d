"""A column compared with itself: a filter that is False in every row, and why.

Asked on which date Berkeley was warmer than Galway (a table of one place a row: date,
temperature, place), the 1.5B model wrote ``(df['place'] == 'Berkeley') &
(df['temperature'] > df['temperature'])``: no rows, then five cells that guarded the
empty table and printed None, until the stop. The hint said a filter selected no rows;
not that this one never can. So a cell that compares a column with itself (``<``, ``>``,
``<=``, ``>=``; ``x != x`` is the missing-value idiom) gets a note, and an error on the
empty result the same words; when the table holds one kind a row, named in the cell
('Berkeley'), they say how to put the kinds side by side.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import named_column, parsed, spelled

__all__ = ["self_compare_note", "self_comparison"]

_ORDERS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)
_KINDS = 50  # a column of at most this many texts holds kinds of row


def self_compare_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it compares a column with itself."""
    return self_comparison(code, namespace)


def self_comparison(code: str, namespace: dict[str, Any]) -> str:
    """What comparing a column of ``code`` with itself does, and what to do instead;
    ``""`` when no comparison of ``code`` is one."""
    if code.count("[") + code.count(".") < 2 or (tree := parsed(code)) is None:
        return ""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        left, right = node.left, node.comparators[0]
        column = isinstance(left, ast.Subscript | ast.Attribute)
        if not column or not isinstance(node.ops[0], _ORDERS) or ast.dump(left) != ast.dump(right):
            continue
        always = "False" if isinstance(node.ops[0], ast.Lt | ast.Gt) else "True (but where missing)"
        return (
            f"{spelled(code, node)} compares {spelled(code, left)} with itself, row by "
            f"row: it is {always} in every row. {_side_by_side(code, tree, left, namespace)}"
        )
    return ""


def _side_by_side(code: str, tree: ast.Module, left: ast.expr, namespace: dict[str, Any]) -> str:
    """How to compare the kinds of row the cell names, when its table has them."""
    import pandas as pd

    found = named_column(left, namespace)
    plain = "Compare it with another column, or with the rows of another kind put beside it."
    if found is None:
        return plain
    table, value, base = found
    consts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    texts = {text for text in consts if isinstance(text, str)}
    for key in table.columns:
        kinds = table[key]
        if key == value or pd.api.types.is_numeric_dtype(kinds):
            continue
        named = sorted(texts & set(kinds.dropna().unique()[: _KINDS + 1]))
        if named and kinds.nunique() <= _KINDS:
            rows = [c for c in table.columns if c not in (key, value)]
            if not rows:
                return plain
            name, wide = spelled(code, base), "wide"
            both = (named + [k for k in kinds.dropna().unique() if k not in named])[:2]
            if len(both) < 2:
                return plain
            first, second = both
            return (
                f"Each row of {name} holds one {key!r} ({', '.join(map(repr, named[:3]))}"
                f"): to compare them, put them side by side first: {wide} = "
                f"{name}.pivot_table(index={rows[0]!r}, columns={key!r}, values={value!r}), "
                f"then {wide}[{first!r}] - {wide}[{second!r}]."
            )
    return plain
