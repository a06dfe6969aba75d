"""A question about a period answered per date: the check that sends it back.

Seen with a small model: "which month had the most precipitation?" answered by
grouping the rows by the date itself (one group per day), then the label of the
largest: the wettest single day's month, March, where the wettest month was November.
The number was computed and traced, so nothing else caught it. The check reads the
question for a period (a month, a year, a week, a quarter, a weekday, an hour) and the
model's code for a ``groupby`` over a whole date column, and sends the answer back once
with the grouping the question means. It reads code, never runs it, and says nothing
when the code derived the period itself (``.dt.month``, ``to_period``, ``resample``) or
rewrote the column before grouping.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from reckon.agent._types import JSONDict

__all__ = [
    "PART_MESSAGE",
    "PERIOD_MESSAGE",
    "asked_period",
    "date_columns",
    "part_recheck",
    "period_recheck",
]

# A period word -> how pandas groups a datetime column by it. Months by name: seen
# with the real model, grouping by .dt.month and then calling .strftime('%B') on the
# month number it got, three times over.
_PERIODS = {
    "year": ".dt.year", "quarter": ".dt.quarter", "month": ".dt.month_name()",
    "week": ".dt.isocalendar().week", "weekday": ".dt.day_name()", "hour": ".dt.hour",
}  # fmt: skip
_WORDS = {
    "year": "year", "years": "year", "yearly": "year", "annual": "year", "annually": "year",
    "quarter": "quarter", "quarters": "quarter", "quarterly": "quarter",
    "month": "month", "months": "month", "monthly": "month",
    "week": "week", "weeks": "week", "weekly": "week",
    "weekday": "weekday", "weekdays": "weekday", "hour": "hour", "hours": "hour",
    "hourly": "hour",
}  # fmt: skip
_DAY_OF_WEEK = re.compile(r"\bday(?:s)? of (?:the )?week\b", re.I)
_TOKEN = re.compile(r"[A-Za-z]+")
_DATE_NAMES = {"date", "datetime", "timestamp", "time", "dates"}
_DERIVED = {"dt", "index"}

PERIOD_MESSAGE = (
    "The question asks per {period}, but your code grouped the rows by the whole date "
    "column {column!r} (one group per distinct date and time), not by {period}. Group by "
    "the {period} instead, for example df.groupby(df[{column!r}]{accessor}) (or "
    "df[{column!r}].dt.to_period(...) for each {period} of each year), then answer again "
    "from the new output.{named}"
)
# What the model did next when it was not said: .strftime('%B') on the name it got.
_NAMED = " Its labels are already names: print them as they are, with no .strftime."


# Seen: "how much rain fell in November" computed over `.dt.month == 10`.
PART_MESSAGE = (
    "The question names {named}, but your code compares {part} with {used}. Check the "
    "numbering ({numbering}), run the corrected code, then answer from its output."
)
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]  # fmt: skip
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERING = {
    "month": "January is 1, December is 12",
    "dayofweek": "Monday is 0, Sunday is 6",
    "weekday": "Monday is 0, Sunday is 6",
    "year": "the year as written, e.g. 2012",
}


def part_recheck(question: str, codes: list[str]) -> str:
    """``PART_MESSAGE`` when the code picks a month, weekday or year by a number the
    question does not name (``.dt.month == 10`` for November), or ``""``. Where one
    number is compared with and one is named, the message carries the cell with that
    number put right: the real model sent its cell back unchanged when only told."""
    words = [w.lower() for w in _TOKEN.findall(question)]
    asked = {
        "month": {_MONTHS.index(w) + 1 for w in words if w in _MONTHS and w != "may"},
        "year": {int(y) for y in re.findall(r"\b(1[89]\d\d|2\d\d\d)\b", question)},
        "weekday": {_WEEKDAYS.index(w.rstrip("s")) for w in words if w.rstrip("s") in _WEEKDAYS},
    }
    if "may" in words and re.search(r"\bMay\b", question):
        asked["month"].add(5)
    asked["dayofweek"] = asked["weekday"]
    code = codes[-1] if codes else ""
    for part, used, constant in _compared_parts(code):
        wanted = asked.get(part) or set()
        if wanted and not used & wanted:
            message = PART_MESSAGE.format(
                named=" and ".join(_part_name(part, n) for n in sorted(wanted)),
                part=f".dt.{part}",
                used=", ".join(str(n) for n in sorted(used)),
                numbering=_NUMBERING[part],
            )
            fixed = _put_right(code, constant, wanted) if len(wanted) == 1 else ""
            return message + (_FIXED.format(code=fixed) if fixed else "")
    return ""


_FIXED = "\nYour cell with that number put right:\n```python\n{code}\n```"


def _put_right(code: str, constant: ast.Constant | None, wanted: set[int]) -> str:
    """``code`` with ``constant`` (one line's number) replaced by the one wanted."""
    if constant is None or constant.lineno != constant.end_lineno:
        return ""
    lines = code.splitlines()
    line = lines[constant.lineno - 1].encode()
    start, end = constant.col_offset, constant.end_col_offset or constant.col_offset
    lines[constant.lineno - 1] = (line[:start] + str(*wanted).encode() + line[end:]).decode()
    return "\n".join(lines)


def _part_name(part: str, number: int) -> str:
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
    if isinstance(node, ast.Attribute) and node.attr in _NUMBERING:
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


def asked_period(question: str, columns: Iterable[str] = ()) -> str:
    """The period the question groups or compares by (``"month"``), or ``""``. A word
    that names one of the table's columns is that column, not a period."""
    named = {w.lower() for c in columns for w in _TOKEN.findall(str(c))}
    if _DAY_OF_WEEK.search(question) and "weekday" not in named:
        return "weekday"
    for token in _TOKEN.findall(question):
        period = _WORDS.get(token.lower())
        if period and token.lower() not in named and period not in named:
            return period
    return ""


def date_columns(environment: JSONDict) -> set[str]:
    """Columns of the uploads that hold dates: loaded as dates, or named as dates."""
    return {
        name
        for name, dtype in _columns(environment)
        if dtype.startswith("datetime") or {w.lower() for w in _TOKEN.findall(name)} & _DATE_NAMES
    }


def _columns(environment: JSONDict) -> list[tuple[str, str]]:
    """``(name, dtype)`` of every column of every upload (dtype ``""`` when unknown)."""
    return [
        (str(c.get("name")), str(c.get("dtype") or "")) if isinstance(c, dict) else (str(c), "")
        for f in environment.get("files") or []
        if isinstance(f, dict)
        for c in f.get("columns") or []
    ]


def period_recheck(question: str, codes: list[str], environment: JSONDict) -> str:
    """The message that sends an answer back (``PERIOD_MESSAGE``), or ``""``."""
    dates = date_columns(environment)
    period = asked_period(question, [name for name, _ in _columns(environment)])
    if not period or not dates or not codes:
        return ""
    column = _whole_date_key(codes[-1], dates)
    if not column or any(_rewrites(code, column) for code in codes):
        return ""
    accessor = _PERIODS[period]
    named = _NAMED if accessor.endswith("_name()") else ""
    return PERIOD_MESSAGE.format(period=period, column=column, accessor=accessor, named=named)


def _whole_date_key(code: str, dates: set[str]) -> str:
    """The date column a ``groupby`` of ``code`` groups by as it stands, or ``""``."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "groupby":
            continue
        keys = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "by")]
        for key in keys:
            for name in _key_columns(key):
                if name in dates:
                    return name
    return ""


def _key_columns(key: ast.expr) -> list[str]:
    """Columns a groupby key names as they are: ``'date'``, ``['date', 'x']``,
    ``df['date']``, ``df.date``; a key that calls or reads an accessor names none."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return [key.value]
    if isinstance(key, ast.List | ast.Tuple):
        return [name for element in key.elts for name in _key_columns(element)]
    if isinstance(key, ast.Subscript) and isinstance(key.slice, ast.Constant):
        value = key.slice.value
        return [value] if isinstance(value, str) and isinstance(key.value, ast.Name) else []
    if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name):
        return [key.attr] if key.attr not in _DERIVED else []
    return []


def _rewrites(code: str, column: str) -> bool:
    """Whether ``code`` gives the column other values than dates (``df['date'] =
    df['date'].dt.month``, ``assign(date=...)``, ``rename(...)``) or groups by a period
    some other way (``to_period``, ``resample``), so what it groups by may already be
    the period. Parsing the column as dates (``pd.to_datetime``) is not a rewrite."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if any(_names_column(t, column) for t in targets) and not _parses_dates(value):
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "assign" and any(
                k.arg == column and not _parses_dates(k.value) for k in node.keywords
            ):
                return True
            if node.func.attr in ("to_period", "resample", "rename", "Grouper"):
                return True
    return False


def _names_column(target: ast.expr, column: str) -> bool:
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        return target.slice.value == column
    return isinstance(target, ast.Attribute) and target.attr == column


def _parses_dates(value: ast.expr | None) -> bool:
    """``pd.to_datetime(...)`` or ``....astype('datetime64[ns]')``: still whole dates."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name == "to_datetime":
        return True
    return name == "astype" and any(
        isinstance(a, ast.Constant) and str(a.value).startswith("datetime") for a in value.args
    )
