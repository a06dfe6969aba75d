"""A note for ``idxmax``/``idxmin`` that picked one of several tied values.

``idxmax`` gives the first label that holds the largest value, whether or not others
hold it too, and the output shows one name as if it were the answer. Asked which
sub-specialty had the most doctors in 2010, the 1.5B model counted rows per name
(``value_counts()``), where each name appears once or twice, and printed the first of
three tied at 2. So when a cell calls ``idxmax``/``idxmin`` on a Series of the
namespace whose extreme value more than one label holds, the note names the tie; when
the Series counts rows per value and most values appear once, it says that such a count
ranks nothing. It reads the namespace; it never runs the cell's code.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import parsed, picked_series, spelled

__all__ = ["tie_note"]

_PICKS = {"idxmax": "max", "idxmin": "min"}
_SHOWN = 3


def tie_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when an ``idxmax``/``idxmin`` of it
    picked the first of a tie, else ``""``."""
    if ".idxm" not in code or (tree := parsed(code)) is None:  # every cell comes here
        return ""
    for call, series in picked_series(tree, namespace):
        if said := _tie(code, call, series):
            return said
    return ""


def _tie(code: str, call: ast.Call, series: Any) -> str:
    import pandas as pd

    assert isinstance(call.func, ast.Attribute)
    extreme = getattr(series, _PICKS[call.func.attr])()
    tied = list(series.index[series == extreme])
    if len(tied) < 2:
        return ""
    names = ", ".join(repr(label) for label in tied[:_SHOWN])
    more = f" and {len(tied) - _SHOWN} more" if len(tied) > _SHOWN else ""
    at = f"{extreme}" if pd.api.types.is_bool_dtype(series) else f"{extreme:.10g}"
    said = (
        f"{spelled(code, call)} is {tied[0]!r}, the first of {len(tied)} tied at "
        f"{at} ({names}{more}): {call.func.attr}() picks the first of a tie."
    )
    if at == "True":  # a mask: seen taken for the row of the largest price it matched
        said += " Of a True/False Series it gives the first True row, not a largest value."
    if series.name == "count" and series.median() <= 1:  # value_counts() of names
        said += (
            f" {spelled(code, call.func.value)} counts rows per value, and most values "
            "appear once: such a count ranks nothing. To rank by a number, take the "
            "largest of the column that holds it."
        )
    return said
