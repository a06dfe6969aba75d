"""The demo model's answers, written only from what the sandbox printed.

Every number in an answer is a substring of the observation's stdout; when the
expected lines are missing the answer says so instead of filling in.
"""

from __future__ import annotations

from reckon.agent.demo._intent import Intent
from reckon.agent.demo._lines import line_answer
from reckon.agent.demo._math_answer import math_answer
from reckon.agent.demo._measures import period_answer

__all__ = ["HELP", "answer_from", "explain_failure", "lead_in", "no_column", "no_file"]

HELP = """\
I can't handle that request on my own. Here is what I understand:
- an overview of a file: "summarize the data", "what's in sales.csv?"
- one column: "describe price"
- charts: "histogram of price", "bar chart of sales by region", "line chart of sales over date", \
"scatter plot of price vs quantity"
- group-bys: "average price by region", "total sales per month", "count by region"
- rankings: "top 5 products by sales", "bottom 3 regions by profit", \
"which region sold the most units"
- correlation: "correlation between price and quantity", "correlation matrix"
- counting and filtering: "how many rows where price > 100", "how many orders from Spain"
- math: "what is 17*23+4", "2**100", "integrate x**2 from 0 to 3", "solve x**2 - 4 = 0", \
"derivative of sin(x)*x", "factor x**2 - 1", "is 97 prime", "mean of 3, 5 and 10", \
"15% of 80"
For open-ended questions, configure a real model in the settings."""

_AGG_WORDS = {"mean": "average", "sum": "total", "count": "number of rows", "max": "maximum",
              "min": "minimum", "median": "median"}  # fmt: skip


def no_file(intent: Intent) -> str:
    return (
        "That question needs a table, but no readable table has been uploaded yet. "
        "Upload a CSV, Excel or ODS file and ask again."
    )


def no_column(intent: Intent) -> str:
    names = ", ".join(c.name for c in intent.all_columns[:30]) or "(none)"
    return (
        f"I couldn't tell which columns of {_file_name(intent)} you mean. Its columns are: "
        f"{names}. Name the columns as they appear there and ask again."
    )


def lead_in(intent: Intent, attempt: int) -> str:
    """The sentence shown before a cell runs."""
    if attempt > 0:
        if intent.kind == "math":
            return "That failed; I'll parse the expression more leniently."
        return "That failed; I'll read the file with read_table, which handles messy files."
    if intent.kind == "math" and intent.math == "statistic":
        return "I'll work this out exactly, with Python's statistics module and fractions."
    if intent.kind == "math":
        return "I'll compute this exactly with sympy."
    name = _file_name(intent)
    return f"I'll load {name} with pandas and compute that."


def _file_name(intent: Intent) -> str:
    entry = intent.file or {}
    return str(entry.get("name") or str(entry.get("path", "the file")).rsplit("/", 1)[-1])


