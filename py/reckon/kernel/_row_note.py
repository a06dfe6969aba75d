"""Notes for a row taken by its place where the question asks for one by name or value.

Two ways the 1.5B model answered with the wrong row, on questions not written for the
agent, with nothing in the output to show it:

- ``most = bonds.idxmax()`` over a column whose rows are numbered, printed where the
  question asks which series: '1', the row's number, for "Series 'EE'". So when a cell
  prints what ``idxmax``/``idxmin`` gave over numbered rows, and a table in the namespace
  names that row, the note says the name and where it is.
- ``counts.iloc[0]`` of a groupby's result, read as the top group: a groupby orders its
  groups by name, so the first row is the first name alphabetically (6 active programs
  for '11th Wing Family Support', where the question's agency had 126). So when a cell
  takes the first row of a table whose rows are in the order of their names, and that
  row holds neither the largest nor the smallest value, the note says so.

Both read the namespace and compute ``idxmax`` or ``max`` over it; they never run the
cell's code.
"""

from __future__ import annotations

import ast
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, picked_series, spelled

__all__ = ["group_order_note", "row_number_note"]

_PICKS = frozenset({"idxmax", "idxmin"})
_WRAPS = frozenset({"str", "int", "repr"})
_FIRST = (".iloc[0]", ".index[0]", ".head(1)")
# What puts a groupby's result in an order of its values.
_ORDERED = frozenset({"sort_values", "nlargest", "nsmallest", "value_counts", "rank"})
_ORDERED |= _PICKS | {"max", "min"}


