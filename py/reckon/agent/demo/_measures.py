"""What a question's measure and grouping mean beyond the column names: a level (a price,
a temperature, a rate) is averaged, never added up, when the question says neither; "per
month" groups by the month of a date column; and a "by X" that names no column is a
part of the question the demo did not do, which its answer then says.
"""

from __future__ import annotations

import re

from reckon.agent.demo._columns import Column, find_columns, tokens
from reckon.agent.demo._intent import Intent

__all__ = [
    "AGG_WORDS",
    "PERIODS",
    "date_column",
    "default_agg",
    "find_period",
    "is_level",
    "period_answer",
    "unhonoured_note",
    "unmatched_grouping",
]

AGG_WORDS = {"mean": "average", "sum": "total", "count": "count", "max": "maximum",
             "min": "minimum", "median": "median"}  # fmt: skip
# A value that describes one row at one moment: a mean of them means something, a sum not.
_LEVELS = {"price", "rate", "ratio", "percent", "percentage", "pct", "share", "temperature",
           "temp", "age", "score", "rating", "average", "avg", "mean", "median", "ctr",
           "density", "speed", "wind", "height", "humidity", "pressure"}  # fmt: skip
# The words of a period -> pandas' period alias.
PERIODS = {"day": "D", "week": "W", "month": "M", "quarter": "Q", "year": "Y"}
_PERIOD_WORDS = {"daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter",
                 "yearly": "year", "annual": "year", "annually": "year"}  # fmt: skip
_GROUPING = re.compile(
    r"\b(?:by|per|for each|for every|each|every|grouped by|broken down by)\s+(?:the\s+)?"
    r"(?P<what>[^\s,.;?!]+(?:\s+[^\s,.;?!]+)?)",
    re.I,
)


def is_level(column: Column | None) -> bool:
    """A price, a temperature, a rate: averaged when the question names no aggregate."""
    return column is not None and column.numeric and bool(set(tokens(column.name)) & _LEVELS)


def default_agg(column: Column | None) -> str:
    return "mean" if is_level(column) else "sum"


def find_period(question: str, intent: Intent) -> str:
    """``"month"`` for "total rain per month" / "monthly rain" when no column is named so
    (then its date column's month is meant); ``""`` when the question names no period."""
    for match in _GROUPING.finditer(question):
        first = tokens(match.group("what"))[:1]
        if first and first[0] in PERIODS and not _named(first[0], intent.all_columns):
            return first[0]
    for token in tokens(question):
        period = _PERIOD_WORDS.get(token)
        if period and not _named(period, intent.all_columns):
            return period
    return ""


def date_column(intent: Intent) -> Column | None:
    """The column whose dates a period groups: one the question names, else the first
    datetime column, else the first text column named for a date."""
    named = [c for c in intent.columns if c.temporal and not c.numeric]
    dated = [c for c in intent.all_columns if c.dtype.lower().startswith("datetime")]
    by_name = [c for c in intent.all_columns if c.temporal and not c.numeric]
    return next(iter(named + dated + by_name), None)


def unmatched_grouping(question: str, intent: Intent) -> str:
    """A "per X" / "by X" whose X is no column and no period: the words, else ``""``."""
    for match in _GROUPING.finditer(question):
        what = match.group("what")
        first = tokens(what)[:1]
        if not first or first[0] in PERIODS or first[0] in {"row", "value", "of", "a", "all"}:
            continue
        if find_columns(what, intent.all_columns) or find_columns(first[0], intent.all_columns):
            continue
        return f"{match.group(0).split()[0].lower()} {what}"
    return ""


def unhonoured_note(intent: Intent) -> str:
    """The sentence an answer ends with when it left out a part of the question."""
    if not intent.unhonoured:
        return ""
    entry = intent.file or {}
    name = str(entry.get("name") or str(entry.get("path", "the file")).rsplit("/", 1)[-1])
    if intent.unhonoured.startswith("per ") and intent.unhonoured[4:] in PERIODS:
        if intent.when is not None:
            return (
                f" I did not do the “{intent.unhonoured}” part: this chart groups by a column; "
                f"ask for a line chart {intent.unhonoured} to see it over {intent.when.name}."
            )
        why = f"no column of {name} holds dates"
    else:
        why = f"no column of {name} is called that"
    names = ", ".join(c.name for c in intent.all_columns[:20])
    return (
        f" I did not do the “{intent.unhonoured}” part: {why}, so this is over all rows "
        f"(its columns: {names})."
    )


def period_answer(
    intent: Intent, fields: dict[str, str], items: list[tuple[str, str]], what: str
) -> str:
    """ "Total precipitation per month of date (4 months): 2012-01 173.3, …", in time order."""
    when = intent.when.name if intent.when is not None else "the dates"
    groups = fields.get("groups", str(len(items)))
    shown = ", ".join(f"{key} {value}" for key, value in items[:12])
    more = int(groups) - min(12, len(items)) if groups.isdigit() else 0
    text = (
        f"{what[0].upper()}{what[1:]} per {intent.period} of {when} ({groups} {intent.period}s): "
    )
    text += shown + (f", and {more} more" if more > 0 else "") + "."
    if "highest" in fields:
        key, _, value = fields["highest"].partition(" = ")
        text += f" The highest is {key} ({value})."
    missing = fields.get("rows without a date", "0")
    if missing not in {"", "0"}:
        text += f" {missing} rows have no date {when} could be read from and are left out."
    return text


def _named(word: str, columns: list[Column]) -> bool:
    return any(tokens(c.name) == [word] for c in columns)
