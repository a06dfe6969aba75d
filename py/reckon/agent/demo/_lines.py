"""The demo model's line charts: a value over a date or a number, one line per item when
several items share each point (five stocks' prices over dates are five lines, not one
line of their sums), over a period of the dates when asked ("per month"), and an answer
that says what each point is.
"""

from __future__ import annotations

from reckon.agent.demo._columns import Column
from reckon.agent.demo._intent import Intent
from reckon.agent.demo._measures import AGG_WORDS, PERIODS

__all__ = ["line_answer", "line_code"]

# More items than this is no longer a chart one can read. (A literal of the cell grounds
# nothing its output repeats: a round count like 12 would leave "12 points" unproven.)
_MOST_LINES = 15


def line_code(intent: Intent, label: Column, value: Column, agg: str) -> str:
    """A line over ``label``: real dates on a date axis, never more than ~10 tick labels."""
    period = PERIODS.get(intent.period, "") if intent.when == label else ""
    over = f"{intent.period} of {label.name}" if period else label.name
    title = f"{AGG_WORDS[agg].capitalize()} {value.name} by {over}"
    # Items named in the question first, then every other text column.
    named = [c for c in intent.categorical if c not in (label, value)]
    rest = [c for c in intent.all_columns if not c.numeric and not c.temporal]
    candidates = [c.name for c in [*named, *rest] if c not in (label, value)]
    candidates = list(dict.fromkeys(candidates))
    dates = "True" if period else "when.notna().mean() > 0.9"
    return f"""\
x = df[{label.name!r}]
if not pd.api.types.is_numeric_dtype(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not infer format": parsed one by one
        when = pd.to_datetime(x, errors="coerce")
    if {dates}:
        x = when
# Several rows at one point: one line per item, if a text column tells them apart.
series = None
if x.duplicated().any():
    for name in {candidates!r}:
        s = df[name].map(lambda v: v.strip() if isinstance(v, str) else v).rename(name)
        one_each = not pd.DataFrame({{"x": x, "s": s}}).duplicated().any()
        if 1 < s.nunique() <= {_MOST_LINES} and one_each:
            series = s
            break
{"x = x.dt.to_period(" + repr(period) + ").dt.to_timestamp()" if period else ""}
ax.set_title({title!r} + (f", one line per {{series.name}}" if series is not None else ""))
ax.set_xlabel({over!r})
ax.set_ylabel({f"{value.name} ({AGG_WORDS[agg]})"!r})
print("chart:", {title!r})
if series is not None:
    data = df.groupby([x, series])[{value.name!r}].{agg}().unstack()
    for name in data.columns:
        ax.plot(data.index, data[name], label=str(name), marker="o" if len(data) <= 40 else None)
    ax.legend(title=series.name)
    print("lines:", data.shape[1])
    print("one line per:", series.name)
    print("points:", len(data))
    for name in data.columns:
        line = data[name].dropna()
        ends = f"first {{round(line.iloc[0], 4)}}, last {{round(line.iloc[-1], 4)}}"
        print(f"  {{name}}: {{ends}}, highest {{round(line.max(), 4)}}")
else:
    data = df.groupby(x)[{value.name!r}].{agg}().sort_index()
    ax.plot(data.index, data.values, marker="o" if len(data) <= 40 else None)
    print("points:", len(data))
    print("first:", data.index[0], "=", round(data.iloc[0], 4))
    print("last:", data.index[-1], "=", round(data.iloc[-1], 4))
    print("highest:", data.idxmax(), "=", round(data.max(), 4))
    print("tied at the top:", int((data == data.max()).sum()))
    most = int(x.value_counts().max()) if len(x) else 0
    if most > 1:
        print("each point:", "the {AGG_WORDS[agg]} of up to", most, "rows")
if pd.api.types.is_datetime64_any_dtype(data.index):
    locator = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
else:
    ax.xaxis.set_major_locator(MaxNLocator(10, integer=pd.api.types.is_integer_dtype(data.index)))
    if not pd.api.types.is_numeric_dtype(data.index):
        fig.autofmt_xdate()
"""


def line_answer(fields: dict[str, str], items: list[tuple[str, str]], title: str) -> str:
    """The answer for a line chart, quoting what its cell printed."""
    if "lines" in fields:
        listed = "; ".join(f"{key}: {value}" for key, value in items[:_MOST_LINES])
        return (
            f"I made the line chart{title}: {fields['lines']} lines, one per "
            f"{fields.get('one line per', 'item')}, over {fields.get('points')} points: "
            f"{listed}."
        )
    tied = fields.get("tied at the top", "1")
    highest = fields["highest"]
    if tied.isdigit() and int(tied) > 1:
        highest = f"{highest.rpartition('= ')[2]}, reached at {tied} points"
    text = (
        f"I made the line chart{title} ({fields.get('points')} points): it starts at "
        f"{fields.get('first')} and ends at {fields.get('last')}; the highest is {highest}."
    )
    if "each point" in fields:
        text += f" Each point is {fields['each point']} that share it."
    return text
