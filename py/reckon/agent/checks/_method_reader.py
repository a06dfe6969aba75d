"""An expression of a cell read into plain words: ``df.groupby(df['date'].dt.month)
['precipitation'].sum().idxmax()`` as "'precipitation' per month of 'date', summed,
the label of the largest".

The reading follows the names the cell assigned (each once), knows the pandas idioms
(columns, filters, group-bys, aggregations, sorting) and arithmetic between such
values, and reads anything else as far as it goes and no further, never guessing.
``_method`` decides which expression of a cell to read.
"""

from __future__ import annotations

import ast

__all__ = ["_Reader"]

_AGGREGATES = {
    "sum": "summed", "mean": "averaged", "median": "median taken", "max": "largest taken",
    "min": "smallest taken", "count": "counted", "size": "counted",
    "nunique": "distinct values counted", "std": "standard deviation taken",
    "var": "variance taken", "idxmax": "the label of the largest",
    "idxmin": "the label of the smallest", "value_counts": "counted per value",
    "cumsum": "running total", "pct_change": "change in percent from row to row",
    "diff": "change from row to row", "unique": "distinct values", "mode": "most common value",
    "prod": "multiplied", "any": "any true", "all": "all true", "abs": "absolute value",
    "first": "first value", "last": "last value", "describe": "summary statistics",
    "corr": "correlation", "cov": "covariance", "quantile": "quantile", "sem": "standard error",
    "skew": "skewness", "kurt": "kurtosis", "dropna": "missing values dropped",
    "drop_duplicates": "duplicates dropped", "reset_index": "", "to_frame": "",
    "copy": "", "astype": "", "tolist": "", "to_list": "", "item": "", "squeeze": "",
}  # fmt: skip
_OPS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times", ast.Div: "divided by",
        ast.FloorDiv: "divided by", ast.Mod: "modulo", ast.Pow: "to the power"}  # fmt: skip
_COMPARE = {ast.Eq: "is", ast.NotEq: "is not", ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<",
            ast.LtE: "<=", ast.In: "in", ast.NotIn: "not in"}  # fmt: skip
_BUILTINS = {"round", "abs", "int", "float", "str", "sum", "max", "min"}


