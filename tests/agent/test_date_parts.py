"""A month, weekday or year picked by the wrong number (#31: "how much rain fell in
November" computed over ``.dt.month == 10``): the check, and the cell put right that
Reckon runs itself. Loop tests drive a scripted model against the real kernel."""

from __future__ import annotations

import pytest

from reckon.agent import Agent
from reckon.agent.checks._date_parts import part_recheck
from reckon.agent.checks._unpicked import unpicked_correction, unpicked_recheck
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run
from .test_periods import weather


@pytest.mark.parametrize(
    ("question", "code", "said"),
    [
        ("How much rain fell in November?", "df[df['date'].dt.month == 10]['p'].sum()",
         "names November, but your code compares .dt.month with 10"),
        ("Total sales in March and May?", "df[df.d.dt.month.isin([2, 4])].s.sum()",
         "names March and May"),
        ("Average price in 2001", "df[df['date'].dt.year == 2000]['price'].mean()",
         "compares .dt.year with 2000"),
        ("How many orders on Mondays?", "len(df[df['d'].dt.dayofweek == 1])",
         "Monday is 0"),
    ],
)  # fmt: skip
def test_a_part_picked_by_the_wrong_number_goes_back(question: str, code: str, said: str) -> None:
    assert said in part_recheck(question, [code])


def test_the_cell_comes_back_put_right_where_one_number_was_meant() -> None:
    code = "x = 'Été'\nrain = df[(df['date'].dt.month == 10) & (df.x > 0)]['p'].sum()\nprint(rain)"
    said = part_recheck("How much rain fell in November?", [code])
    assert "```python\n" + code.replace("== 10", "== 11") + "\n```" in said
    assert "put right" not in part_recheck("Rain in March or May?", [code])


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("How much rain fell in November?", "df[df['date'].dt.month == 11]['p'].sum()"),
        ("How much rain fell in November?", "df[df['date'].dt.month.isin([10, 11])]['p'].sum()"),
        ("How much rain fell in 2012?", "df[df['date'].dt.month == 10]['p'].sum()"),
        ("What may the total be?", "df[df['date'].dt.month == 1]['p'].sum()"),
        ("Total rain", "df[df['date'].dt.month == 10]['p'].sum()"),
        ("How much rain fell in November?", "df[df['month'] == 10]['p'].sum()"),
    ],
)
def test_a_part_the_question_names_or_does_not_name_stands(question: str, code: str) -> None:
    assert part_recheck(question, [code]) == ""


def test_reckon_runs_the_cell_put_right_and_the_model_answers_from_it(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "weather.csv", weather())
    wrong = "print(df[df['date'].dt.month == 10]['precipitation'].sum())"
    replies = [code_reply(wrong), answer("It rained 0.0 mm in November.")]
    replies += [answer("It rained 90.0 mm in November.")]
    model = ScriptedModel(replies)
    question = "How much precipitation fell in November?"
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "It rained 90.0 mm in November."
    assert len(model.requests) == 3  # no cell of the model's own after the recheck
    sent_back = model.requests[2].messages[-1]["content"]
    assert "January is 1, December is 12" in sent_back
    right = wrong.replace("== 10", "== 11")
    assert (
        f"Reckon ran your cell again with 11 in place of 10:\n```python\n{right}\n```" in sent_back
    )
    assert "stdout:\n90.0" in sent_back  # its output, computed
    corrected = [s for s in outcome["steps"] if s.get("origin") == "correction"]
    assert len(corrected) == 1 and corrected[0]["code"] == right
    assert corrected[0]["result"]["stdout"].strip() == "90.0"
    assert corrected[0]["text"] == "Reckon ran the model's cell again with 11 in place of 10."
    # The answer's number is traced to the step Reckon ran.
    assert outcome["grounding"]["ungrounded"] == []
    traced = {n["text"]: n["steps"] for n in outcome["grounding"]["numbers"]}
    assert corrected[0]["index"] in traced["90.0"]


