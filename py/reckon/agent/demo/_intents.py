"""What the demo model thinks a question asks for: a small, explicit grammar.

Matching is keyword-based on purpose: it is predictable, explains itself and
fails honestly (``kind == "help"``) instead of guessing.
"""

from __future__ import annotations

import re

from reckon.agent._types import JSONDict
from reckon.agent.demo._columns import Column, choose_file, columns_of, find_columns, tokens
from reckon.agent.demo._intent import Intent
from reckon.agent.demo._math import parse_math
from reckon.agent.demo._measures import (
    date_column,
    default_agg,
    find_period,
    unmatched_grouping,
)

__all__ = ["parse_intent"]

_AGGREGATES = [
    ("mean", r"\b(average|avg|mean)\b"),
    ("sum", r"\b(total|sum|overall)\b"),
    ("median", r"\bmedian\b"),
    ("max", r"\b(max|maximum|highest|largest|biggest)\b"),
    ("min", r"\b(min|minimum|lowest|smallest)\b"),
    ("count", r"\b(count|number of|how many)\b"),
]
_COMPARISONS = [
    (">=", r">=|\bat least\b|\bgreater than or equal to\b"),
    ("<=", r"<=|\bat most\b|\bless than or equal to\b"),
    ("!=", r"!=|\bnot equal to\b|\bis not\b"),
    (">", r">|\bgreater than\b|\bmore than\b|\bover\b|\babove\b|\bhigher than\b|\bexceeds?\b"),
    ("<", r"<|\bless than\b|\bfewer than\b|\bunder\b|\bbelow\b|\blower than\b"),
    ("==", r"==|=|\bequal to\b|\bequals\b|\bis\b"),
]
_COMPARISON_OPS = {op for op, _ in _COMPARISONS}
_COUNT_WORDS = re.compile(r"\b(how many|count|number of)\b")
# "which region sold the most units": one group, ranked; these words say which end.
_SUPERLATIVE = re.compile(
    r"\b(most|highest|largest|biggest|greatest|best|top|least|lowest|smallest|fewest|worst)\b"
)
_ASCENDING = {"least", "lowest", "smallest", "fewest", "worst", "bottom"}
_NUMBER = r"-?\d+(?:\.\d+)?"
_OVERVIEW = re.compile(
    r"summar|overview|what'?s in|what is in|describe the (data|file|table|dataset)|"
    r"tell me about|look at|explore|show me the (data|file|table)|\bcolumns\b|\bhead\b"
)


def parse_intent(question: str, files: list[JSONDict]) -> Intent:
    text = " ".join(question.strip().split())
    lowered = text.lower()
    math = parse_math(text)
    if math is not None:
        return math
    entry = choose_file(text, files)
    if entry is None:
        return Intent("nofile" if _sounds_like_data(lowered) else "help", question=text)
    all_columns = columns_of(entry)
    intent = Intent("help", question=text, file=entry, all_columns=all_columns)
    intent.columns = find_columns(text, all_columns)
    # Words inside a column's name ("Number of Offences", "Total") are not requests.
    rest = _without_columns(lowered, intent.columns)
    intent.agg = _aggregate(rest)
    summed = _summed_column(lowered, intent)
    if summed is not None:  # "number of units by region": the units, added up
        intent.agg = "sum" if intent.agg in {"", "count"} else intent.agg
        intent.columns = [summed, *[c for c in intent.columns if c != summed]]
    if "correlat" in lowered or re.search(r"\brelationship\b|\brelated\b", lowered):
        intent.kind = "correlation"
    elif chart := _chart(lowered):
        intent.kind, intent.chart = "chart", chart
    elif top := re.search(
        r"\b(top|bottom|highest|lowest|largest|smallest|best|worst)\s+(\d+)\b", lowered
    ):
        intent.kind, intent.n = "top", int(top.group(2))
        intent.ascending = top.group(1) in _ASCENDING
    elif (which := _which(lowered, rest, intent)) is not None:
        end, intent.group = which
        others = [c for c in intent.columns if c != intent.group]
        intent.measure = next((c for c in others if c.numeric), next(iter(others), None))
        intent.kind, intent.n, intent.ascending = "top", 1, end in _ASCENDING
        if intent.measure is None:  # "which region has the most orders": rows per region
            intent.agg = "count"
        elif intent.agg not in {"mean", "median", "sum"}:
            intent.agg = default_agg(intent.measure)
    elif _COUNT_WORDS.search(rest) and summed is None:
        _count(intent, lowered)
    elif re.search(r"\b(by|per|for each|for every|across|grouped by)\b", lowered) and (
        intent.agg and intent.columns
    ):
        intent.kind = "groupby"
    elif intent.agg and intent.numeric:
        intent.kind = "aggregate"
    elif len(intent.columns) == 1 and re.search(
        r"describe|statistic|stats|summar|distribution|tell me about|about", lowered
    ):
        intent.kind = "describe"
    elif _OVERVIEW.search(lowered):
        intent.kind = "overview"
    _periods_and_levels(intent, lowered)
    if intent.kind == "groupby" and not intent.categorical and not intent.period:
        intent.kind = "aggregate" if intent.numeric else "help"
    # A "by X" that none of the plan uses: the answer says it was not done.
    if not intent.unhonoured and intent.kind in {"aggregate", "count"}:
        intent.unhonoured = unmatched_grouping(lowered, intent)
    if intent.kind in {"chart", "top"} and not intent.columns:
        intent.kind = "nocolumn"
    if intent.kind == "count" and intent.op in _COMPARISON_OPS and not intent.numeric:
        intent.kind = "nocolumn"
    return intent


