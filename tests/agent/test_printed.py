"""A cell's output that already answers in the asked form is the answer, with no model
call (``checks/_printed``), and is checked as the model's answer would be."""

from __future__ import annotations

import pytest

from reckon.agent.checks._printed import printed_answer
from support import FakeUpstream

from .helpers import (
    KernelExecutor,
    ask_openai,
    call_reply,
    model_steps,
    openai_agent,
    put_file,
    run,
    text_reply,
)

SALES = "region,units,price\nNorth,14,2.5\nSouth,15,3.25\nEast,9,1.125\n"


def test_a_lone_printed_value_is_the_answer_without_a_model_call(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "sales.csv", SALES)
    upstream.handlers += [call_reply("print(df['units'].sum())"), call_reply("print(len(df))")]
    agent = openai_agent(upstream, executor)
    question = "Total units? Answer as @total[value]."
    outcome = run(agent.ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "@total[38]"
    assert len(upstream.payloads) == 1  # the cell's call only
    assert [s["kind"] for s in model_steps(outcome)] == ["code", "answer"]
    assert outcome["grounding"]["ungrounded"] == [] and outcome["method"]
    code, answer = model_steps(outcome)
    assert "first_token_ms" in code and "first_token_ms" not in answer  # no model wrote it
    assert answer["origin"] == "output"
    # The answer joins the history as the model's own reply, for the next question.
    question = "And how many rows? Answer as @rows[value]."
    outcome = run(agent.ask(question, environment=executor.environment()))
    assert outcome["answer"] == "@rows[3]"
    history = upstream.payloads[1]["messages"]
    assert {"role": "assistant", "content": "@total[38]"} in history


def test_printed_forms_are_the_answer(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    put_file(executor, "sales.csv", SALES)
    cell = "print('rows:', len(df))\nprint(f\"@top[{df.loc[df['units'].idxmax(), 'region']}]\")"
    cell += "\nprint(f\"@most[{df['units'].max()}]\")"
    question = "Which region sold most, and how many? Answer as @top[name], @most[value]."
    outcome = ask_openai(upstream, executor, question, [call_reply(cell)])
    assert outcome["answer"] == "@top[South]\n@most[15]" and len(upstream.payloads) == 1


def test_a_value_rounded_as_the_question_asks(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "sales.csv", SALES)
    question = "Mean price? Round to 2 decimals. Answer as @mean_price[value]."
    outcome = ask_openai(upstream, executor, question, [call_reply("print(df['price'].mean())")])
    assert outcome["answer"] == "@mean_price[2.29]" and outcome["grounding"]["ungrounded"] == []


@pytest.mark.parametrize(
    ("cell", "why"),
    [
        ("print(38)", "the value typed in the code"),
        ("print(df['units'].sum())\nprint(len(df))", "two values"),
        ("print(df['units'].describe())", "a table"),
        ("x = df['units'].sum()\nprint(f'The total is {x}')", "a sentence"),
    ],
)  # fmt: skip
def test_what_is_left_to_the_model(
    upstream: FakeUpstream, executor: KernelExecutor, cell: str, why: str
) -> None:
    put_file(executor, "sales.csv", SALES)
    replies = [call_reply(cell), text_reply("The total is @total[38].")]
    outcome = ask_openai(upstream, executor, "Total units? Answer as @total[value].", replies)
    assert upstream.payloads[1]["messages"][-1]["role"] == "tool", why  # the output, then a call
    assert "The total is @total[38]." in [s["text"] for s in outcome["steps"]]


def test_a_kernel_note_is_left_to_the_model(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """The note asks for a change; the model reads it (``test_noted_outputs``)."""
    put_file(executor, "places.csv", "name,parking\nA,yes\nB,\nC,no\nD,\nE,yes\n")
    cell = "print(len(df[df['parking'] != 'nan']))"
    replies = [call_reply(cell), text_reply("@with_parking[5]"), text_reply("@with_parking[5]")]
    question = "How many places list parking? Answer as @with_parking[value]."
    ask_openai(upstream, executor, question, replies)
    assert upstream.payloads[1]["messages"][-1]["role"] == "tool"  # the output, then a call


def test_a_row_number_for_a_name_still_goes_back(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "sales.csv", SALES)
    replies = [call_reply("print(df['units'].idxmax())"),
               call_reply("print(df.loc[df['units'].idxmax(), 'region'])")]  # fmt: skip
    question = "Which region sold most? Answer as @region[name]."
    outcome = ask_openai(upstream, executor, question, replies)
    # A number where a name is asked is not taken: the model answered, and went back.
    assert outcome["answer"] == "@region[South]"


@pytest.mark.parametrize(
    ("question", "stdout", "answer"),
    [
        ("Mean? Answer as @m[value].", "2.2916666666666665\n", "@m[2.2916666666666665]"),
        ("Mean, rounded to two decimal places? @m[value]", "2.2916\n", "@m[2.29]"),
        ("Which? Answer as @region[name].", "'South'\n", "@region[South]"),
        ("Which? Answer as @region[name].", "3\n", ""),
        ("How many? Answer as @n[value].", "South\n", ""),
        ("How many? Answer as @n[value].", "nan\n", ""),
        ("How many? Answer as @n[value].", "np.int64(3)\n", ""),
        ("When? Answer as @hour[YYYY-MM-DD HH:MM:SS].", "2012-06-26 20:00:00\n",
         "@hour[2012-06-26 20:00:00]"),
        ("How many?", "3\n", ""),
        ("How many, and which? @n[value], @r[name]", "3\n", ""),
        # A date printed as numpy, pandas or print() write it, cut to the asked parts.
        ("When? @date[YYYY-MM-DD]", "1998-12-31T00:00:00.000000000\n", "@date[1998-12-31]"),
        ("When? @date[YYYY-MM-DD]", "1998-12-31 00:00:00\n", "@date[1998-12-31]"),
        ("Which year? @year[YYYY]", "2012\n", "@year[2012]"),
        ("When? @t[YYYY-MM-DD HH:MM:SS]", "2012-06-26T20:00:00.000000000\n",
         "@t[2012-06-26 20:00:00]"),
        ("When? @t[YYYY-MM-DD HH:MM]", "2012-06-26 20:00:00\n", "@t[2012-06-26 20:00]"),
        ("When? @t[YYYY-MM-DD HH:MM:SS]", "2012-06-26\n", ""),
        ("When? @date[YYYY-MM-DD]", "June 26\n", ""),
        # Values printed after labels that name the asked forms.
        ("Mean and spread? @mean_price[value] @std_price[value]",
         "Mean price: 2.29\nStd price: 1.06\n", "@mean_price[2.29] @std_price[1.06]"),
        ("Which, and how many? @top_region[name] @units[value]",
         "Top region: South\nUnits = 15\n", "@top_region[South] @units[15]"),
        ("Mean and median? @mean[value] @median[value]", "mean: 3\nmedian: 3\n",
         "@mean[3] @median[3]"),
        ("Total? @total[value]", "Total units sold: 38\n", "@total[38]"),
        ("How many? @count[value]", "count North: 3\ncount South: 4\n", ""),
        ("Mean and spread? @mean[value] @std[value]", "mean: 2.0\nrows: 3\n", ""),
        ("Mean and spread? @mean[value] @std[value]", "mean: 2.0\nstd: 1.0\nsee above\n", ""),
        ("Which? @top[name] @n[value]", "top: 3\nn: South\n", ""),
        # A line under the form's name beside another that may be the one meant.
        ("Rows left? @rows[value]", "Rows: 1000\nRows after dropna: 950\n", ""),
        ("How many? @count[value]", "Total count: 1000\nFiltered: 250\n", ""),
        ("Total? @total[value]", "Total: 1,234,567\n", "@total[1234567]"),
        ("Total? Round to 1 decimal. @total[value]", "1,234.56\n", "@total[1234.6]"),
        ("Which year? @year[YYYY]", "4521\n", ""),
        ("Which customer? @customer[customer_id]", "523\n", ""),
        ("Which customer? @customer[customer_id]", "Ann\n", ""),
        ("Share? @pct[value]", "12.50%\n", ""),
        ("Which city? @city[name]", "@Washington\n", "@city[Washington]"),
        ("How many? @n[value]", "@n\n", ""),
        # Forms printed with their placeholder, the value after each.
        ("Who, and how long? @latest[name] @days[value]", "@latest[name] Ian\n@days[value] 1858\n",
         "@latest[Ian]\n@days[1858]"),
        ("Who, and how long? @latest[name] @days[value]", "@latest[name] Ian\n@days[value]\n", ""),
    ],
)  # fmt: skip
def test_printed_answer(question: str, stdout: str, answer: str) -> None:
    results = [("x = compute()\nprint(x)", {"status": "ok", "stdout": stdout})]
    assert printed_answer(question, results) == answer


def test_not_under_schema_privacy_nor_after_an_error() -> None:
    ok = [("print(x)", {"status": "ok", "stdout": "3\n"})]
    assert printed_answer("How many? @n[value]", ok) == "@n[3]"
    assert printed_answer("How many? @n[value]", ok, private=True) == ""
    failed = [("print(x)", {"status": "error", "stdout": "3\n"})]
    assert printed_answer("How many? @n[value]", failed) == ""


@pytest.mark.parametrize(
    ("question", "shown", "answer"),
    [
        ("Mean? Round to 2 decimals. @m[value]", "np.float64(12.666666666666666)", "@m[12.67]"),
        ("Total? @total[value]", "38", "@total[38]"),
        ("When? @d[YYYY-MM-DD]", "Timestamp('1998-12-31 00:00:00')", "@d[1998-12-31]"),
        ("Which? @r[name]", "np.str_('East')", "@r[East]"),
        ("Which? @r[name]", "'East'", "@r[East]"),
        ("Total? @total[value]", "region\nEast     9\nNorth   14", ""),
        ("Total? @total[value]", "(38, 3)", ""),
        ("Which? @flag[name]", "np.True_", ""),
        ("Which year? @year[YYYY]", "np.int64(4521)", ""),
    ],
)  # fmt: skip
def test_a_bare_last_expression_is_read_when_nothing_was_printed(
    question: str, shown: str, answer: str
) -> None:
    result = {"status": "ok", "stdout": "", "result": {"type": "object", "text": shown}}
    assert printed_answer(question, [("df['units'].agg()", result)]) == answer
    printed = {**result, "stdout": "rows: 3\n"}  # what was printed comes first
    assert printed_answer(question, [("df['units'].agg()", printed)]) == ""


def test_a_cells_last_expression_answers_in_the_real_kernel(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "sales.csv", SALES)
    question = "Mean price? Round to 2 decimals. Answer as @mean_price[value]."
    outcome = ask_openai(upstream, executor, question, [call_reply("df['price'].mean()")])
    assert outcome["answer"] == "@mean_price[2.29]" and len(upstream.payloads) == 1
    assert model_steps(outcome)[-1]["origin"] == "output"
