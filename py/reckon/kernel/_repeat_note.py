"""A note for a cell that used a header a table holds twice, and the wrong one of the two.

A sheet may hold two tables side by side; read as one, a header they share comes twice,
and pandas names the second ``X.1``. Seen (large.xlsx, a hidden sheet): the second
table's 'Bonds Out' and 'Bonds Issued' filtered by ``df['Series'] == 'HH'``, the first
table's 'Series', where the rows' own series is 'Series.1': a correlation of other
rows, printed and answered. So when every other column a cell takes from a table stands
after a repeat ``X.1`` and the cell takes ``X``, not ``X.1``, the note says which
``X`` goes with them. It reads the namespace; it never runs anything.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import parsed

__all__ = ["repeat_note"]


def repeat_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it took a repeated header's first
    column beside columns of the second table only, else ``""``."""
    if ("['" not in code and '["' not in code) or (tree := parsed(code)) is None:
        return ""
    import pandas as pd

    taken = {
        node.slice.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    }
    named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    for name in sorted(named):
        table = namespace.get(name)
        if isinstance(table, pd.DataFrame) and (said := _wrong_twin(name, table, taken)):
            return said
    return ""


def _wrong_twin(name: str, table: Any, taken: set[str]) -> str:
    columns = [str(c) for c in table.columns]
    for first in (c for c in columns if c in taken and f"{c}.1" in columns):
        second = columns.index(f"{first}.1")
        others = [c for c in columns if c in taken and c != first]
        if others and all(columns.index(c) > second for c in others):
            shown = ", ".join(repr(c) for c in others)
            return (
                f"{name} holds the header {first!r} twice (a second table beside the first, "
                f"from column {second + 1}), and pandas named the second {first + '.1'!r}: "
                f"{shown} stand in that second table, so the {first!r} of their own rows "
                f"is {name}[{first + '.1'!r}], not {name}[{first!r}]."
            )
    return ""
