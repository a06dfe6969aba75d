"""A note for a cell that sums, averages or ranks a column with its table's total row.

Report tables end with a row of totals ('GRAND TOTALS', 'Total', 'Totaal'). Asked what
share of the grand total one bond series holds (a question not written for the agent),
the 1.5B model left the total row out of the series it picked from, then divided by
``df['BONDS OUTSTANDING'].sum()``: the total counted twice, 38.05% for 76.11%, and
nothing in the output looked wrong. So when a cell that ran calls ``sum``, ``mean``,
``median``, ``max``, ``idxmax`` or ``nlargest`` on a column of a table in the
namespace, and a row of that table labelled as a total holds the sum of the column's
other rows, the note names the row and how to leave it out. Both must hold: a label
alone may be a category, and small whole numbers add up by chance. It reads the
namespace; it never runs the cell's code.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reckon.kernel._cell_source import named_column, parsed, spelled

__all__ = ["total_note"]

_METHODS = frozenset({"sum", "mean", "median", "max", "idxmax", "nlargest"})
# The word for a total in the languages uploads come in.
_TOTAL = re.compile(r"\btotal(?:e|es|s)?\b|\btotaal\b|gesamt|\bsumme?\b|合計|總計|总计|合计", re.I)
_CLOSE = 0.005  # a total of rounded figures is off by a little


def total_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it sums, averages or ranks a column
    whose table holds a total of that column's other rows, else ``""``."""
    if not any(f".{method}(" in code for method in _METHODS):  # every cell comes here
        return ""
    if (tree := parsed(code)) is None:
        return ""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    ranked = [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr in _METHODS]
    return next((said for call in ranked if (said := _with_total(code, call, namespace))), "")


def _with_total(code: str, call: ast.Call, namespace: dict[str, Any]) -> str:
    import pandas as pd

    assert isinstance(call.func, ast.Attribute)
    found = named_column(call.func.value, namespace)
    if found is None or len(found[0]) < 3:
        return ""
    table, column, base = found
    values = table[column]
    if not pd.api.types.is_numeric_dtype(values):
        return ""
    whole = float(values.sum())
    # A total row holds half the column's sum: itself and the rows it adds up.
    halves = (((values * 2 - whole).abs() <= _CLOSE * values.abs()) & (values != 0)).to_numpy()
    for position in halves.nonzero()[0][:3]:
        label = _label(table.iloc[int(position)])
        if label is not None:
            where, text = label
            name = spelled(code, base)
            return (
                f"{spelled(code, call)} takes in the row {text!r}, whose {column!r} "
                f"({float(values.iloc[int(position)]):.10g}) is the total of the other "
                "rows: a sum or a mean counts them twice, and a largest value may be it. "
                f"Leave it out first, e.g. {name}[{name}[{where!r}] != {text!r}]."
            )
    return ""


def _label(row: Any) -> tuple[Any, str] | None:
    """The column and text that label ``row`` as a total, if one does."""
    for column, value in row.items():
        if isinstance(value, str) and _TOTAL.search(value):
            return column, value
    return None
