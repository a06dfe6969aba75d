"""A note for a cell that ran but printed NaN from a selection of no rows.

An error carries a hint (``_hints``); a filter that matches nothing raises none: the
mean of no rows is NaN. Seen in run 16: "the mean of expr1_0_imp from 09:00 to 17:00"
filtered ``df['hour'] >= '09:00'`` on a column of dates and times (each compared as
a date, so no row matched), printed ``nan``, and the 1.5B model wrote eleven variants
of the same filter, each printing ``nan``, until the step limit (505 s). So when the
last line a cell prints is NaN and a table the cell made is empty, the cell's stderr
says so, with what the compared columns hold when they hold dates. It reads the
namespace; it never runs anything.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reckon.kernel._cell_source import named_column, parsed, spelled

__all__ = ["empty_note"]

_NAN = re.compile(r"(?<![\w.])nan(?![\w.])", re.IGNORECASE)
# A sum of no rows is 0 (seen: 0.0 doctors "in 2010" from df[df['Unnamed: 0'] == '2010'],
# where 2010 is a column, answered twice after the zero-result message).
_ZERO = re.compile(r"^\s*0(?:\.0+)?\s*$")
_SHOWN = 3


def empty_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when its last printed line shows NaN and
    a DataFrame or Series it assigned has no rows, else ``""``."""
    # Every cell that ran comes here: only its last line is read, not the whole output.
    last = stdout.rstrip().rpartition("\n")[2]
    zero = bool(_ZERO.match(last)) and ".sum(" in code
    if not (_NAN.search(last) or zero) or (tree := parsed(code)) is None:
        return ""
    empty = [name for name in _stored(tree) if _is_empty(namespace.get(name))]
    matched = _matching_none(code, tree, namespace)
    if not empty and not matched:
        return ""
    result = "0 (the sum of no rows)" if zero else "NaN"
    shown = ", ".join(empty[:_SHOWN])
    said = f"{shown} {'has' if len(empty) == 1 else 'have'} 0 rows" if empty else matched
    said += f" ({matched})" if empty and matched else ""
    note = (
        f"{said}, so the result is {result}: a filter selected no rows. Print len() "
        "after each filter and the values it compares with."
    )
    for column, first, text in _dates_compared(tree, namespace):
        note += (
            f" {column!r} holds dates and times (the first is {first}): {text!r} is read "
            f"as a whole date and time; compare a part, e.g. df[{column!r}].dt.hour >= 9."
        )
    return note


def _matching_none(code: str, tree: ast.AST, namespace: dict[str, Any]) -> str:
    """``table[column] == value`` of the cell that no row of the table matches, said,
    with whether the value is a column's name instead; else ``""``."""
    # A filter: a comparison inside a subscript (t[t[c] == v]), not one summed as a count.
    slices = [n.slice for n in ast.walk(tree) if isinstance(n, ast.Subscript)]
    for node in (c for part in slices for c in ast.walk(part)):
        if not isinstance(node, ast.Compare) or not isinstance(node.ops[0], ast.Eq):
            continue
        value = node.comparators[0]
        if (
            not isinstance(value, ast.Constant)
            or (found := named_column(node.left, namespace)) is None
        ):
            continue
        if not len(found[0]) or (found[0][found[1]] == value.value).any():
            continue
        named = f" ({value.value!r} is the name of a column)" if value.value in found[0] else ""
        return f"{spelled(code, node)} matches no row{named}"
    return ""


def _stored(tree: ast.AST) -> list[str]:
    """The names the cell assigns, in order, once each."""
    names = [
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    return list(dict.fromkeys(names))


def _is_empty(value: Any) -> bool:
    import pandas as pd

    return isinstance(value, pd.DataFrame | pd.Series) and len(value) == 0


def _dates_compared(tree: ast.AST, namespace: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(column, first value, string)`` of each column of dates the cell compares with
    a string (``df['hour'] >= '09:00'``), read from a non-empty table of the namespace."""
    import pandas as pd

    compared: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        texts = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
        for side in sides:
            if texts and isinstance(side, ast.Subscript) and isinstance(side.slice, ast.Constant):
                key = side.slice.value
                if isinstance(key, str):
                    compared.setdefault(key, texts[0])
    found: list[tuple[str, str, str]] = []
    tables = [v for v in namespace.values() if isinstance(v, pd.DataFrame) and len(v)]
    for column, text in compared.items():
        table = next((t for t in tables if column in t.columns), None)
        if table is not None and pd.api.types.is_datetime64_any_dtype(table[column]):
            found.append((column, str(table[column].iloc[0]), text))
    return found