class _Reader:
    """Reads an expression into words, following names the cell assigned (once each)."""

    def __init__(self, assigned: dict[str, ast.expr]) -> None:
        self.assigned = assigned
        self.followed: set[str] = set()

    def read(self, node: ast.expr) -> str:
        return " ".join(self._read(node).split())

    def _read(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Constant):
            return repr(node.value) if isinstance(node.value, str) else str(node.value)
        if isinstance(node, ast.JoinedStr):
            parts = [self._read(v.value) for v in node.values if isinstance(v, ast.FormattedValue)]
            return "; ".join(p for p in parts if p)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return f"({self._read(node.left)} {_OPS[type(node.op)]} {self._read(node.right)})"
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            word = " and " if isinstance(node.op, ast.And) else " or "
            return word.join(self._read(v) for v in node.values)
        if isinstance(node, ast.List | ast.Tuple):
            return ", ".join(self._read(e) for e in node.elts)
        if isinstance(node, ast.Await):
            return self._read(node.value)
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) == 1:
            # sum(r['amount'] for r in rows): each r stands for the rows it runs over.
            loop = node.generators[0]
            if isinstance(loop.target, ast.Name) and loop.target.id not in self.assigned:
                self.assigned = {**self.assigned, loop.target.id: loop.iter}
                return self._read(node.elt)
        return ""

    def _name(self, name: str) -> str:
        value = self.assigned.get(name)
        if value is None or name in self.followed:
            return name
        self.followed.add(name)
        return self._read(value) or name  # a table read from a file is its name

    def _subscript(self, node: ast.Subscript) -> str:
        inner = node.slice
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr in ("loc", "iloc"):
            base = _lead(self._read(value.value))
            rows = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
            column = inner.elts[1] if isinstance(inner, ast.Tuple) and len(inner.elts) > 1 else None
            picked = self._rows(rows)
            if column is None:
                return f"{base}{picked}"
            return f"{self._read(column)} of {base}{picked}"
        if _is_method(value, "groupby") and isinstance(inner, ast.Constant | ast.List):
            assert isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            base = _lead(self._read(value.func.value))
            return f"{base}{self._read(inner)} per {self._group_key(value)}"
        if isinstance(inner, ast.Constant | ast.List):
            return f"{self._read(inner)}{_of(self._read(value))}"
        return f"{_lead(self._read(value))}rows where {self._read(inner)}"

    def _rows(self, rows: ast.expr) -> str:
        if isinstance(rows, ast.Slice):
            return "every row"
        if isinstance(rows, ast.Constant):
            return f"the row {self._read(rows)}"
        if isinstance(rows, ast.Compare | ast.BoolOp) or _is_method(rows, "between", "isin"):
            return f"rows where {self._read(rows)}"
        if _is_method(rows, "idxmax", "idxmin") and isinstance(rows, ast.Call):
            # Read as "the row of (('2000' minus '2007'), the label of the largest)".
            assert isinstance(rows.func, ast.Attribute)
            most = "largest" if rows.func.attr == "idxmax" else "smallest"
            return f"the row with the {most} {_bare(self._read(rows.func.value))}"
        return f"the row of ({self._read(rows)})"

    def _group_key(self, call: ast.Call) -> str:
        key = call.args[0] if call.args else call.keywords[0].value
        return self._read(key)

    def _attribute(self, node: ast.Attribute) -> str:
        if isinstance(node.value, ast.Attribute) and node.value.attr == "dt":
            return f"{node.attr} of {self._read(node.value.value)}"
        if node.attr == "shape":
            return f"size of {self._read(node.value)}"
        if node.attr in ("values", "index", "columns", "iloc", "loc", "str", "dt", "T"):
            return self._read(node.value)
        return f"{node.attr}{_of(self._read(node.value))}"

    def _call(self, node: ast.Call) -> str:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "len" and node.args:
                return f"{self._read(node.args[0])}, rows counted"
            if func.id in _BUILTINS and node.args:
                inner = self._read(node.args[0])
                if func.id == "round":
                    places = self._read(node.args[1]) if len(node.args) > 1 else "0"
                    return f"{inner}, rounded to {places} decimals"
                return inner if func.id in ("int", "float", "str") else f"{inner}, {func.id}"
            return ""
        if not isinstance(func, ast.Attribute):
            return ""
        source = self._read(func.value)
        method, args = func.attr, node.args
        if method == "groupby" and (args or node.keywords):
            return f"{_lead(source)}per {self._group_key(node)}"
        if method in ("set_index", "fillna", "sort_index", "map", "apply", "astype"):
            return source
        if method in ("to_numeric", "to_datetime") and args:
            return self._read(args[0])
        if method == "round":
            return f"{source}, rounded to {self._read(args[0]) if args else '0'} decimals"
        if method in ("sort_values", "nlargest", "nsmallest"):
            return f"{source}, {self._sorted(method, node)}"
        if method in ("head", "tail"):
            count = self._read(args[0]) if args else "5"
            return f"{source}, {'first' if method == 'head' else 'last'} {count}"
        if method in ("isna", "notna", "isnull", "notnull"):
            return f"{source} {'missing' if method in ('isna', 'isnull') else 'present'}"
        if method in ("between", "isin", "contains", "startswith", "endswith"):
            values = " and ".join(self._read(a) for a in args)
            return f"{source} {method} {values}"
        if method in ("agg", "aggregate") and args:
            return f"{source}, {self._read(args[0])}"
        if method == "query" and args:
            return f"{source}, rows where {self._read(args[0]).strip(chr(39))}"
        if method in ("sum", "mean") and self._is_condition(func.value):
            return f"{_lead(source)}{'counted' if method == 'sum' else 'share of rows'}"
        if method in _AGGREGATES:
            said = _AGGREGATES[method]
            return f"{source}, {said}" if said else source
        return source

    def _is_condition(self, node: ast.expr) -> bool:
        """A comparison (``df['price'] > 100``), or a name bound to one: its sum counts."""
        if isinstance(node, ast.Name) and node.id in self.assigned:
            node = self.assigned[node.id]
        return isinstance(node, ast.Compare | ast.BoolOp) or _is_method(
            node, "between", "isin", "contains", "startswith", "endswith", "isna", "notna"
        )

    def _sorted(self, method: str, node: ast.Call) -> str:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        if method == "sort_values":
            by = keywords.get("by") or (node.args[0] if node.args else None)
            ascending = keywords.get("ascending")
            down = isinstance(ascending, ast.Constant) and ascending.value is False
            key = f" by {self._read(by)}" if by is not None else ""
            return f"sorted{key} ({'largest' if down else 'smallest'} first)"
        count = self._read(node.args[0]) if node.args else "5"
        by = node.args[1] if len(node.args) > 1 else keywords.get("columns")
        key = f" by {self._read(by)}" if by is not None else ""
        return f"the {count} {'largest' if method == 'nlargest' else 'smallest'}{key}"

    def _compare(self, node: ast.Compare) -> str:
        parts = [self._read(node.left)]
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts.append(f"{_COMPARE.get(type(op), '?')} {self._read(right)}")
        return " ".join(parts)


def _is_method(node: ast.expr, *names: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
    )


def _bare(said: str) -> str:
    """``said`` without the parentheses around the whole of it (not "(a) minus (b)")."""
    if not (said.startswith("(") and said.endswith(")")):
        return said
    depth = 0
    for at, char in enumerate(said):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and at < len(said) - 1:
            return said
    return said[1:-1]


def _lead(source: str) -> str:
    """``source`` and a comma before what follows, or nothing for a bare table name."""
    return "" if not source or source.isidentifier() else f"{source}, "


def _of(source: str) -> str:
    """ " of <source>" unless the source is a bare table name (``df``: say nothing)."""
    return "" if not source or source.isidentifier() else f" of ({source})"
