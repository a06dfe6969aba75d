"""The method of an answer in plain words, read from the code that printed its number.

Grounding says where a number came from, not whether the way it was computed fits
the question: "rainiest month" answered by grouping per day carried a "computed in
step 1" link all the same. So beside the answer stands what the code did, read from
the code itself (never from the model's words): "precipitation summed per month of
date, then the label of the largest". A person sees a wrong method at a glance.

Only pandas idioms are read (columns, filters, group-bys, aggregations, sorting,
arithmetic between such values) and SQL is shown as its query; anything else is
described as far as it goes and no further, never guessed.
"""

from __future__ import annotations

import ast
import re

from reckon.agent._types import JSONDict

__all__ = ["answer_method", "describe_code"]

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
_DATE_PARTS = {"year", "month", "day", "hour", "minute", "dayofweek", "weekday", "quarter",
               "date", "week", "dayofyear"}  # fmt: skip
_OPS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times", ast.Div: "divided by",
        ast.FloorDiv: "divided by", ast.Mod: "modulo", ast.Pow: "to the power"}  # fmt: skip
_COMPARE = {ast.Eq: "is", ast.NotEq: "is not", ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<",
            ast.LtE: "<=", ast.In: "in", ast.NotIn: "not in"}  # fmt: skip
_LIMIT = 240
_BUILTINS = {"round", "abs", "int", "float", "str", "sum", "max", "min"}


def describe_code(code: str) -> str:
    """What the cell's printed or shown result was computed as, or ``""``: of the values
    it shows, the one whose computation reads furthest (a count of groups or a tie
    check printed beside the result says less than the result does)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ""
    targets, looped = _shown(tree)
    sql = [t for t in targets if _is_sql(t)]
    if sql:
        query = _sql_text(sql[-1])
        return f"SQL: {' '.join(query.split())}"[:_LIMIT] if query else ""
    assigned = _assignments(tree)
    # A result printed item by item in a loop is the result; else the fullest reading.
    said = [(t in looped, _Reader(assigned).read(t)) for t in targets]
    said = [(loop, w) for loop, w in said if w and not w.isidentifier() and "'" in w]
    if not said:
        return ""
    best = max(range(len(said)), key=lambda i: (said[i][0], len(said[i][1]), i))
    return said[best][1][:_LIMIT]


def _shown(tree: ast.Module) -> tuple[list[ast.expr], list[ast.expr]]:
    """Every value the cell shows: what its prints print (a loop's print, what the loop
    goes over) and its trailing expression; and which of them a loop went over."""
    shown: list[ast.expr] = []
    looped: list[ast.expr] = []
    loops: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    loops[name.id] = node.iter
    prints = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_print(n)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for call in prints:
        for argument in call.args:
            values = (
                [v.value for v in argument.values if isinstance(v, ast.FormattedValue)]
                if isinstance(argument, ast.JoinedStr)
                else [argument]
            )
            for value in values:
                inner = _unwrapped(value)
                if isinstance(inner, ast.Name) and inner.id in loops:
                    shown.append(loops[inner.id])
                    looped.append(loops[inner.id])
                elif not isinstance(inner, ast.Constant):
                    shown.append(value)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and not _is_print(last.value):
        shown.append(last.value)
    return shown, looped


_FORM = re.compile(r"@[A-Za-z_]\w*\[([^\[\]]*)\]")


def answer_method(answer: str, grounding: JSONDict, steps: list[JSONDict]) -> JSONDict | None:
    """``{text, step}``: how the answer's key value was computed, and the step whose
    code did it. The key value is the one in the asked ``@name[value]`` form, else the
    last computed number; a value that is a name (``@province[Flevoland]``) is found
    in the outputs. ``None`` when no step of this answer computed it."""
    forms = list(_FORM.finditer(answer))
    numbers = [n for n in grounding.get("numbers") or [] if n.get("steps")]
    inside = [n for n in numbers for f in forms if f.start(1) <= int(n["start"]) < f.end(1)]
    chosen = (inside or numbers or [None])[-1]
    by_index = {s.get("index"): s for s in steps if s.get("kind") == "code"}
    step: JSONDict | None = None
    if chosen is not None:
        step = by_index.get(chosen["steps"][-1])
    elif forms and forms[-1].group(1).strip():
        value = forms[-1].group(1).strip()
        holding = [s for s in by_index.values() if value in _output(s)]
        step = holding[-1] if holding else None
    if step is None or step.get("origin") == "reckon":
        return None
    text = describe_code(str(step.get("code") or ""))
    return {"text": text, "step": step["index"]} if text else None


def _output(step: JSONDict) -> str:
    result = step.get("result")
    if not isinstance(result, dict) or result.get("status") != "ok":
        return ""
    value = result.get("result")
    shown = value.get("text") if isinstance(value, dict) else ""
    return f"{result.get('stdout') or ''}\n{shown or ''}"


def _unwrapped(node: ast.expr) -> ast.expr:
    """``round(x, 2)``, ``int(x)``: the ``x`` they show."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id not in ("round", "int", "float", "str"):
            break
        node = node.args[0]
    return node


def _is_print(node: ast.expr) -> bool:
    return _calls(node, "print")


def _calls(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _is_sql(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and (node.func.id == "run_sql")
    )


def _sql_text(node: ast.expr) -> str:
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and _calls(child, "run_sql") and child.args:
            first = child.args[0]
            if isinstance(first, ast.Constant):
                return str(first.value)
    return ""


def _assignments(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
    return found


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


def _lead(source: str) -> str:
    """``source`` and a comma before what follows, or nothing for a bare table name."""
    return "" if not source or source.isidentifier() else f"{source}, "


def _of(source: str) -> str:
    """ " of <source>" unless the source is a bare table name (``df``: say nothing)."""
    return "" if not source or source.isidentifier() else f" of ({source})"
