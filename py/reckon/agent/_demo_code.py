"""The code the demo model writes: short pandas/matplotlib/sympy cells per intent.

Every cell prints ``label: value`` lines that ``_demo_answer`` quotes, so the
answer's numbers are the ones the sandbox computed. Attempt 0 reads a table with
its ``read_with`` line; attempt 1 (after a failure) uses the pre-loaded
``read_table``, which copes with odd encodings, delimiters and headers.
"""

from __future__ import annotations

from reckon.agent._demo_code_math import math_code
from reckon.agent._demo_columns import Column
from reckon.agent._demo_intents import Intent

__all__ = ["plan_code"]

_AGG_WORDS = {"mean": "average", "sum": "total", "count": "count", "max": "maximum",
              "min": "minimum", "median": "median"}  # fmt: skip


def plan_code(intent: Intent, *, attempt: int = 0) -> str | None:
    """The cell for ``intent`` (``None`` when there is nothing to run)."""
    if intent.kind == "math":
        return math_code(intent, attempt=attempt)
    if intent.file is None or intent.kind in {"help", "nofile", "nocolumn"}:
        return None
    body = _TEMPLATES[intent.kind](intent)
    if body is None:
        return None
    path = str(intent.file.get("path"))
    read_with = str(intent.file.get("read_with") or f"pd.read_csv({path!r})")
    loader = read_with if attempt == 0 else f"read_table({path!r})"
    head = "import pandas as pd\n"
    if "plt." in body:
        head += "import matplotlib.pyplot as plt\n"
    if "np." in body:
        head += "import numpy as np\n"
    return f"{head}\ndf = {loader}\n{body}".rstrip() + "\n"


def _q(column: Column) -> str:
    return f"df[{column.name!r}]"


def _overview(intent: Intent) -> str:
    return """\
print("rows:", len(df))
print("columns:", ", ".join(f"{name} ({dtype})" for name, dtype in df.dtypes.astype(str).items()))
print("missing values:", int(df.isna().sum().sum()))
for name in df.select_dtypes("number").columns:
    s = df[name]
    print(f"  {name}: mean {round(s.mean(), 4)}, min {s.min()}, max {s.max()}")
df.head()
"""


def _describe(intent: Intent) -> str:
    column = intent.columns[0]
    return f"""\
s = {_q(column)}
print("values:", s.count())
print("missing:", int(s.isna().sum()))
if pd.api.types.is_numeric_dtype(s):
    print("mean:", round(s.mean(), 4))
    print("std:", round(s.std(), 4))
    print("min:", s.min())
    print("median:", s.median())
    print("max:", s.max())
else:
    print("unique:", s.nunique())
    for value, n in s.value_counts().head(5).items():
        print(f"  {{value}}: {{n}}")
"""


def _pick(intent: Intent) -> tuple[Column | None, Column | None]:
    """(category or x column, numeric value column) from the question, else the file."""
    numeric = intent.numeric or [c for c in intent.all_columns if c.numeric]
    labels = intent.categorical or [c for c in intent.all_columns if not c.numeric]
    return (labels[0] if labels else None), (numeric[0] if numeric else None)


def _chart(intent: Intent) -> str | None:
    kind = intent.chart
    label, value = _pick(intent)
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
values = {_q(column)}.dropna()
ax.hist(values, bins=20, color="#4C72B0", edgecolor="white")
ax.set_title({f"Distribution of {column.name}"!r})
ax.set_xlabel({column.name!r})
ax.set_ylabel("count")
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
ax.scatter({_q(x)}, {_q(y)}, alpha=0.7)
ax.set_title({f"{y.name} vs {x.name}"!r})
ax.set_xlabel({x.name!r})
ax.set_ylabel({y.name!r})
print("points:", int(df[[{x.name!r}, {y.name!r}]].dropna().shape[0]))
print("correlation:", round({_q(x)}.corr({_q(y)}), 4))
"""
        )
    if label is None or value is None:
        if label is not None and kind == "bar":
            return head + _bar_counts(label)
        return None
    agg = intent.agg if intent.agg in {"mean", "sum", "median", "max", "min"} else "sum"
    if kind == "line":
        # x: a mentioned time-like column, else another mentioned column, else any time column.
        others = [c for c in mentioned if c != value]
        label = (
            next((c for c in others if c.temporal), None)
            or next(iter(others), None)
            or next((c for c in intent.all_columns if c.temporal), label)
        )
        if len(intent.numeric) >= 2 and label in intent.numeric:
            value = next(c for c in intent.numeric if c != label)
        title = f"{_AGG_WORDS[agg].capitalize()} {value.name} by {label.name}"
        return (
            head
            + f"""\
data = df.groupby({label.name!r})[{value.name!r}].{agg}().sort_index()
ax.plot(data.index.astype(str), data.values, marker="o")
ax.set_title({title!r})
ax.set_xlabel({label.name!r})
ax.set_ylabel({f"{value.name} ({_AGG_WORDS[agg]})"!r})
fig.autofmt_xdate()
print("points:", len(data))
print("first:", data.index[0], "=", round(data.iloc[0], 4))
print("last:", data.index[-1], "=", round(data.iloc[-1], 4))
print("highest:", data.idxmax(), "=", round(data.max(), 4))
"""
        )
    title = f"{_AGG_WORDS[agg].capitalize()} {value.name} by {label.name}"
    return (
        head
        + f"""\
