"""A month, year or weekday the question names that no cell picks out of the dates.

Seen with the 1.5B model: "rain days in 2014" counted over every year; "on Sundays"
read as ``weather == 'sun'``; told so, it ran the same cell again. Where the cell has
one filter to add to (a date part it compares, or one row mask of a table), Reckon
runs it with the named part added (``Correction``); otherwise the model is told.
"""

from __future__ import annotations

import ast
import re

from reckon.agent._steps import Correction
from reckon.agent._types import JSONDict
from reckon.agent.checks._date_parts import NUMBERING, named_parts, part_name, replace_node
from reckon.agent.checks._periods import columns, date_columns

__all__ = ["UNPICKED_MESSAGE", "unpicked_correction", "unpicked_recheck"]

UNPICKED_MESSAGE = (
    "The question names {named}, but your code never picks {what} out of the dates. "
    "Select those rows first, for example df[df[{column!r}].dt.{accessor} == {example}] "
    "({numbering}), run the corrected code, then answer from its output."
)
_TOKEN = re.compile(r"[A-Za-z]+")
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]  # fmt: skip
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def unpicked_recheck(question: str, codes: list[str], environment: JSONDict) -> str:
    """``UNPICKED_MESSAGE`` when the question names a month, year or weekday, the
    uploads hold dates, and none of this answer's cells picks that part of them, or
    ``""``. A table with a column of that name is left to the model: its cells may
    pick the part from there."""
    found = _unpicked(question, codes, environment)
    if found is None:
        return ""
    part, wanted, column = found
    accessor = _ACCESSORS[part]
    return UNPICKED_MESSAGE.format(
        named=" and ".join(part_name(part, n) for n in sorted(wanted)),
        what=_PART_WORDS[part],
        column=column,
        accessor=accessor,
        example=min(wanted),
        numbering=NUMBERING[accessor],
    )


def unpicked_correction(
    question: str, codes: list[str], environment: JSONDict
) -> Correction | None:
    """The last cell with the one named part added to its one filter, for Reckon to
    run, or None: the filter is the one date part the cell compares
    (``df['date'].dt.month == 8`` gains ``& (df['date'].dt.year == 2012)``), else the
    one row mask of a table (``df[df['weather'] == 'rain']``), and only on a column
    loaded as dates."""
    found = _unpicked(question, codes, environment)
    if found is None or len(found[1]) != 1:
        return None
    part, wanted, column = found
    if column not in {n for n, dtype in columns(environment) if dtype.startswith("datetime")}:
        return None
    code = codes[-1]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    value, accessor = min(wanted), _ACCESSORS[part]
    compared = [n for n in ast.walk(tree) if isinstance(n, ast.Compare) and _compares_part(n)]
    masks = [n for n in ast.walk(tree) if _row_mask(n) is not None]
    owner = _dt_owner(compared[0]) if len(compared) == 1 else None
    if owner is not None:
        node: ast.expr = compared[0]
        dates = ast.unparse(owner)
    elif not compared and len(masks) == 1 and isinstance(masks[0], ast.Subscript):
        node = masks[0].slice
        dates = f"{ast.unparse(masks[0].value)}[{column!r}]"
    else:
        return None
    added = f"{dates}.dt.{accessor} == {value}"
    # A mask that took the named part for a value ('sun' for Sunday, seen) is replaced.
    name = part_name(part, value).lower()
    misread = any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) >= 3
        and name.startswith(n.value.lower())
        for n in ast.walk(node)
    )  # fmt: skip
    fixed = replace_node(code, node, added if misread else f"({ast.unparse(node)}) & ({added})")
    if not fixed:
        return None
    how = f"in place of {ast.unparse(node)}" if misread else "added to its filter"
    fields = {"named": part_name(part, value), "what": _PART_WORDS[part], "how": how,
              "numbering": NUMBERING[accessor], "added": added, "code": fixed}  # fmt: skip
    note = f"Reckon ran the model's cell again with {added} {how}."
    return Correction(fixed, _ADDED.format(**fields), note)


