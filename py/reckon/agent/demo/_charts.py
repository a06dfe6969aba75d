"""The demo model's charts: bar, line, histogram and scatter cells (matplotlib).

Each chart cell prints ``chart: <title>`` and the numbers its answer quotes; the
answer says a chart was made and never pastes the figure's text description.
Text labels are stripped first, so padded values ("East   ") group as one.
"""

from __future__ import annotations

from reckon.agent.demo._columns import Column
from reckon.agent.demo._intent import Intent
from reckon.agent.demo._lines import line_code
from reckon.agent.demo._measures import AGG_WORDS

__all__ = ["AGG_WORDS", "chart_code", "pick", "q", "stripped"]


def q(column: Column) -> str:
    return f"df[{column.name!r}]"


def stripped(column: Column) -> str:
    """A line that strips padded text labels ("East   " and "East" are one group)."""
    ref = q(column)
    return f"{ref} = {ref}.map(lambda v: v.strip() if isinstance(v, str) else v)\n"


def pick(intent: Intent) -> tuple[Column | None, Column | None]:
    """(category or x column, numeric value column) from the question, else the file."""
    numeric = intent.numeric or [c for c in intent.all_columns if c.numeric]
    labels = intent.categorical or [c for c in intent.all_columns if not c.numeric]
    return (labels[0] if labels else None), (numeric[0] if numeric else None)


def chart_code(intent: Intent) -> str | None:
    kind = intent.chart
    label, value = pick(intent)
    mentioned = intent.columns
    if kind == "auto":
        if len(intent.numeric) >= 2:
            kind = "scatter"
        elif len(mentioned) == 1:
            kind = "histogram" if mentioned[0].numeric else "bar"
        elif label is not None and label.temporal:
            kind = "line"
        else:
            kind = "bar" if label is not None and value is not None else "histogram"
    head = "fig, ax = plt.subplots(figsize=(8, 5))\n"
    if kind == "histogram":
        column = mentioned[0] if mentioned else value
        if column is None:
            return None
        if not column.numeric:
            return head + _bar_counts(column)
        return (
            head
            + f"""\
values = {q(column)}.dropna()
ax.hist(values, bins=20, color="#4C72B0", edgecolor="white")
ax.set_title({f"Distribution of {column.name}"!r})
ax.set_xlabel({column.name!r})
ax.set_ylabel("count")
print("chart:", {f"Distribution of {column.name}"!r})
print("values:", len(values))
print("min:", values.min())
print("max:", values.max())
print("mean:", round(values.mean(), 4))
"""
        )
    if kind == "scatter":
        numeric = (
            intent.numeric
            if len(intent.numeric) >= 2
            else [c for c in intent.all_columns if c.numeric]
        )
        if len(numeric) < 2:
            return None
        x, y = numeric[0], numeric[1]
        return (
            head
            + f"""\
ax.scatter({q(x)}, {q(y)}, alpha=0.7)
ax.set_title({f"{y.name} vs {x.name}"!r})
ax.set_xlabel({x.name!r})
ax.set_ylabel({y.name!r})
print("chart:", {f"{y.name} vs {x.name}"!r})
print("points:", int(df[[{x.name!r}, {y.name!r}]].dropna().shape[0]))
print("correlation:", round({q(x)}.corr({q(y)}), 4))
"""
        )
    if label is None or value is None:
        if label is not None and kind == "bar":
            return head + _bar_counts(label)
        return None
    agg = intent.agg if intent.agg in {"mean", "sum", "median", "max", "min"} else "sum"
    if kind == "line":
        # x: the dates of a period ("per month"), a mentioned time-like column, else
        # another mentioned column, else any time column.
        others = [c for c in mentioned if c != value]
        label = (
            (intent.when if intent.period else None)
            or next((c for c in others if c.temporal), None)
            or next(iter(others), None)
            or next((c for c in intent.all_columns if c.temporal), label)
        )
        if len(intent.numeric) >= 2 and label in intent.numeric:
            value = next(c for c in intent.numeric if c != label)
        return head + line_code(intent, label, value, agg)
    title = f"{AGG_WORDS[agg].capitalize()} {value.name} by {label.name}"
    return (
        head
        + stripped(label)
        + f"""\
totals = df.groupby({label.name!r})[{value.name!r}].{agg}()
totals = totals.sort_values(ascending=False, kind="stable")
data = totals.head(20)
ax.bar(data.index.astype(str), data.values, color="#4C72B0")
ax.set_title({title!r})
ax.set_xlabel({label.name!r})
ax.set_ylabel({f"{value.name} ({AGG_WORDS[agg]})"!r})
fig.autofmt_xdate()
print("chart:", {title!r})
print("groups:", len(totals))
for key, v in data.items():
    print(f"  {{key}}: {{round(v, 4)}}")
"""
    )


def _bar_counts(column: Column) -> str:
    title = f"Rows per {column.name}"
    return (
        stripped(column)
        + f"""\
counts = {q(column)}.value_counts()
data = counts.head(20)
ax.bar(data.index.astype(str), data.values, color="#4C72B0")
ax.set_title({title!r})
ax.set_xlabel({column.name!r})
ax.set_ylabel("rows")
fig.autofmt_xdate()
print("chart:", {title!r})
print("groups:", len(counts))
for key, v in data.items():
    print(f"  {{key}}: {{v}}")
"""
    )
