"""Dates compared with the text of a time or of a day: the cell put right.

pandas reads ``df['hour'] >= '09:00'`` as today's date at nine, and
``df['hour'] == '2012-06-24'`` as that day's midnight. Seen with the 1.5B model on
hourly data: "the mean over hours 9 to 17" came out NaN (no row is today), and "the
total over the hours of 2012-06-24" summed the one midnight row; told the selection
was empty, it printed the dtype, saw dates, and answered NaN again. What the code
means is plain, so Reckon runs the cell comparing the time of day
(``.dt.strftime('%H:%M')``) or the day (``.dt.normalize()``) instead (a
``Correction``) and the model answers from that output. A day compared by ``>=`` or
``<`` means the same either way and is left alone, as is a column with no times of
day in its first rows. A moment written as in a file's name (``'20170413_080000'``),
which pandas reads as no date, is compared as the moment it names.
"""

from __future__ import annotations

import ast
import re

from reckon.agent._steps import Correction
from reckon.agent._types import JSONDict
from reckon.agent.checks._date_parts import replace_node

__all__ = ["STRING_MESSAGE", "string_correction"]

STRING_MESSAGE = (
    "Your code compares the dates of {column!r} with the text {text!r}, which pandas "
    "reads as {reading}. Reckon ran your cell again comparing {what} instead:\n"
    "```python\n{code}\n```\n"
)
_TIME = re.compile(r"(\d{1,2}):(\d{2})(:\d{2})?")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# A moment written as in a file's name ("20170413_080000"): pandas reads no date in it,
# so == matches no row. Seen in a public benchmark question on a call centre's log.
_STAMP = re.compile(r"(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})?")
_CLOCK = re.compile(r"\b(\d{2}):(\d{2})(?::(\d{2}))?\b")
# A day compared by == or <= (or their negations) misses the day's later hours.
_DAY_OPERATORS = (ast.Eq, ast.NotEq, ast.LtE, ast.Gt)


def string_correction(codes: list[str], environment: JSONDict) -> Correction | None:
    """The last cell with each date column compared with a time's or a day's text
    compared by its time of day or its day instead, for Reckon to run; or None."""
    code = codes[-1] if codes else ""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    dated = _dated_columns(environment)
    edits: list[tuple[ast.expr, str]] = []
    first: tuple[str, str, str, str] | None = None
    for reference, texts, operator in _compared(tree):
        name = _column_of(reference)
        source = ast.get_source_segment(code, reference)
        if name not in dated or source is None:
            continue
        text = str(texts[0].value).strip()
        clock = _TIME.fullmatch(text)
        if clock is not None:
            fmt = "%H:%M:%S" if clock.group(3) else "%H:%M"
            edits.append((reference, f"{source}.dt.strftime({fmt!r})"))
            # '9:00' would sort after '10:00' as text: written as the format writes it.
            edits += [
                (t, repr(_padded(str(t.value))))
                for t in texts
                if _TIME.fullmatch(str(t.value).strip())
            ]
            found = (name, text, "today's date at that time", f"the time of day ({fmt})")
        elif stamp := _stamp(text):
            edits += [
                (t, repr(_stamp(str(t.value).strip())))
                for t in texts
                if _stamp(str(t.value).strip())
            ]
            found = (name, text, "no date at all", f"the moment it names ({stamp!r})")
        elif _DAY.fullmatch(text) and dated[name] and isinstance(operator, _DAY_OPERATORS):
            edits.append((reference, f"{source}.dt.normalize()"))
            found = (name, text, "that day's midnight only", "the day (.dt.normalize())")
        else:
            continue
        first = first or found
    if first is None:
        return None
    fixed = _apply(code, edits)
    if not fixed:
        return None
    column, text, reading, what = first
    message = STRING_MESSAGE.format(
        column=column, text=text, reading=reading, what=what, code=fixed
    )
    note = f"Reckon ran the model's cell again comparing {what} of {column!r}."
    return Correction(fixed, message, note)


def _compared(tree: ast.AST) -> list[tuple[ast.expr, list[ast.Constant], ast.cmpop]]:
    """``(the compared expression, the texts, the operator)`` of each comparison with a
    text constant, and each ``.between('…', '…')``."""
    found: list[tuple[ast.expr, list[ast.Constant], ast.cmpop]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            right = node.comparators[0]
            if isinstance(right, ast.Constant) and isinstance(right.value, str):
                found.append((node.left, [right], node.ops[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            texts = [
                a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            if node.func.attr == "between" and texts and len(texts) == len(node.args):
                # between() takes in its ends: a day's end read as its midnight loses its hours.
                found.append((node.func.value, texts, ast.LtE()))
    return found


def _stamp(text: str) -> str:
    """``text`` as ISO when it is a moment written as in a file's name, else ``""``."""
    found = _STAMP.fullmatch(text)
    if found is None:
        return ""
    year, month, day, hour, minute, second = (int(g or 0) for g in found.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 60):
        return ""
    return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"


def _padded(text: str) -> str:
    hour, rest = text.strip().split(":", 1)
    return f"{int(hour):02d}:{rest}"


def _column_of(node: ast.expr) -> str | None:
    """The column ``df['name']`` or ``df.name`` refers to."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value) if isinstance(node.slice.value, str) else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr
    return None


def _dated_columns(environment: JSONDict) -> dict[str, bool]:
    """Each column loaded as dates, and whether its first rows show a time of day."""
    dated: dict[str, bool] = {}
    for entry in environment.get("files") or []:
        if not isinstance(entry, dict):
            continue
        names = [str(c.get("name")) if isinstance(c, dict) else str(c)
                 for c in entry.get("columns") or []]  # fmt: skip
        rows = [r for r in entry.get("head") or [] if isinstance(r, list)]
        for index, (name, dtype) in enumerate(zip(names, _dtypes(entry), strict=False)):
            if dtype.startswith("datetime"):
                cells = [str(r[index]) for r in rows if index < len(r)]
                dated[name] = dated.get(name, False) or any(_has_time(c) for c in cells)
    return dated


def _dtypes(entry: JSONDict) -> list[str]:
    return [
        str(c.get("dtype") or "") if isinstance(c, dict) else "" for c in entry.get("columns") or []
    ]


def _has_time(cell: str) -> bool:
    clock = _CLOCK.search(cell)
    return clock is not None and any(int(part or 0) for part in clock.groups())


def _apply(code: str, edits: list[tuple[ast.expr, str]]) -> str:
    """``code`` with each node written anew (``replace_node``), last first so the
    offsets of the others stay good; ``""`` when one spans lines."""
    for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        code = replace_node(code, node, text)
        if not code:
            return ""
    return code