def _periods_and_levels(intent: Intent, lowered: str) -> None:
    """ "per month" groups by a date column's month; a level (a price) is averaged when
    no aggregate is named; a "by X" that names nothing is kept to be said."""
    period = find_period(lowered, intent)
    if period and intent.kind in {"aggregate", "groupby", "count", "chart"}:
        intent.when = date_column(intent)
        if intent.when is None:
            intent.unhonoured = f"per {period}"
        elif intent.kind == "chart" and intent.chart not in {"line", "auto"}:
            intent.unhonoured = f"per {period}"  # a bar chart groups by a column
        else:
            intent.period = period
            if intent.kind == "count":
                intent.kind, intent.agg = "groupby", "count"
            elif intent.kind == "aggregate":
                intent.kind = "groupby"
            if intent.kind == "chart" and intent.chart == "auto":
                intent.chart = "line"
    if not intent.agg and intent.kind in {"top", "groupby", "chart"}:
        value = intent.measure or next(iter(intent.numeric), None)
        if value is None and intent.kind == "chart":
            value = next((c for c in intent.all_columns if c.numeric), None)
        if default_agg(value) == "mean":
            intent.agg = "mean"


def _without_columns(lowered: str, columns: list[Column]) -> str:
    for column in sorted(columns, key=lambda c: -len(c.name)):
        lowered = re.sub(rf"\b{_loose(column.name.lower())}s?\b", " ", lowered)
    return lowered


def _summed_column(lowered: str, intent: Intent) -> Column | None:
    """A numeric column named right after "how many" / "number of" / "count of"."""
    if any(re.search(pattern, lowered) for op, pattern in _COMPARISONS if op != "=="):
        return None  # "how many rows where price > 100" counts rows
    for column in intent.numeric:
        name = _loose(column.name.lower())
        if re.search(rf"\b(how many|number of|count of)\s+(the\s+)?{name}s?\b", lowered):
            return column
    return None


def _which(lowered: str, rest: str, intent: Intent) -> tuple[str, Column] | None:
    """For "which/what <column> ... most/least ...": the superlative word and that column."""
    found = _SUPERLATIVE.search(rest)
    if found is None:
        return None
    for column in intent.columns:
        if re.search(rf"\b(which|what)\s+{_loose(column.name.lower())}s?\b", lowered):
            return found.group(1), column
    return None


def _sounds_like_data(lowered: str) -> bool:
    return bool(
        re.search(
            r"data|file|table|csv|column|row|chart|plot|graph|histogram|average|mean|total|"
            r"summar|correlat|top \d|how many",
            lowered,
        )
    )


def _aggregate(lowered: str) -> str:
    for name, pattern in _AGGREGATES:
        if re.search(pattern, lowered):
            return name
    return ""


def _chart(lowered: str) -> str:
    if re.search(r"histogram|distribution", lowered):
        return "histogram"
    if "scatter" in lowered:
        return "scatter"
    if re.search(r"\bbar\b|\bbars\b", lowered):
        return "bar"
    if re.search(r"\bline\b|over time|trend", lowered):
        return "line"
    if re.search(r"\b(plot|chart|graph|visuali[sz]e|draw)\b", lowered):
        return "auto"
    return ""


def _count(intent: Intent, lowered: str) -> None:
    """``how many rows where price > 100``, ``how many orders from Spain``, ``count by region``."""
    intent.kind = "count"
    if re.search(r"\b(unique|distinct|different)\b", lowered) and intent.columns:
        intent.op = "unique"
        return
    for op, pattern in _COMPARISONS:
        match = re.search(rf"(?:{pattern})\s*(?P<value>{_NUMBER})\b", lowered)
        if match:
            intent.op, intent.value = op, match.group("value")
            if not intent.numeric and intent.columns:
                intent.columns = []
            return
    if _text_condition(intent):
        return
    if re.search(r"\b(by|per|for each)\b", lowered) and intent.categorical:
        intent.kind, intent.agg = "groupby", "count"
        return
    intent.op = "rows"


_VALUE_KEYWORDS = re.compile(r"(?:\b(?:from|in|with|where|whose|is|equals?|named|called)\b|=)\s+")
_NOT_VALUES = {
    "the",
    "a",
    "file",
    "data",
    "dataset",
    "table",
    "sheet",
    "csv",
    "it",
    "all",
    "row",
    "total",
    "there",
    "this",
    "of",
}


def _text_condition(intent: Intent) -> bool:
    """Find ``<keyword> [column] <value>`` with the value searched as text.

    The rightmost keyword wins ("rows where place is Galway" → place, Galway).
    """
    question = intent.question.rstrip(" ?.!")
    for match in reversed(list(_VALUE_KEYWORDS.finditer(question))):
        value = question[match.end() :].strip().strip("'\"")
        if not value or set(tokens(value)) <= _NOT_VALUES:
            continue
        column: Column | None = None
        for candidate in intent.all_columns:
            prefix = re.match(rf"{_loose(candidate.name)}\s+(?:is\s+|=\s*)?(.+)$", value, re.I)
            if prefix:
                column, value = candidate, prefix.group(1).strip().strip("'\"")
                break
        if find_columns(value, intent.all_columns) and column is None:
            continue
        if column is None:
            before = find_columns(question[: match.start()], intent.all_columns)
            column = next((c for c in reversed(before) if not c.numeric), None)
        intent.op, intent.value = "text", value
        intent.columns = [column] if column is not None else []
        return True
    return False


def _loose(name: str) -> str:
    """A regex for ``name`` that accepts spaces, underscores or hyphens between its words."""
    words = re.findall(r"[0-9A-Za-z]+", name)
    return r"[\s_\-]*".join(re.escape(w) for w in words) if words else re.escape(name)
