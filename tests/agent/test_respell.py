"""A column a failed cell spelt otherwise than its table (``Financial_Year`` for
``Financial Year``) is put right when the error names it, and the cell runs again
(``checks/_respell``), with the real kernel and its real errors."""

from __future__ import annotations

import pytest

from reckon.agent import Agent, OpenAIModel
from reckon.agent.checks._respell import respell_columns
from support import FakeUpstream, HttpxTransport, sse, text_stream, tool_stream

from .helpers import (
    KernelExecutor,
    ask_openai,
    call_reply,
    model_steps,
    put_file,
    run,
    text_reply,
)

OFFENCES = "Financial Year,Force Name,Number of Offences\n2010-11,Kent,5\n2010-11,Avon,7\n"
OFFENCES += "2011-12,Kent,11\n"


def test_a_query_with_underscores_for_spaces_runs_as_the_table_spells_it(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "offences.csv", OFFENCES)
    # Two misspelt names: DuckDB's binder names one a run, so two respellings.
    cell = ("print(run_sql(\"SELECT SUM(Number_of_Offences) AS total FROM offences "
            "WHERE Financial_Year = '2010-11'\"))")  # fmt: skip
    question = "Total offences in 2010-11? Answer as @total[value]."
    outcome = ask_openai(upstream, executor, question, [call_reply(cell), text_reply("@total[12]")])
    (step,) = model_steps(outcome, "code")
    assert step["result"]["status"] == "ok" and "12" in step["result"]["stdout"]
    assert step["proposed"] == cell
    assert '\\"Financial Year\\"' in step["code"] and '\\"Number of Offences\\"' in step["code"]
    told = str(upstream.payloads[1]["messages"][-1]["content"])
    assert "'\"Financial Year\"'" in told and "'Financial_Year'" in told
    assert outcome["answer"] == "@total[12]"


def test_a_key_in_another_case_runs_as_the_table_spells_it(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "offences.csv", OFFENCES)
    cell = "print(df.groupby('force name')['number_of_offences'].sum().idxmax())"
    question = "Which force had most offences? Answer as @force[name]."
    outcome = ask_openai(
        upstream, executor, question, [call_reply(cell), text_reply("@force[Kent]")]
    )
    code = model_steps(outcome, "code")[-1]
    assert code["result"]["status"] == "ok" and code["result"]["stdout"] == "Kent\n"
    assert code["code"] == ("print(df.groupby('Force Name')['Number of Offences'].sum().idxmax())")


def test_a_header_held_twice_is_taken_from_the_table_its_columns_stand_in(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    # Two tables side by side: the second's rows have their own 'Series' ('Series.1').
    put_file(executor, "bonds.csv", "Series,Pieces,Series,Out,Issued\nA,1,B,10,5\n"
             "A,2,HH,20,7\nB,3,HH,30,9\n")  # fmt: skip
    cell = "hh = df[df['Series'] == 'HH']\nprint(hh['Out'].sum() + hh['Issued'].sum())"
    question = "Total out and issued for series HH? Answer as @total[value]."
    outcome = ask_openai(upstream, executor, question, [call_reply(cell), text_reply("@total[66]")])
    (step,) = model_steps(outcome, "code")
    assert step["proposed"] == cell
    assert step["code"] == cell.replace("'Series'", "'Series.1'")
    assert step["result"]["stdout"] == "66\n" and "notes" not in step["result"]
    # The output answers the form: read as the answer, no second call.
    assert outcome["answer"] == "@total[66]" and len(upstream.payloads) == 1
    respelt = respell_columns(cell, {"status": "ok", "notes": [
        "df holds the header 'Series' twice (…): 'Out', 'Issued' stand in that second table, "
        "so the 'Series' of their own rows is df['Series.1'], not df['Series']."]})  # fmt: skip
    assert respelt is not None and respelt.note == (
        "\nnote: Reckon ran your code again with the column 'Series.1' where it said 'Series', "
        "the one of the table the cell's other columns stand in; use that name from now on"
    )


def test_a_name_the_error_does_not_settle_is_left_to_the_model(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "offences.csv", OFFENCES)
    cell = "print(df['Offences'].sum())"  # close to a column, not the same letters
    question = "Total offences? Answer as @total[value]."
    fixed = "print(df['Number of Offences'].sum())"
    outcome = ask_openai(upstream, executor, question, [call_reply(cell), call_reply(fixed)])
    first = model_steps(outcome, "code")[0]
    assert first["result"]["status"] == "error" and "proposed" not in first
    assert outcome["answer"] == "@total[23]"


def test_not_in_ask_mode(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    path = put_file(executor, "offences.csv", OFFENCES)
    cell = f"df = read_table({path!r})\nprint(df['force name'].nunique())"
    upstream.handlers += [sse([tool_stream(cell)]), sse([text_stream("I could not.")])]
    decisions = iter([{"action": "run"}])

    async def decide(proposal: dict[str, object]) -> dict[str, object]:
        return next(decisions)

    model = OpenAIModel(HttpxTransport(upstream.url), model="m")
    agent = Agent(model, executor, approval="ask", decide=decide)
    outcome = run(agent.ask("How many forces?", environment=executor.environment()))
    # The person approved this code: a different cell is never run in its place.
    assert executor.codes == [cell]
    error = model_steps(outcome, "code")[0]["result"]["error"]
    assert "the table's column is spelled 'Force Name'" in str(error)


@pytest.mark.parametrize(
    ("code", "message", "fixed"),
    [
        # Each string literal keeps its own quotes; f-strings and raw strings are left.
        ("q = 'SELECT a_b FROM t'\nrun_sql(q)",
         'Binder Error: Referenced column "a_b" not found in FROM clause!\n'
         'Did you mean "a b"? Names with spaces go in double quotes.',
         "q = 'SELECT \"a b\" FROM t'\nrun_sql(q)"),
        ('run_sql(f"SELECT a_b FROM {t}")',
         'Referenced column "a_b" not found\nDid you mean "a b"? Names with spaces go', None),
        ("df['A B'] + df['a_b_c']",
         "KeyError: 'a_b_c'\nthere is no column 'a_b_c'; the table's column is spelled 'A B C'",
         "df['A B'] + df['A B C']"),
        ("x = a_b_c", "there is no column 'a_b_c'; the table's column is spelled 'A B C'", None),
        ("df['x']", "there is no column 'x'; did you mean 'xy'?", None),
    ],
)  # fmt: skip
def test_respell_columns(code: str, message: str, fixed: str | None) -> None:
    result = {"status": "error", "error": {"type": "KeyError", "message": message}}
    respelt = respell_columns(code, result)
    assert (respelt.code if respelt else None) == fixed
