"""A note for a cell that ran and counted distinct values with the missing ones among them.

pandas' ``nunique()`` leaves missing values out; ``len(X.unique())``, ``len(set(X))``,
``len(X.drop_duplicates())`` and ``X.value_counts(dropna=False)`` count them. Asked "How
many distinct postal codes are there?", the 1.5B model wrote
``print(len(df['zip'].unique()))``, printed 206 where the answer is 205 (``nunique()``),
and nothing told it. So when the last line a cell prints shows the count such a form
gives, and the column it counts has missing values, the cell's stderr says how many are
missing and what ``nunique()`` gives, for the model to say which the question means. It
reads the namespace; it never runs the cell's code.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["unique_note"]

_WHOLE = re.compile(r"(?<![\w.])\d+(?!\w|\.\d)")
# Words of the forms read: a cell with none of them is not parsed.
_WORDS = ("unique", "set(", "drop_duplicates", "value_counts")


def unique_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when it counts the distinct values of a
    column with missing values in a way that counts them too, and its last printed line
    shows that count; else ``""``."""
    # Every cell that ran comes here: only its last line is read, not the whole output.
    last = stdout.rstrip().rpartition("\n")[2]
    shown = {int(n) for n in _WHOLE.findall(last)}
    if not shown or not any(word in code for word in _WORDS):
        return ""
    if (tree := parsed(code)) is None:
        return ""
    for call, form, expr in _counts(tree):
        series = named_series(expr, namespace)
        if series is None or not series.isna().any():
            continue
        counted, distinct = _counted(series, form), int(series.nunique())
        if counted in shown and distinct not in shown and counted > distinct:
            return _say(code, call, expr, counted - distinct, int(series.isna().sum()), distinct)
    return ""


def _counts(tree: ast.AST) -> list[tuple[ast.expr, str, ast.expr]]:
    """``(whole count, form, counted expression)`` of each count of distinct values that
    counts missing values too, in the order the cell wrote them."""
    found: list[tuple[ast.expr, str, ast.expr]] = []
    for node in ast.walk(tree):
        inner: ast.expr | None = None
        if _is_call(node, "len") and isinstance(node, ast.Call) and len(node.args) == 1:
            inner = node.args[0]
            if _is_call(inner, "set") and isinstance(inner, ast.Call) and len(inner.args) == 1:
                found.append((node, "set", _unlisted(inner.args[0])))
                continue
        elif isinstance(node, ast.Attribute) and node.attr == "size":
            inner = node.value
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == 0
        ):
            inner = node.value.value
        counted = _distinct_of(inner)
        if counted is not None and isinstance(node, ast.expr):
            found.append((node, *counted))
    return sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset))


def _is_call(node: ast.AST | None, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _unlisted(node: ast.expr) -> ast.expr:
    """``X`` of ``X.tolist()``, ``X.to_list()`` or ``X.values`` (a set of either counts
    as a set of ``X`` does), else ``node``."""
    if isinstance(node, ast.Attribute) and node.attr == "values":
        return node.value
    listed = isinstance(node, ast.Call) and not node.args and not node.keywords
    if listed and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value if node.func.attr in ("tolist", "to_list") else node
    return node


def _distinct_of(node: ast.expr | None) -> tuple[str, ast.expr] | None:
    """``(form, X)`` when ``node`` is ``X.unique()``, ``X.drop_duplicates()`` or
    ``X.value_counts(dropna=False)``, each with no other arguments; else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.args:
        return None
    form, keywords = node.func.attr, node.keywords
    if form in ("unique", "drop_duplicates") and not keywords:
        return form, node.func.value
    if form == "value_counts" and len(keywords) == 1 and keywords[0].arg == "dropna":
        value = keywords[0].value
        if isinstance(value, ast.Constant) and value.value is False:
            return form, node.func.value
    return None


def _counted(series: Any, form: str) -> int:
    """The count the cell's form gives of ``series``, worked out as that form does."""
    if form == "set":
        return len(set(series))  # each float NaN is a value of its own here
    if form == "value_counts":
        return len(series.value_counts(dropna=False))
    if form == "drop_duplicates":
        return len(series.drop_duplicates())
    return len(series.unique())


def _say(code: str, call: ast.expr, expr: ast.expr, extra: int, missing: int, n: int) -> str:
    counting, column = spelled(code, call), spelled(code, expr)
    counts = "the missing value too" if extra == 1 else f"the missing values too, as {extra}"
    return (
        f"{counting} counts {counts}: {column} has {missing} missing, {n} distinct "
        f"values without them ({column}.nunique()). Say which the question means."
    )
