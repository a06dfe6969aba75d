"""The method of an answer in plain words, read from the code that printed its number.

Grounding says where a number came from, not whether the way it was computed fits
the question: "rainiest month" answered by grouping per day carried a "computed in
step 1" link all the same. So beside the answer stands what the code did, read from
the code itself (never from the model's words): "precipitation summed per month of
date, then the label of the largest". A person sees a wrong method at a glance.

Only pandas idioms are read (columns, filters, group-bys, aggregations, sorting,
arithmetic between such values) and SQL is shown as its query; anything else is
described as far as it goes and no further, never guessed. Which value of a cell
is the result, and which step computed the answer's key value, is decided here;
``_method_reader`` reads an expression into words.
"""

from __future__ import annotations

import ast
import re

from reckon.agent._types import JSONDict
from reckon.agent.checks._method_reader import _Reader

__all__ = ["answer_method", "describe_code"]

_LIMIT = 240


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