def test_several_named_months_are_said_not_run(executor: KernelExecutor) -> None:
    put_file(executor, "weather.csv", weather())
    wrong = "print(df[df['date'].dt.month.isin([8, 9])]['precipitation'].sum())"
    right = "print(df[df['date'].dt.month.isin([10, 11])]['precipitation'].sum())"
    replies = [code_reply(wrong), answer("0.0 mm fell in October and November.")]
    replies += [code_reply(right), answer("90.0 mm fell in October and November.")]
    model = ScriptedModel(replies)
    question = "How much precipitation fell in October and November?"
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["answer"] == "90.0 mm fell in October and November."
    assert "names October and November" in model.requests[2].messages[-1]["content"]
    assert not [s for s in outcome["steps"] if s.get("origin") == "correction"]


WEATHER = {
    "files": [
        {
            "path": "/data/weather.csv",
            "columns": [
                {"name": "date", "dtype": "datetime64[ns]"},
                {"name": "precipitation", "dtype": "float64"},
                {"name": "weather", "dtype": "object"},
            ],
        }
    ]
}


@pytest.mark.parametrize(
    ("question", "code", "said"),
    [
        ("How many days had weather 'rain' in 2014?", "print(len(df[df['weather'] == 'rain']))",
         "names 2014, but your code never picks the year out of the dates"),
        ("What was the total precipitation on Sundays?",
         "print(df[df['weather'] == 'sun']['precipitation'].sum())",
         "df[df['date'].dt.dayofweek == 6] (Monday is 0, Sunday is 6)"),
        ("Total precipitation in November?", "print(df['precipitation'].sum())",
         "names November, but your code never picks the month"),
        ("Total precipitation on Sundays?",  # a variable's name picks nothing
         "sundays_total = df[df['weather'] == 'sun']['precipitation'].sum()\n"
         "print(sundays_total)  # Sundays", "names Sunday"),
        ("Rain days in 2014?", "rain_2014 = df[df['weather'] == 'rain']\nprint(len(rain_2014))",
         "names 2014"),
    ],
)  # fmt: skip
def test_a_named_part_no_cell_picks_goes_back(question: str, code: str, said: str) -> None:
    assert said in unpicked_recheck(question, [code], WEATHER)


@pytest.mark.parametrize(
    ("question", "codes"),
    [
        ("Rain days in 2014?", ["print(len(df[df['date'].dt.year == 2014]))"]),
        ("Rain days in 2014?", ["x = df[df['date'] >= '2014-01-01']", "print(len(x))"]),
        ("Rain days in 2014?", ["print(df.groupby(df['date'].dt.to_period('Y')).size())"]),
        ("Rain in November?", ["print(df[df['date'].dt.strftime('%b') == 'Nov'].sum())"]),
        ("Rain in November?", ["print(df.set_index('date').loc['2012-11'].sum())"]),
        ("Rain on Sundays?", ["print(df[df['date'].dt.day_name() == 'Sunday'].sum())"]),
        ("Rain on Sundays?", ["print(df[df['date'].dt.strftime('%A') == 'Sunday'].sum())"]),
        ("Rain days in 2014?", ["print(len(df[df['date'].dt.year == 2014]))"]),
        ("Rain days in 2014?", ["d = df[df['date'].between('2014-01-01', '2014-12-31')]"]),
        ("Rain in November?", ["print(df[df['date'].apply(lambda d: d.month) == 11])"]),
        ("Rain in November?", ["this is not python("]),
        ("Total rain?", ["print(df['precipitation'].sum())"]),
        ("What may the total be?", ["print(df['precipitation'].sum())"]),
    ],
)
def test_a_named_part_some_cell_picks_stands(question: str, codes: list[str]) -> None:
    assert unpicked_recheck(question, codes, WEATHER) == ""


def test_a_table_without_dates_or_with_a_year_column_is_left_alone() -> None:
    code = ["print(len(df[df['weather'] == 'rain']))"]
    no_dates = {"files": [{"path": "/data/w.csv", "columns": [{"name": "weather"}]}]}
    assert unpicked_recheck("Rain days in 2014?", code, no_dates) == ""
    with_year = {"files": [{"path": "/data/w.csv", "columns": [
        {"name": "date", "dtype": "datetime64[ns]"}, {"name": "Year"}]}]}  # fmt: skip
    assert unpicked_recheck("Rain days in 2014?", code, with_year) == ""


