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

__all__ = ["PERIOD_MESSAGE", "asked_period", "columns", "date_columns", "period_recheck"]

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
        for name, dtype in columns(environment)
        if dtype.startswith("datetime") or {w.lower() for w in _TOKEN.findall(name)} & _DATE_NAMES
    }


def columns(environment: JSONDict) -> list[tuple[str, str]]:
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
    period = asked_period(question, [name for name, _ in columns(environment)])
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
