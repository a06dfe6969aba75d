"""A month, weekday or year picked by the wrong number: the check, and the cell put right.

Seen with a small model: "how much rain fell in November?" computed over
``.dt.month == 10``. Told so, and even handed its cell with 11 in place of 10, the
1.5B model answered from the old output again. So where one number is compared with
and one is named, Reckon runs the cell put right itself, as a step of its own
(``Correction``), and the model answers from that output. The check reads code; it
never guesses which of several named numbers was meant.
"""

from __future__ import annotations

import ast
import re

from reckon.agent._steps import Correction

__all__ = [
    "NUMBERING",
    "PART_MESSAGE",
    "named_parts",
    "part_correction",
    "part_name",
    "part_recheck",
    "replace_node",
]

PART_MESSAGE = (
    "The question names {named}, but your code compares {part} with {used}. Check the "
    "numbering ({numbering}), run the corrected code, then answer from its output."
)
# Begins as PART_MESSAGE does: a recheck is never read back as the person's question.
_RAN = (
    "The question names {named}, but your code compares {part} with {used} ({numbering}). "
    "Reckon ran your cell again with {wanted} in place of {used}:\n```python\n{code}\n```\n"
)
_FIXED = "\nYour cell with that number put right:\n```python\n{code}\n```"
_TOKEN = re.compile(r"[A-Za-z]+")
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]  # fmt: skip
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMBERING = {
    "month": "January is 1, December is 12",
    "dayofweek": "Monday is 0, Sunday is 6",
    "weekday": "Monday is 0, Sunday is 6",
    "year": "the year as written, e.g. 2012",
}


def part_recheck(question: str, codes: list[str]) -> str:
    """``PART_MESSAGE`` when the code picks a month, weekday or year by a number the
    question does not name (``.dt.month == 10`` for November), or ``""``. Where one
    number is compared with and one is named, it carries the cell put right."""
    found = _mismatch(question, codes)
    if found is None:
        return ""
    message, fixed, _ = found
    return message + (_FIXED.format(code=fixed) if fixed else "")


def part_correction(question: str, codes: list[str]) -> Correction | None:
    """What Reckon runs instead of sending ``part_recheck``'s message: the last cell
    with the one named number in place of the one compared with; None where no single
    number can be put right."""
    found = _mismatch(question, codes)
    if found is None or not found[1]:
        return None
    _, fixed, fields = found
    wanted, used = fields["wanted"], fields["used"]
    note = f"Reckon ran the model's cell again with {wanted} in place of {used}."
    return Correction(fixed, _RAN.format(code=fixed, **fields), note)


def _mismatch(question: str, codes: list[str]) -> tuple[str, str, dict[str, str]] | None:
    """``(message, the cell put right or "", the message's fields)`` for the first
    part the last cell compares with a number the question does not name."""
    asked = named_parts(question)
    code = codes[-1] if codes else ""
    for part, used, constant in _compared_parts(code):
        wanted = asked.get(part) or set()
        if wanted and not used & wanted:
            fields = {
                "named": " and ".join(part_name(part, n) for n in sorted(wanted)),
                "part": f".dt.{part}",
                "used": ", ".join(str(n) for n in sorted(used)),
                "numbering": NUMBERING[part],
                "wanted": ", ".join(str(n) for n in sorted(wanted)),
            }
            fixed = _put_right(code, constant, wanted) if len(wanted) == 1 else ""
            return PART_MESSAGE.format(**fields), fixed, fields
    return None


def named_parts(question: str) -> dict[str, set[int]]:
    """The months (1-12), years and weekdays (Monday 0) the question names."""
    words = [w.lower() for w in _TOKEN.findall(question)]
    asked = {
        "month": {_MONTHS.index(w) + 1 for w in words if w in _MONTHS and w != "may"},
        "year": {int(y) for y in re.findall(r"\b(1[89]\d\d|2\d\d\d)\b", question)},
        "weekday": {_WEEKDAYS.index(w.rstrip("s")) for w in words if w.rstrip("s") in _WEEKDAYS},
    }
    if "may" in words and re.search(r"\bMay\b", question):
        asked["month"].add(5)
    asked["dayofweek"] = asked["weekday"]
    return asked


def _put_right(code: str, constant: ast.Constant | None, wanted: set[int]) -> str:
    """``code`` with ``constant`` (one line's number) replaced by the one wanted."""
    return "" if constant is None else replace_node(code, constant, str(*wanted))


def replace_node(code: str, node: ast.expr, text: str) -> str:
    """``code`` with ``node`` (on one line) written as ``text``, or ``""``."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return ""
    lines = code.splitlines()
    line = lines[node.lineno - 1].encode()  # ast's column offsets count UTF-8 bytes
    start, end = node.col_offset, node.end_col_offset
    lines[node.lineno - 1] = (line[:start] + text.encode() + line[end:]).decode()
    return "\n".join(lines)


def part_name(part: str, number: int) -> str:
    if part == "month":
        return _MONTHS[number - 1].title()
    return str(number) if part == "year" else _WEEKDAYS[number].title()


def _compared_parts(code: str) -> list[tuple[str, set[int], ast.Constant | None]]:
    """``(part, numbers, the number's node)`` for each ``X.dt.<part> == n`` or
    ``X.dt.<part>.isin([...])`` that ``code`` holds (the node of ``== n`` only)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and [type(o) for o in node.ops] == [ast.Eq]:
            pairs.append((node.left, node.comparators[0]))
        func = node.func if isinstance(node, ast.Call) else None
        isin = isinstance(func, ast.Attribute) and func.attr == "isin"
        if isinstance(node, ast.Call) and isinstance(func, ast.Attribute) and isin and node.args:
            pairs.append((func.value, node.args[0]))
    found = [
        (_part(left), _ints(right), right if isinstance(right, ast.Constant) else None)
        for left, right in pairs
    ]
    return [(part, value, node) for part, value, node in found if part and value]


def _part(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute) and node.attr in NUMBERING:
        inner = node.value
        if isinstance(inner, ast.Attribute) and inner.attr == "dt":
            return node.attr
    return ""


def _ints(node: ast.expr) -> set[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {node.value}
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        values = [_ints(e) for e in node.elts]
        return set().union(*values) if values and all(values) else set()
    return set()