def _fields(stdout: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """``label: value`` lines, and the indented ``  key: value`` item lines."""
    fields: dict[str, str] = {}
    items: list[tuple[str, str]] = []
    for line in stdout.splitlines():
        if line.startswith("  ") and ": " in line:
            key, _, value = line.strip().rpartition(": ")
            items.append((key, value))
        elif ": " in line:
            key, _, value = line.partition(": ")
            fields.setdefault(key.strip(), value.strip())
    return fields, items


def _listing(items: list[tuple[str, str]], limit: int = 10, *, total: str | None = None) -> str:
    """``key value`` pairs; "and N more" counts every item, printed or not (``total``)."""
    shown = ", ".join(f"{key} {value}" for key, value in items[:limit])
    count = int(total) if total is not None and total.isdigit() else len(items)
    if count > min(limit, len(items)):
        shown += f", and {count - min(limit, len(items))} more"
    return shown


def _ties(fields: dict[str, str], items: list[tuple[str, str]], key: str) -> int:
    """How many groups share the first item's value: printed by the cell, else counted."""
    printed = fields.get(key, "")
    if printed.isdigit():
        return int(printed)
    return sum(1 for _, value in items if items and value == items[0][1])


def answer_from(intent: Intent, sections: dict[str, str]) -> str:
    """The answer for a successful run, quoting its printed lines."""
    fields, items = _fields(sections.get("stdout", ""))
    figures = sections.get("figures", "").strip()
    name = _file_name(intent)
    kind = intent.kind
    text = ""
    if kind == "math":
        text = math_answer(intent, fields, items)
    elif kind == "overview" and "rows" in fields:
        text = f"{name} has {fields['rows']} rows. Columns: {fields.get('columns', '?')}."
        missing = fields.get("missing values")
        if missing is not None:
            text += (
                " No values are missing." if missing == "0" else f" {missing} values are missing."
            )
        if items:
            text += "\nNumeric columns:\n" + "\n".join(f"- {k}: {v}" for k, v in items)
    elif kind == "describe" and "values" in fields:
        column = intent.columns[0].name
        text = f"{column} has {fields['values']} values ({fields.get('missing', '0')} missing)."
        if "mean" in fields:
            text += (
                f" Mean {fields['mean']}, standard deviation {fields.get('std')}, "
                f"min {fields.get('min')}, median {fields.get('median')}, max {fields.get('max')}."
            )
        else:
            text += (
                f" {fields.get('unique', '?')} distinct values; most common: {_listing(items, 5)}."
            )
    elif kind == "chart":
        text = _chart_answer(fields, items)
    elif kind == "groupby" and items:
        what = _measure(intent)
        grouped = period_answer if intent.period else _groupby_answer
        text = grouped(intent, fields, items, what)
    elif kind == "top" and items:
        text = _top_answer(intent, fields, items)
    elif kind == "correlation":
        if "pearson r" in fields:
            a, b = intent.numeric[0].name, intent.numeric[1].name
            text = (
                f"The correlation between {a} and {b} is {fields['pearson r']} "
                f"(Pearson r, {fields.get('rows used', '?')} rows)."
            )
        elif "strongest" in fields:
            text = f"Correlation matrix computed; strongest pair: {fields['strongest']}."
    elif kind == "count":
        text = _count_answer(intent, fields, items)
    elif kind == "aggregate" and intent.agg in fields:
        column = intent.numeric[0].name
        word = _AGG_WORDS.get(intent.agg, intent.agg)
        text = f"The {word} of {column} is {fields[intent.agg]}"
        text += f" (over {fields['values used']} values)." if "values used" in fields else "."
    if not text:
        return (
            "The code ran, but it did not print what I expected, so I can't quote a result. "
            "Its output is shown above."
        )
    if kind == "chart" and figures:
        # The figure's text description is for the model; the person sees the chart.
        text += " The chart is shown above."
    return text


def _measure(intent: Intent) -> str:
    """ "total units", "average price", "number of rows": what the cell ranked by."""
    column = intent.measure if intent.group else next(iter(intent.numeric), None)
    value = column.name if column is not None else None
    if intent.agg == "count" or value is None:
        return "number of rows"
    return f"{_AGG_WORDS.get(intent.agg or 'sum', intent.agg)} {value}"


def _groupby_answer(
    intent: Intent, fields: dict[str, str], items: list[tuple[str, str]], what: str
) -> str:
    group = intent.categorical[0].name
    groups = fields.get("groups", str(len(items)))
    text = f"{what[0].upper()}{what[1:]} by {group} ({groups} groups): "
    text += _listing(items, total=groups) + "."
    tied = _ties(fields, items, "tied at the top")
    if tied > 1 and groups == str(tied):
        return text + f" All {tied} groups have the same value, {items[0][1]}."
    if tied > 1:
        return text + f" {tied} groups tie for the highest at {items[0][1]}."
    return text + f" The highest is {items[0][0]} ({items[0][1]})."


def _top_answer(intent: Intent, fields: dict[str, str], items: list[tuple[str, str]]) -> str:
    group_column = intent.group or next(iter(intent.categorical), None)
    if intent.n != 1 or group_column is None:
        word = "Bottom" if intent.ascending else "Top"
        # Which measure ranked them: "by average price" (a price is not added up).
        by = f" {group_column.name} by {_measure(intent)}" if group_column is not None else ""
        text = f"{word} {len(items)}{by}: " + "; ".join(f"{k}: {v}" for k, v in items) + "."
        tied, shown = _ties(fields, items[-1:], "tied at the cut"), fields.get("tied shown", "1")
        extra = tied - int(shown) if shown.isdigit() else 0
        if extra > 0:
            text += f" {extra} more tie with {items[-1][0]} at {items[-1][1]}."
        return text
    group = group_column.name
    end = "lowest" if intent.ascending else "highest"
    what = _measure(intent)
    key, value = items[0]
    tied = _ties(fields, items, "tied at the cut")
    if tied > 1:
        names = [n for n in fields.get("tied", "").split("; ") if n]
        more = f" and {tied - len(names)} more" if names and tied > len(names) else ""
        listed = f" ({', '.join(names)}{more})" if names else ""
        every = "All " if fields.get("groups") == str(tied) else ""
        return f"{every}{tied} {group} values tie for the {end} {what}, at {value}{listed}."
    return f"The {group} with the {end} {what} is {key} ({value})."


def _chart_answer(fields: dict[str, str], items: list[tuple[str, str]]) -> str:
    title = f" {fields['chart']!r}" if fields.get("chart") else ""
    if "values" in fields:
        return (
            f"I made the histogram{title}: {fields['values']} values from {fields.get('min')} "
            f"to {fields.get('max')}, mean {fields.get('mean')}."
        )
    if "correlation" in fields:
        return (
            f"I made the scatter plot{title} of {fields.get('points')} points; "
            f"their correlation is {fields['correlation']}."
        )
    if "highest" in fields or "lines" in fields:
        return line_answer(fields, items, title)
    if items:
        groups = fields.get("groups")
        shown = (
            f" (the top {len(items)} of {groups} are drawn)"
            if groups and int(groups) > len(items)
            else ""
        )
        return f"I made the bar chart{title}{shown}: {_listing(items)}."
    return ""


def _count_answer(intent: Intent, fields: dict[str, str], items: list[tuple[str, str]]) -> str:
    if intent.op == "rows" and "rows" in fields:
        return f"The table has {fields['rows']} rows."
    if intent.op == "unique" and "unique" in fields:
        return f"{intent.columns[0].name} has {fields['unique']} distinct values."
    if "matching rows" not in fields:
        return ""
    total = fields.get("total rows", "?")
    if intent.op == "text":
        where = f"{intent.columns[0].name} is" if intent.columns else "a value equals"
        text = f"{fields['matching rows']} of {total} rows match ({where} {intent.value!r})."
        if items:
            text += " Matches by column: " + ", ".join(f"{k} {v}" for k, v in items) + "."
        return text
    column = intent.numeric[0].name
    return f"{fields['matching rows']} of {total} rows have {column} {intent.op} {intent.value}."


def explain_failure(intent: Intent, sections: dict[str, str]) -> str:
    """The answer after the retry failed too: what broke, in the sandbox's words."""
    error = sections.get("error") or sections.get("status") or "an unknown error"
    text = f"I couldn't compute that: the code failed with {error}."
    if intent.kind == "math":
        return text + " Check the expression (use * for multiplication and ** for powers)."
    if intent.all_columns:
        names = ", ".join(c.name for c in intent.all_columns[:20])
        text += f" The columns of {_file_name(intent)} are: {names}."
    return text + " Try naming the columns as they appear, or configure a real model."
