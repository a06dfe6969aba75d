"""The code the demo model writes: short pandas/matplotlib/sympy cells per intent.

Every cell prints ``label: value`` lines that ``_answer`` quotes, so the
answer's numbers are the ones the sandbox computed. Attempt 0 reads a table with
its ``read_with`` line; attempt 1 (after a failure) uses the pre-loaded
``read_table``, which copes with odd encodings, delimiters and headers.
"""

from __future__ import annotations

from reckon.agent.demo._charts import chart_code, pick, q, stripped
from reckon.agent.demo._code_math import math_code
from reckon.agent.demo._columns import Column
from reckon.agent.demo._intent import Intent
from reckon.agent.demo._measures import PERIODS

__all__ = ["plan_code"]

# What a cell's body uses -> the import line it needs at the top.
_IMPORTS = (
    ("plt.", "import matplotlib.pyplot as plt"),
    ("mdates.", "import matplotlib.dates as mdates"),
    ("MaxNLocator(", "from matplotlib.ticker import MaxNLocator"),
    ("np.", "import numpy as np"),
    ("warnings.", "import warnings"),
)


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
    head += "".join(line + "\n" for needle, line in _IMPORTS if needle in body)
    return f"{head}\ndf = {loader}\n{body}".rstrip() + "\n"


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
    strip = "" if column.numeric else stripped(column)
    return f"""\
{strip}s = {q(column)}
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


def _groupby(intent: Intent) -> str | None:
    if intent.period and intent.when is not None:
        return _per_period(intent, intent.when)
    group = intent.categorical[0]
    values = [c for c in intent.numeric if c != group]
    agg = intent.agg or "sum"
    if agg == "count" or not values:
        measure = f"df.groupby({group.name!r}).size()"
    else:
        measure = f"df.groupby({group.name!r})[{values[0].name!r}].{agg}()"
    return (
        stripped(group)
        + f"""\
result = {measure}.sort_values(ascending=False, kind="stable")
print("groups:", len(result))
for key, value in result.head(30).items():
    print(f"  {{key}}: {{round(value, 4)}}")
if len(result):
    print("tied at the top:", int((result == result.iloc[0]).sum()))
"""
    )


def _per_period(intent: Intent, when: Column) -> str:
    """ "Total rain per month": grouped by the month of a date column, in time order. The
    key is named for the period, so the method line reads "per month"."""
    values = [c for c in intent.numeric if c != when]
    agg = intent.agg or "sum"
    key = intent.period
    if agg == "count" or not values:
        measure = f"df.groupby({key}).size()"
    else:
        measure = f"df.groupby({key})[{values[0].name!r}].{agg}()"
    return f"""\
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "could not infer format": parsed one by one
    dates = pd.to_datetime({q(when)}, errors="coerce")
{key} = dates.dt.to_period({PERIODS[intent.period]!r}).rename({key!r})
result = {measure}.sort_index()
print("groups:", len(result))
for key, value in result.head(36).items():
    print(f"  {{key}}: {{round(value, 4)}}")
if len(result):
    print("highest:", result.idxmax(), "=", round(result.max(), 4))
print("rows without a date:", int(dates.isna().sum()))
"""


def _top(intent: Intent) -> str | None:
    label, value = (intent.group, intent.measure) if intent.group else pick(intent)
    if label is not None and (intent.group is not None or intent.categorical):
        return _ranked_groups(intent, label, value)
    if value is None:
        return None
    method = "nsmallest" if intent.ascending else "nlargest"
    show = f"row[{label.name!r}]" if label is not None else "index"
    strip = stripped(label) if label is not None else ""
    return f"""\
{strip}result = df.{method}({intent.n}, {value.name!r})
for index, row in result.iterrows():
    print(f"  {{{show}}}: {{round(row[{value.name!r}], 4)}}")
result
"""


def _ranked_groups(intent: Intent, label: Column, value: Column | None) -> str:
    """Groups ranked by a measure, printing how many share the value at the cut (ties)."""
    strip = "" if label.numeric else stripped(label)
    if intent.agg == "count" or value is None:
        measure = f"df.groupby({label.name!r}).size()"
    else:
        agg = intent.agg if intent.agg in {"mean", "median", "sum"} else "sum"
        if value.numeric:
            measure = f"df.groupby({label.name!r})[{value.name!r}].{agg}()"
        else:  # numbers stored as text ("****" for missing): the ones that parse
            strip += f'values = pd.to_numeric({q(value)}, errors="coerce").dropna()\n'
            measure = f"values.groupby({q(label)}).{agg}()"
    order = "True" if intent.ascending else "False"
    return (
        strip
        + f"""\
totals = {measure}.sort_values(ascending={order}, kind="stable")
result = totals.head({intent.n})
print("groups:", len(totals))
for key, v in result.items():
    print(f"  {{key}}: {{round(v, 4)}}")
if len(result):
    cut = totals == result.iloc[-1]
    print("tied at the cut:", int(cut.sum()))
    print("tied shown:", int(cut.head({intent.n}).sum()))
    print("tied:", "; ".join(str(k) for k in totals[cut].index[:10]))
"""
    )


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
        return f'print("unique:", {q(column)}.nunique())\nprint("rows:", len(df))\n'
    if intent.op == "text":
        target = intent.value.casefold()
        if intent.columns:
            column = intent.columns[0]
            return f"""\
mask = {q(column)}.astype(str).str.strip().str.casefold() == {target!r}
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
values = pd.to_numeric({q(intent.numeric[0])}, errors="coerce")
mask = values {intent.op} {intent.value}
print("matching rows:", int(mask.sum()))
print("total rows:", len(df))
"""


def _aggregate(intent: Intent) -> str:
    column = intent.numeric[0]
    agg = intent.agg if intent.agg != "count" else "count"
    return f"""\
values = pd.to_numeric({q(column)}, errors="coerce")
print("{agg}:", round(values.{agg}(), 4))
print("values used:", int(values.count()))
"""


_TEMPLATES = {
    "overview": _overview,
    "describe": _describe,
    "chart": chart_code,
    "groupby": _groupby,
    "top": _top,
    "correlation": _correlation,
    "count": _count,
    "aggregate": _aggregate,
}