data = df.groupby({label.name!r})[{value.name!r}].{agg}().sort_values(ascending=False).head(20)
ax.bar(data.index.astype(str), data.values, color="#4C72B0")
ax.set_title({title!r})
ax.set_xlabel({label.name!r})
ax.set_ylabel({f"{value.name} ({_AGG_WORDS[agg]})"!r})
fig.autofmt_xdate()
for key, v in data.items():
    print(f"  {{key}}: {{round(v, 4)}}")
"""
    )


def _bar_counts(column: Column) -> str:
    return f"""\
data = {_q(column)}.value_counts().head(20)
ax.bar(data.index.astype(str), data.values, color="#4C72B0")
ax.set_title({f"Rows per {column.name}"!r})
ax.set_xlabel({column.name!r})
ax.set_ylabel("rows")
fig.autofmt_xdate()
for key, v in data.items():
    print(f"  {{key}}: {{v}}")
"""


def _groupby(intent: Intent) -> str | None:
    group = intent.categorical[0]
    values = [c for c in intent.numeric if c != group]
    agg = intent.agg or "sum"
    if agg == "count" or not values:
        line = f"result = df.groupby({group.name!r}).size().sort_values(ascending=False)"
        agg = "count"
    else:
        line = (
            f"result = df.groupby({group.name!r})[{values[0].name!r}].{agg}()"
            ".sort_values(ascending=False)"
        )
    return f"""\
{line}
print("groups:", len(result))
for key, value in result.head(30).items():
    print(f"  {{key}}: {{round(value, 4)}}")
"""


def _top(intent: Intent) -> str | None:
    label, value = _pick(intent)
    if value is None:
        return None
    pick = "nsmallest" if intent.ascending else "nlargest"
    if intent.categorical and label is not None:
        return f"""\
result = df.groupby({label.name!r})[{value.name!r}].sum().{pick}({intent.n})
for key, v in result.items():
    print(f"  {{key}}: {{round(v, 4)}}")
"""
    show = f"row[{label.name!r}]" if label is not None else "index"
    return f"""\
result = df.{pick}({intent.n}, {value.name!r})
for index, row in result.iterrows():
    print(f"  {{{show}}}: {{round(row[{value.name!r}], 4)}}")
result
"""


def _correlation(intent: Intent) -> str:
    if len(intent.numeric) >= 2:
        x, y = intent.numeric[0], intent.numeric[1]
        return f"""\
pair = df[[{x.name!r}, {y.name!r}]].apply(pd.to_numeric, errors="coerce").dropna()
print("rows used:", len(pair))
print("pearson r:", round(pair[{x.name!r}].corr(pair[{y.name!r}]), 4))
"""
    return """\
corr = df.select_dtypes("number").corr()
print(corr.round(3).to_string())
pairs = corr.where(np.triu(np.ones(corr.shape, dtype=bool), k=1)).stack()
if len(pairs):
    a, b = pairs.abs().idxmax()
    print(f"strongest: {a} ~ {b}: {round(pairs[(a, b)], 4)}")
else:
    print("strongest: none (fewer than two numeric columns)")
"""


def _count(intent: Intent) -> str | None:
    if intent.op == "rows":
        return 'print("rows:", len(df))\n'
    if intent.op == "unique":
        column = intent.columns[0]
        return f'print("unique:", {_q(column)}.nunique())\nprint("rows:", len(df))\n'
    if intent.op == "text":
        target = intent.value.casefold()
        if intent.columns:
            column = intent.columns[0]
            return f"""\
mask = {_q(column)}.astype(str).str.strip().str.casefold() == {target!r}
print("matching rows:", int(mask.sum()))
print("total rows:", len(df))
"""
        return f"""\
text = df.select_dtypes(exclude="number").astype(str)
hits = text.apply(lambda s: s.str.strip().str.casefold() == {target!r})
print("matching rows:", int(hits.any(axis=1).sum()))
print("total rows:", len(df))
for name, n in hits.sum().items():
    if n:
        print(f"  {{name}}: {{n}}")
"""
    if not intent.numeric:
        return None
    return f"""\
values = pd.to_numeric({_q(intent.numeric[0])}, errors="coerce")
mask = values {intent.op} {intent.value}
print("matching rows:", int(mask.sum()))
print("total rows:", len(df))
"""


def _aggregate(intent: Intent) -> str:
    column = intent.numeric[0]
    agg = intent.agg if intent.agg != "count" else "count"
    return f"""\
values = pd.to_numeric({_q(column)}, errors="coerce")
print("{agg}:", round(values.{agg}(), 4))
print("values used:", int(values.count()))
"""


_TEMPLATES = {
    "overview": _overview,
    "describe": _describe,
    "chart": _chart,
    "groupby": _groupby,
    "top": _top,
    "correlation": _correlation,
    "count": _count,
    "aggregate": _aggregate,
}
