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
even when some cells do hold that text. The same for ``.isin([...])`` and for a whole
table, a lambda's row standing for the table the cell names. Pandas' readers also take
the text 'null', 'NA', 'None' and the like for a missing value: seen, "how many cells
are written 'null'" answered 0 twice; so for those texts the note says how to read the
file keeping them. It reads the namespace; it never runs the cell's code.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["missing_note"]

_TEXTS = frozenset({"nan", "NaN", "NAN", "None", "none", "null", "NULL", "NA", "N/A", ""})
_QUOTES = ("'", '"')
# Of those, what pandas' readers take for a missing value when a file holds it.
_READ_AS_MISSING = frozenset(_TEXTS - {""})
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
    import pandas as pd

    for expr, text in _compared(tree):
        column = _column(expr)
        values: Any = named_series(column, namespace)
        shown = spelled(code, column)
        if values is None and isinstance(column, ast.Name):
            if column.id in namespace:
                values = namespace[column.id]
            else:
                # A lambda's row (``df.apply(lambda row: row.isin(['null']))``): the
                # table the cell names.
                shown, values = _named_table(tree, namespace)
        if not isinstance(values, pd.Series | pd.DataFrame):
            continue
        missing = int(values.isna().to_numpy().sum())
        if not missing:
            continue
        str_methods = column is not expr
        if str_methods or not (values == text).to_numpy().any():
            return _say(shown, text, missing, values.size, str_methods=str_methods)
    return ""


def _compared(tree: ast.AST) -> list[tuple[ast.expr, str]]:
    """What the cell compares with the text of a missing value: ``x == 'null'``,
    ``x != ''``, ``x.isin(['null', ...])``; each with the text."""
    found: list[tuple[ast.expr, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            if not isinstance(node.ops[0], ast.Eq | ast.NotEq):
                continue
            sides = (node.left, node.comparators[0])
            for expr, other in (sides, sides[::-1]):
                if isinstance(other, ast.Constant) and other.value in _TEXTS:
                    found.append((expr, str(other.value)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "isin"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.List | ast.Tuple | ast.Set)
        ):
            texts = [e.value for e in node.args[0].elts if isinstance(e, ast.Constant)]
            found += [(node.func.value, t) for t in texts if t in _TEXTS][:1]
    return found


def _named_table(tree: ast.AST, namespace: dict[str, Any]) -> tuple[str, Any]:
    import pandas as pd

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(namespace.get(node.id), pd.DataFrame):
            return node.id, namespace[node.id]
    return "", None


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


def _say(column: str, text: str, missing: int, rows: int, *, str_methods: bool) -> str:
    head = (
        f"{column} has {missing} missing values (NaN) of {rows} cells, and .str methods "
        "keep them NaN"
        if str_methods
        else f"no cell of {column} holds the text {text!r}: its {missing} empty cells "
        f"(of {rows}) are missing values (NaN)"
    )
    said = (
        f"{head}: == {text!r} never matches them and != {text!r} always does. Use "
        f"{column}.notna() or {column}.isna()."
    )
    if text in _READ_AS_MISSING:
        # Seen: "how many cells hold the text 'null'" answered 0, twice.
        said += (
            f" pandas reads the text {text!r} in a file as missing too; to tell cells "
            f"written {text!r} from empty ones, read the file with pd.read_csv(path, "
            "keep_default_na=False, na_values=[''])."
        )
    return said