# Begins as the other rechecks of date parts do (never read back as the question).
_ADDED = (
    "The question names {named}, but your code never picks {what} out of the dates "
    "({numbering}). Reckon ran your cell again with {added} {how}:\n"
    "```python\n{code}\n```\n"
)
_ACCESSORS = {"year": "year", "month": "month", "weekday": "dayofweek"}
_DT_PARTS = {"year", "month", "day", "dayofweek", "weekday", "quarter", "hour"}


def _unpicked(
    question: str, codes: list[str], environment: JSONDict
) -> tuple[str, set[int], str] | None:
    """``(part, the values named, a date column)`` of the first part the question
    names that no cell picks (seen: "rain days in 2014" counted over every year; "on
    Sundays" read as ``weather == 'sun'``)."""
    dates = sorted(date_columns(environment))
    if not dates or not codes:
        return None
    named = {w.lower() for name, _ in columns(environment) for w in _TOKEN.findall(name)}
    code = "\n".join(codes)
    asked = named_parts(question)
    for part in ("year", "month", "weekday"):
        wanted = asked[part]
        if wanted and not named & _PART_COLUMNS[part] and not _picks(part, wanted, code):
            return part, wanted, dates[0]
    return None


def _compares_part(node: ast.Compare) -> bool:
    """``X.dt.<part> == n`` (or another comparison with a number)."""
    if len(node.ops) != 1:
        return False
    left, right = node.left, node.comparators[0]
    return (
        _dt_owner(node) is not None
        and isinstance(right, ast.Constant)
        and (isinstance(left, ast.Attribute) and left.attr in _DT_PARTS)
    )


def _dt_owner(node: ast.Compare) -> ast.expr | None:
    """``X`` of ``X.dt.<part>`` on the comparison's left."""
    left = node.left
    inner = left.value if isinstance(left, ast.Attribute) else None
    if isinstance(inner, ast.Attribute) and inner.attr == "dt":
        return inner.value
    return None


def _row_mask(node: ast.AST) -> ast.expr | None:
    """The mask of ``T[mask]`` where ``mask`` compares a column of the same ``T``."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        return None
    mask, table = node.slice, node.value.id
    if not isinstance(mask, ast.Compare | ast.BinOp | ast.BoolOp | ast.UnaryOp):
        return None
    inner = [n for n in ast.walk(mask) if isinstance(n, ast.Subscript)]
    if any(isinstance(n.value, ast.Name) and n.value.id == table for n in inner):
        return mask
    return None


_PART_COLUMNS = {"year": {"year", "years"}, "month": {"month", "months"},
                 "weekday": {"weekday", "day", "dow", "dayofweek"}}  # fmt: skip
_PART_WORDS = {"year": "the year", "month": "the month", "weekday": "the day of the week"}
# What a cell that picks the part holds: an accessor, a period, a formatted date.
_PICKS = {
    "year": ("year", "to_period", "resample", "grouper", "strftime"),
    "month": ("month", "to_period", "resample", "grouper", "strftime"),
    "weekday": ("dayofweek", "day_of_week", "weekday", "day_name", "strftime"),
}
_DATE_TEXT = re.compile(r"\b\d{4}[-/]\d{1,2}\b")


def _picks(part: str, wanted: set[int], code: str) -> bool:
    """Does ``code`` pick ``part`` out of dates: an accessor or method (``.dt.year``,
    ``to_period``), or a text or number naming it (``'2014'``, ``'Sunday'``)? Only
    attributes, texts and numbers are read: a variable named ``sundays_total`` picks
    nothing (seen). Code that does not parse is given the benefit of the doubt."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return True
    attributes, texts, numbers = set(), [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            attributes.add(node.attr.lower())
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value.lower())
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            numbers.add(node.value)
    text = "\n".join(texts)
    if any(word in attribute for word in _PICKS[part] for attribute in attributes):
        return True
    if any(word in text for word in _PICKS[part]) or "%" in text:
        return True  # a column named so, or a date format
    if part == "year":
        return bool(numbers & wanted) or any(str(year) in text for year in wanted)
    if part == "month":
        names = {_MONTHS[m - 1] for m in wanted} | {_MONTHS[m - 1][:3] for m in wanted}
        return bool(names & set(_TOKEN.findall(text))) or bool(_DATE_TEXT.search(text))
    # Full names only: 'sun' is as often the weather as Sunday (seen).
    return any(_WEEKDAYS[d] in text for d in wanted)
