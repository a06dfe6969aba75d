"""A question about a period answered per date goes back once (#31: "which month had
the most rain" grouped by day answered March, where November was right). The loop
test drives a scripted model against the real kernel and a real file."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from reckon.agent import Agent
from reckon.agent.checks._periods import asked_period, date_columns, period_recheck
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run

ENVIRONMENT = {
    "files": [
        {
            "path": "/data/weather.csv",
            "columns": [
                {"name": "date", "dtype": "datetime64[ns]"},
                {"name": "precipitation", "dtype": "float64"},
                {"name": "station", "dtype": "object"},
            ],
        }
    ]
}
BY_DAY = "print(df.groupby('date')['precipitation'].sum().idxmax())"


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("Which month had the most precipitation in total?", "month"),
        ("Total rain per year", "year"),
        ("What is the monthly average?", "month"),
        ("Which day of the week is the busiest?", "weekday"),
        ("Average sales by quarter", "quarter"),
        ("Which hours are the busiest?", "hour"),
        ("Which day had the most rain?", ""),  # a day is what a date is
        ("What is the total precipitation?", ""),
    ],
)
def test_the_period_a_question_asks_for(question: str, period: str) -> None:
    assert asked_period(question) == period


def test_a_word_that_names_a_column_is_not_a_period() -> None:
    assert asked_period("Total sales per month", ["month", "sales"]) == ""
    assert asked_period("Which Month Name is the wettest?", ["Month Name"]) == ""


def test_date_columns_are_those_loaded_or_named_as_dates() -> None:
    environment = {"files": [{"columns": [{"name": "when", "dtype": "datetime64[ns]"},
                                          {"name": "Order Date", "dtype": "object"},
                                          {"name": "price", "dtype": "float64"}]}]}  # fmt: skip
    assert date_columns(environment) == {"when", "Order Date"}


@pytest.mark.parametrize(
    "code",
    [
        BY_DAY,
        "m = df.groupby(['date'])['precipitation'].sum()\nprint(m.idxmax())",
        "df['date'] = pd.to_datetime(df['date'])\nprint(df.groupby(df['date']).sum().idxmax())",
        "print(df.groupby(by=df.date)['precipitation'].sum().idxmax())",
    ],
)
def test_grouping_by_the_whole_date_is_sent_back(code: str) -> None:
    message = period_recheck("Which month had the most rain?", [code], ENVIRONMENT)
    assert "grouped the rows by the whole date column 'date'" in message
    assert "df.groupby(df['date'].dt.month_name())" in message
    assert "already names" in message


@pytest.mark.parametrize(
    "code",
    [
        "print(df.groupby(df['date'].dt.month)['precipitation'].sum().idxmax())",
        "df['date'] = df['date'].dt.month\nprint(df.groupby('date').sum().idxmax())",
        "print(df.groupby(df['date'].dt.to_period('M')).sum().idxmax())",
        "print(df.set_index('date').resample('M')['precipitation'].sum().idxmax())",
        "df = df.assign(date=df['date'].dt.strftime('%m'))\nprint(df.groupby('date').sum())",
        "print(df.groupby('station')['precipitation'].sum().idxmax())",
        "print(df['precipitation'].sum())",
        "this is not python(",
    ],
)
def test_a_period_derived_in_the_code_stands(code: str) -> None:
    assert period_recheck("Which month had the most rain?", [code], ENVIRONMENT) == ""


def test_a_question_about_days_grouped_by_date_stands() -> None:
    assert period_recheck("Which day had the most rain?", [BY_DAY], ENVIRONMENT) == ""


def weather() -> str:
    """Daily rain over 2012: the wettest day is 15 March, the wettest month November."""
    days = [date(2012, 1, 1) + timedelta(days=n) for n in range(366)]
    rain = [40.0 if d == date(2012, 3, 15) else 3.0 if d.month == 11 else 0.0 for d in days]
    rows = "".join(f"{d.isoformat()},{r}\n" for d, r in zip(days, rain, strict=True))
    return "date,precipitation\n" + rows


def test_the_loop_sends_a_per_day_answer_back_and_takes_the_monthly_one(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "weather.csv", weather())
    by_day = "df['date'] = pd.to_datetime(df['date'])\n" + BY_DAY
    by_month = "print(df.groupby(df['date'].dt.month)['precipitation'].sum().idxmax())"
    replies = [code_reply(by_day), answer("The wettest month is March.")]
    replies += [code_reply(by_month), answer("The wettest month is 11, November.")]
    model = ScriptedModel(replies)
    environment = executor.environment()
    question = "Which month had the most precipitation in total?"
    outcome = run(Agent(model, executor).ask(question, environment=environment))
    assert outcome["status"] == "ok", outcome
    assert outcome["answer"] == "The wettest month is 11, November."
    sent_back = model.requests[2].messages[-1]["content"]
    assert "The question asks per month" in sent_back
    codes = [s for s in outcome["steps"] if s["kind"] == "code" and s.get("origin") != "reckon"]
    assert "2012-03-15" in codes[0]["result"]["stdout"]  # the per-day answer really was March
    assert codes[-1]["result"]["stdout"].strip() == "11"
    assert len(model.requests) == 4  # once: the monthly answer stands
