"""Dates compared with the text of a time or a day (``checks/_date_strings``): Reckon
runs the cell comparing the time of day or the day instead. Scripted models against the
real kernel, and the check on its own."""

from __future__ import annotations

import pytest

from reckon.agent import Agent
from reckon.agent.checks._date_strings import string_correction
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run

HOURS = "hour,value\n" + "".join(
    f"2012-06-{day} {hour:02d}:00:00,{day * 100 + hour}\n" for day in (23, 24) for hour in range(24)
)
HOURLY = {"files": [{"path": "/data/h.csv", "columns": [
    {"name": "hour", "dtype": "datetime64[ns]"}, {"name": "value", "dtype": "int64"}],
    "head": [["2012-06-23 00:00:00", "2300"], ["2012-06-23 01:00:00", "2301"]]}]}  # fmt: skip
DAILY = {"files": [{"path": "/data/d.csv", "columns": [
    {"name": "date", "dtype": "datetime64[ns]"}, {"name": "value", "dtype": "int64"}],
    "head": [["2012-06-23", "1"], ["2012-06-24", "2"]]}]}  # fmt: skip


def test_a_time_window_written_as_text_is_compared_by_the_time_of_day(
    executor: KernelExecutor,
) -> None:
    """Seen in a real-model run: NaN for "the mean over hours 9 to 17", twice."""
    put_file(executor, "hourly.csv", HOURS)
    cell = "w = df[(df['hour'] >= '09:00') & (df['hour'] <= '17:00')]\nprint(w['value'].mean())"
    model = ScriptedModel([code_reply(cell), answer("@mean[NaN]"), answer("@mean[2363.0]")])
    question = "Mean value over the hours 9 to 17? Answer as @mean[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["answer"] == "@mean[2363.0]" and len(model.requests) == 3
    corrected = [s for s in outcome["steps"] if s.get("origin") == "correction"]
    assert len(corrected) == 1 and corrected[0]["result"]["stdout"].strip() == "2363.0"
    assert "df['hour'].dt.strftime('%H:%M') >= '09:00'" in corrected[0]["code"]
    told = model.requests[2].messages[-1]["content"]
    assert told.startswith("Your code compares the dates of 'hour' with the text '09:00'")
    assert "stdout:\n2363.0" in told
    assert outcome["grounding"]["ungrounded"] == []


def test_a_day_written_as_text_is_compared_by_the_day(executor: KernelExecutor) -> None:
    """Seen in a real-model run: the total "over the hours of 2012-06-24" was its midnight."""
    put_file(executor, "hourly.csv", HOURS)
    cell = "print(df[df['hour'] == '2012-06-24']['value'].sum())"
    # The first answer is the cell's output (2400), taken with no model call.
    model = ScriptedModel([code_reply(cell), answer("@total[57876]")])
    question = "Total value over the hours of 2012-06-24? Answer as @total[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert [s["text"] for s in outcome["steps"] if s["kind"] == "recheck"] == ["@total[2400]"]
    corrected = [s for s in outcome["steps"] if s.get("origin") == "correction"]
    assert corrected and corrected[0]["result"]["stdout"].strip() == str(
        sum(2400 + h for h in range(24))
    )
    assert outcome["answer"] == "@total[57876]"


@pytest.mark.parametrize(
    ("code", "fixed"),
    [
        ("x = df[df.hour.between('9:00', '17:00')]",
         "x = df[df.hour.dt.strftime('%H:%M').between('09:00', '17:00')]"),
        ("x = df[df['hour'] != '2012-06-24']", "x = df[df['hour'].dt.normalize() != '2012-06-24']"),
        ("x = df[df['hour'] > '12:30:00']",
         "x = df[df['hour'].dt.strftime('%H:%M:%S') > '12:30:00']"),
        ("x = df[df['hour'].between('2012-06-23', '2012-06-24')]",
         "x = df[df['hour'].dt.normalize().between('2012-06-23', '2012-06-24')]"),
        # A moment written as in a file's name, which pandas reads as no date at all.
        ("x = df[df['hour'] == '20120624_130000']", "x = df[df['hour'] == '2012-06-24 13:00:00']"),
        ("x = df[df.hour.between('20120623_2300', '20120624_0100')]",
         "x = df[df.hour.between('2012-06-23 23:00:00', '2012-06-24 01:00:00')]"),
    ],
)  # fmt: skip
def test_what_is_put_right(code: str, fixed: str) -> None:
    correction = string_correction([code], HOURLY)
    assert correction is not None and correction.code == fixed


@pytest.mark.parametrize(
    ("code", "environment"),
    [
        pytest.param("x = df[df['hour'] >= '2012-06-24']", HOURLY, id="a-day-from-midnight-on"),
        pytest.param("x = df[df['hour'] < '2012-06-24']", HOURLY, id="before-a-day"),
        pytest.param("x = df[df['date'] == '2012-06-24']", DAILY, id="a-column-of-days"),
        pytest.param("x = df[df['value'] == '09:00']", HOURLY, id="not-a-date-column"),
        pytest.param("x = df[df['hour'].dt.strftime('%H:%M') >= '09:00']", HOURLY,
                     id="already-by-time"),
        pytest.param("x = df[df['hour'] == 'x']", HOURLY, id="other-text"),
        pytest.param("x = df[df['hour'] == '20121324_130000']", HOURLY, id="no-13th-month"),
        pytest.param("x = df[df['value'] == '20120624_130000']", HOURLY, id="a-stamp-as-text"),
    ],
)  # fmt: skip
def test_what_is_left_alone(code: str, environment: dict[str, object]) -> None:
    assert string_correction([code], environment) is None