def row_number_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` when it prints the number ``idxmax``/``idxmin`` gave over
    numbered rows, and a table in the namespace names that row; else ``""``."""
    if not any(f".{pick}(" in code for pick in _PICKS) or (tree := parsed(code)) is None:
        return ""
    shown = _shown(tree)
    for call, series in picked_series(tree, namespace):
        if call not in shown and not (_bound_names(tree, call) & _shown_names(shown)):
            continue
        if said := _row_number(code, call, series, namespace):
            return said
    return ""


def group_order_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` when it takes the first row of a table whose rows are in
    the order of their names, a row that is no extreme; else ``""``."""
    if not any(first in code for first in _FIRST) or (tree := parsed(code)) is None:
        return ""
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or (receiver := _first_of(node)) is None:
            continue
        table = _named(receiver, namespace)
        said = (
            _first_by_name(code, (node, receiver), table, _held_texts(tree, namespace))
            if table is not None
            else _first_group(code, node, receiver, namespace)
        )
        if said:
            return said
    return ""


def _row_number(code: str, call: ast.Call, series: Any, namespace: dict[str, Any]) -> str:
    import pandas as pd

    assert isinstance(call.func, ast.Attribute)
    index = series.index
    if not pd.api.types.is_integer_dtype(index) or index.name is not None:
        return ""  # rows named by numbers (years, codes) are named
    label = getattr(series, call.func.attr)()
    found = _row_name(label, series, namespace)
    if found is None:
        return ""
    table, column, name = found
    return (
        f"{spelled(code, call)} is {label}, the number of a row, not its name: the rows "
        f"of {spelled(code, call.func.value)} are numbered. Where the question asks which "
        f"one, give the row's name: {table}.loc[{label}, {column!r}] is {name!r}."
    )


def _row_name(label: Any, series: Any, namespace: dict[str, Any]) -> tuple[str, Any, str] | None:
    """The table, text column and text that name row ``label`` of ``series``: a table
    of the namespace that holds ``series`` as a column and has a column of names."""
    import pandas as pd

    for name, table in namespace.items():
        if name.startswith("_") or not isinstance(table, pd.DataFrame):
            continue
        if not table.index.is_unique or label not in table.index:
            continue
        if series.name not in table.columns or table.at[label, series.name] != series[label]:
            continue
        for column in table.columns:
            value = table.at[label, column]
            if isinstance(value, str) and table[column].nunique() * 2 > len(table):
                return name, column, value
    return None


def _first_by_name(
    code: str, taken: tuple[ast.expr, ast.expr], table: Any, held: dict[str, str]
) -> str:
    """The note for ``taken``, a first row (``node``) of ``table`` (``receiver``), when
    the rows are in the order of their names; ``held``: the texts the cell's names hold."""
    import pandas as pd

    node, receiver = taken
    frame = table.to_frame() if isinstance(table, pd.Series) else table
    if len(frame) < 3:
        return ""
    texts = [c for c in frame.columns if _in_name_order(frame[c])]
    if _in_name_order(frame.index):
        key, keys = "name", list(frame.index)
    elif texts:
        key, keys = repr(texts[0]), list(frame[texts[0]])
    else:
        return ""
    numbers = [frame[c] for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    if not numbers or any(c.iloc[0] in (c.max(), c.min()) for c in numbers):
        return ""
    named = {name: text for name, text in held.items() if text in set(keys)}
    if keys[0] in named.values():
        return ""  # the first row is the one the cell names
    shown = spelled(code, receiver)
    pick = "to pick a named one, select it by its name."
    if named:
        name, text = next(iter(named.items()))
        by = f"{shown}.loc[{name}]" if key == "name" else f"{shown}[{shown}[{key}] == {name}]"
        pick = f"to take the row of {name} ({text!r}): {by}."
    return (
        f"{spelled(code, node)} takes the row of {keys[0]!r}, the first by {key}: the rows "
        f"of {shown} are in alphabetical order of their {key} (as a groupby leaves them), "
        "not in order of value, and this row holds neither the largest nor the smallest. "
        f"To pick a row by value, use .idxmax() or .sort_values(ascending=False) first; {pick}"
    )


def _held_texts(tree: ast.Module, namespace: dict[str, Any]) -> dict[str, str]:
    """The texts the names of the cell hold, by name."""
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
    return {name: value for name in names if isinstance(value := namespace.get(name), str)}


def _first_group(code: str, node: ast.expr, receiver: ast.expr, namespace: dict[str, Any]) -> str:
    """The note for the first row of a groupby written out in the cell, unsorted."""
    import pandas as pd

    methods = {n.attr for n in ast.walk(receiver) if isinstance(n, ast.Attribute)}
    if methods & _ORDERED:
        return ""
    for call in ast.walk(receiver):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if call.func.attr != "groupby" or not call.args:
            continue
        keys = call.args[0]
        names = keys.elts if isinstance(keys, ast.List) else [keys]
        table = namespace.get(_root(call.func.value) or "")
        if not isinstance(table, pd.DataFrame):
            continue
        if all(
            isinstance(k, ast.Constant) and k.value in table.columns and _texts(table[k.value])
            for k in names
        ):
            return (
                f"{spelled(code, node)} takes the first group of a groupby, and a groupby "
                "orders its groups by their names, not by their values: it is the first "
                "name in alphabetical order. To pick by value, use .idxmax() or "
                ".sort_values(ascending=False) first; to pick a named one, select it by "
                "its name."
            )
    return ""


def _first_of(node: ast.expr) -> ast.expr | None:
    """What ``node`` takes the first row of: ``x.iloc[0]``, ``x.index[0]``, ``x.head(1)``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
        first = isinstance(node.slice, ast.Constant) and node.slice.value == 0
        return node.value.value if first and node.value.attr in ("iloc", "index") else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        one = [a.value for a in node.args if isinstance(a, ast.Constant)] == [1]
        return node.func.value if node.func.attr == "head" and one else None
    return None


def _named(expr: ast.expr, namespace: dict[str, Any]) -> Any:
    """The Series or DataFrame ``expr`` names in the namespace, else None."""
    import pandas as pd

    if isinstance(expr, ast.Name):
        value = namespace.get(expr.id)
        return value if isinstance(value, pd.Series | pd.DataFrame) else None
    return named_series(expr, namespace)


def _in_name_order(values: Any) -> bool:
    return bool(values.is_unique and values.is_monotonic_increasing and _texts(values))


def _texts(values: Any) -> bool:
    return bool(len(values)) and all(isinstance(v, str) for v in values[:50])


def _root(expr: ast.expr) -> str | None:
    """The name a chain such as ``df[df.x > 1].dropna()`` starts from."""
    while not isinstance(expr, ast.Name):
        if isinstance(expr, ast.Subscript | ast.Attribute):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            expr = expr.func
        else:
            return None
    return expr.id


def _shown(tree: ast.Module) -> set[ast.expr]:
    """The expressions the cell prints: print's arguments, an f-string's values, the
    last line's expression, each seen through ``str()``, ``int()`` and ``repr()``."""
    shown: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "print":
                shown.extend(node.args)
        elif isinstance(node, ast.FormattedValue):
            shown.append(node.value)
    if tree.body and isinstance(last := tree.body[-1], ast.Expr):
        shown.append(last.value)
    unwrapped = set(shown)
    for expr in shown:
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            if expr.func.id not in _WRAPS or len(expr.args) != 1:
                break
            expr = expr.args[0]
            unwrapped.add(expr)
    return unwrapped


def _shown_names(shown: set[ast.expr]) -> set[str]:
    return {expr.id for expr in shown if isinstance(expr, ast.Name)}


def _bound_names(tree: ast.Module, call: ast.Call) -> set[str]:
    """The names ``call``'s value is bound to: ``a = call`` or ``a, b = call, other``."""
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and node.value is call:
                names.add(target.id)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                for name, value in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(name, ast.Name) and value is call:
                        names.add(name.id)
    return names
