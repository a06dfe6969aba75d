"""A note for a cell whose statistical test or measure came out NaN because a column
it was given holds missing values.

pandas leaves missing values out of ``.corr()``, ``.mean()`` and ``.skew()``; scipy's
functions do not: ``pearsonr``, ``zscore``, ``shapiro`` and the rest give NaN for a
column with one NaN in it, and ``zscore`` makes every z-score NaN, so that "outliers
beyond 3" counts none, without a NaN printed. Seen in a public benchmark question
("consider only non-null values"): three correlations printed ``nan``, then the same
cell twice more. So when a cell passes one of these a column with missing values (and
no ``nan_policy``), the cell's stderr says which, and how to leave them out. It reads
the namespace; it never runs the cell's code.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["nan_stats_note"]

# scipy.stats functions that give NaN for input with NaN (their default nan_policy).
_NAN_PROPAGATING = frozenset({
    "pearsonr", "spearmanr", "kendalltau", "pointbiserialr", "linregress", "zscore",
    "shapiro", "normaltest", "skewtest", "kurtosistest", "jarque_bera", "anderson",
    "ttest_ind", "ttest_rel", "ttest_1samp", "f_oneway", "mannwhitneyu", "wilcoxon",
    "kruskal", "levene", "bartlett", "skew", "kurtosis", "sem", "iqr", "variation",
})  # fmt: skip


def nan_stats_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it passes a column with missing
    values to a scipy function that gives NaN for them; else ``""``."""
    # Every cell that ran comes here: most call none of these.
    if not any(name in code for name in _NAN_PROPAGATING):
        return ""
    if (tree := parsed(code)) is None:
        return ""
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or _called(call) not in _NAN_PROPAGATING:
            continue
        if any(k.arg == "nan_policy" for k in call.keywords):
            continue
        for argument in call.args:
            series = named_series(argument, namespace)
            missing = int(series.isna().sum()) if series is not None else 0
            if missing:
                return _say(code, call, argument, missing, len(series))
    return ""


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _say(code: str, call: ast.Call, argument: ast.expr, missing: int, rows: int) -> str:
    name = _called(call)
    column = spelled(code, argument)
    table = argument.value if isinstance(argument, ast.Subscript | ast.Attribute) else None
    base = spelled(code, table) if isinstance(table, ast.Name) else ""
    columns = [
        spelled(code, a.slice if isinstance(a, ast.Subscript) else a)
        for a in call.args
        if isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name) and base
        and spelled(code, a.value) == base
    ]  # fmt: skip
    leave_out = (
        f"{base}.dropna(subset=[{', '.join(columns)}])"
        if base and columns
        else f"{column}.dropna()"
    )
    return (
        f"{name} gives NaN when its input holds missing values, and {column} has {missing} "
        f"of {rows}: leave them out first (for example {leave_out}), then call {name} on "
        "what is left."
    )