def test_the_loop_tells_a_total_over_every_year_to_pick_the_year(executor: KernelExecutor) -> None:
    put_file(executor, "weather.csv", weather())
    every = "print(df['precipitation'].sum())"  # no filter to add the year to: told
    one = "print(df[df['date'].dt.year == 2012]['precipitation'].sum())"
    replies = [code_reply(every), answer("130.0 mm fell in 2012.")]
    replies += [code_reply(one), answer("130.0 mm fell in 2012.")]
    model = ScriptedModel(replies)
    question = "How much precipitation fell in 2012?"
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok" and len(model.requests) == 4
    assert "never picks the year" in model.requests[2].messages[-1]["content"]
    codes = [
        s["code"] for s in outcome["steps"] if s["kind"] == "code" and s.get("origin") != "reckon"
    ]
    assert codes == [every, one]


@pytest.mark.parametrize(
    ("question", "code", "fixed"),
    [
        ("What was the maximum precipitation in August 2012?",
         "aug = df[df['date'].dt.month == 8]\nprint(aug['precipitation'].max())",
         "aug = df[(df['date'].dt.month == 8) & (df['date'].dt.year == 2012)]"),
        ("How many rain days in 2014?", "rain = df[df['weather'] == 'rain']\nprint(len(rain))",
         "rain = df[(df['weather'] == 'rain') & (df['date'].dt.year == 2014)]"),
        ("Total precipitation on Sundays?",  # 'sun' read for Sunday: replaced, not kept
         "t = df[df['weather'] == 'sun']['precipitation'].sum()\nprint(t)",
         "t = df[df['date'].dt.dayofweek == 6]['precipitation'].sum()"),
    ],
)  # fmt: skip
def test_the_named_part_is_added_to_the_one_filter(question: str, code: str, fixed: str) -> None:
    correction = unpicked_correction(question, [code], WEATHER)
    assert correction is not None and correction.code.splitlines()[0] == fixed
    assert correction.message.startswith("The question names ")


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("Total precipitation in 2014?", "print(df['precipitation'].sum())"),  # no filter
        ("Rain days in 2013 and 2014?", "print(len(df[df['weather'] == 'rain']))"),  # two
        ("Rain days in 2014?",
         "a = df[df['weather'] == 'rain']\nb = df[df['precipitation'] > 1]\nprint(len(a), len(b))"),
        ("Rain days in 2014?", "print(len(df[df['weather'] == 'rain'])) +"),
    ],
)  # fmt: skip
def test_no_single_filter_no_correction(question: str, code: str) -> None:
    assert unpicked_correction(question, [code], WEATHER) is None


def test_a_date_column_not_loaded_as_dates_gets_no_correction() -> None:
    text_dates = {"files": [{"path": "/data/w.csv", "columns": [
        {"name": "date", "dtype": "object"}, {"name": "weather", "dtype": "object"}]}]}  # fmt: skip
    code = ["print(len(df[df['weather'] == 'rain']))"]
    assert unpicked_recheck("Rain days in 2014?", code, text_dates)  # told, not run
    assert unpicked_correction("Rain days in 2014?", code, text_dates) is None


def test_reckon_adds_the_year_the_cell_left_out(executor: KernelExecutor) -> None:
    rows = "date,precipitation\n2012-08-03,4.0\n2013-08-09,25.5\n2012-07-01,30.0\n"
    put_file(executor, "weather.csv", rows)
    cell = "aug = df[df['date'].dt.month == 8]\nprint(aug['precipitation'].max())"
    replies = [code_reply(cell), answer("The maximum in August 2012 was 25.5.")]
    replies += [answer("The maximum in August 2012 was 4.0.")]
    model = ScriptedModel(replies)
    question = "What was the maximum precipitation in August 2012?"
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["answer"] == "The maximum in August 2012 was 4.0." and len(model.requests) == 3
    corrected = [s for s in outcome["steps"] if s.get("origin") == "correction"]
    assert len(corrected) == 1 and corrected[0]["result"]["stdout"].strip() == "4.0"
    assert "(df['date'].dt.year == 2012) added to its filter" not in corrected[0]["text"]
    assert corrected[0]["text"].endswith("df['date'].dt.year == 2012 added to its filter.")
    sent_back = model.requests[2].messages[-1]["content"]
    assert "Its output:\nstatus: ok" in sent_back and "stdout:\n4.0" in sent_back
