"""What the agent does for a small model before and after its turn: tables loaded as
variables first, an invented tool result cut off, the asked-for form put right.

Each test scripts a real HTTP server on 127.0.0.1 with what Qwen2.5-Coder-1.5B sent
through llama-cpp-python, and runs the cells in an in-process kernel.
"""

from __future__ import annotations

from typing import Any

import pytest

from reckon.agent import Agent, OpenAIModel
from reckon.agent._approval import Decision
from reckon.agent.checks._form import repair_form
from support import FakeUpstream, HttpxTransport

from .helpers import KernelExecutor, ask_openai, call_reply, model_steps, run, text_reply


def agent(upstream: FakeUpstream, executor: KernelExecutor, **options: Any) -> Agent:
    model = OpenAIModel(HttpxTransport(upstream.url), model="local")
    return Agent(model, executor, **options)


def loads(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in outcome["steps"] if s.get("origin") == "reckon"]


def test_one_table_is_loaded_as_df_before_the_model_writes_a_cell(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    # The model's first cell, as Qwen wrote it: df is used, never loaded.
    replies = [call_reply("print(df['units'].sum())"), text_reply("29 units.")]
    outcome = ask_openai(upstream, sales, "total units?", replies)
    (load,) = loads(outcome)
    assert load["index"] == 0 and load["code"].startswith("df = pd.read_csv(")
    assert load["result"]["status"] == "ok" and "as df" in load["text"]
    (cell,) = model_steps(outcome, "code")
    assert cell["result"]["status"] == "ok" and cell["result"]["stdout"] == "29\n"
    system = upstream.payloads[0]["messages"][0]["content"]
    assert "loaded as df: use df (Reckon ran: df = pd.read_csv(" in system
    assert "no file is loaded" not in system and "the files are\n  loaded" in system
    # What Reckon ran is not the model's work: no code of its own, no "executed".
    assert outcome["grounding"]["numbers"][0]["steps"] == [cell["index"]]


def test_a_table_is_loaded_once_and_again_only_when_it_changes(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    helper = agent(upstream, sales)
    upstream.handlers += [call_reply("df = df[df.units > 4]\nprint(len(df))"),
                          text_reply("3 rows."),
                          call_reply("print(len(df))"), text_reply("Still 3.")]  # fmt: skip
    first = run(helper.ask("keep the rows over 4", environment=sales.environment()))
    second = run(helper.ask("how many now?", environment=sales.environment()))
    assert len(loads(first)) == 1 and loads(second) == []
    # The model's own change to df is kept for the follow-up.
    assert model_steps(second, "code")[0]["result"]["stdout"] == "3\n"
    (sales.data_dir / "sales.csv").write_text("region,units\nWest,1\n")
    upstream.handlers += [call_reply("print(len(df))"), text_reply("1 row.")]
    third = run(helper.ask("and now?", environment=sales.environment()))
    assert len(loads(third)) == 1 and model_steps(third, "code")[0]["result"]["stdout"] == "1\n"


def test_several_tables_are_named_after_their_files(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    (sales.data_dir / "2024 people.csv").write_text("name,age\nAnn,31\nBo,40\n")
    replies = [
        call_reply("print(df_sales.units.sum() + df_2024_people.age.sum())"),
        text_reply("100."),
    ]
    outcome = ask_openai(upstream, sales, "sum?", replies)
    assert sorted(s["code"].split(" =")[0] for s in loads(outcome)) == [
        "df_2024_people",
        "df_sales",
    ]
    assert model_steps(outcome, "code")[0]["result"]["stdout"] == "100\n"
    system = upstream.payloads[0]["messages"][0]["content"]
    assert "loaded as df_sales" in system and "loaded as df_2024_people" in system


def test_nothing_runs_unapproved_and_a_table_that_fails_is_left_to_the_model(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    async def approve(proposal: dict[str, Any]) -> Decision:
        return Decision("run")

    upstream.handlers += [call_reply("print(1 + 1)"), text_reply("2.")]
    asked = run(
        agent(upstream, sales, approval="ask", decide=approve).ask(
            "q", environment=sales.environment()
        )
    )
    assert loads(asked) == []
    assert "load it: df = pd.read_csv(" in upstream.payloads[0]["messages"][0]["content"]
    broken = sales.environment()
    broken["files"][0]["read_with"] = "pd.read_csv('/nowhere/sales.csv')"
    upstream.handlers += [call_reply("print(1 + 1)"), text_reply("2.")]
    failed = run(agent(upstream, sales).ask("q", environment=broken))
    (load,) = loads(failed)
    assert load["result"]["status"] == "error" and "could not be loaded" in load["text"]
    system = upstream.payloads[2]["messages"][0]["content"]
    assert "load it: df = pd.read_csv('/nowhere" in system and "already run" not in system


def test_a_tool_result_the_model_invents_is_cut_off(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    call = (
        '<tool_call>\n{"name": "run_python", "arguments": {"code": '
        "\"print(df['units'].mean())\"}}\n</tool_call>"
    )
    invented = '\n<tool_response>\n{"mean_value": 23.45}\n</tool_response>\nThe mean is 23.45.'
    replies = [text_reply(call + invented), text_reply("The mean is 7.25.")]
    outcome = ask_openai(upstream, sales, "mean units?", replies)
    assert outcome["answer"] == "The mean is 7.25."
    history = upstream.payloads[1]["messages"]
    assert history[-2] == {"role": "assistant", "content": call}
    assert "23.45" not in str(history)


MEAN_UNITS = "What is the mean of units? Answer as @mean_units[value]."


def test_the_value_written_where_the_name_goes_is_put_in_its_place(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    # Printed under a label that is not the form's name: a lone value, or a value under
    # the form's name, is the answer with no model call (``_printed``).
    cell = "print('average:', df['units'].mean())"
    replies = [call_reply(cell), text_reply("The mean is @7.25[value].")]
    outcome = ask_openai(upstream, sales, MEAN_UNITS, replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "The mean is @mean_units[7.25]."
    final = outcome["steps"][-1]
    assert final["kind"] == "answer" and final["written"] == "The mean is @7.25[value]."
    assert outcome["grounding"]["ungrounded"] == []
    assert len(upstream.payloads) == 2  # put right without another model call


def test_a_value_computed_into_a_name_and_never_printed_is_shown(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    # Seen: `mean_temperature = df['temperature'].mean().round(2)`, then a guessed "20.5".
    replies = [call_reply("mean_units = df['units'].mean()"), text_reply("@mean_units[7.25]")]
    outcome = ask_openai(upstream, sales, MEAN_UNITS, replies)
    (cell,) = model_steps(outcome, "code")
    shown = {"name": "mean_units", "type": "float64", "text": "np.float64(7.25)"}
    assert cell["result"]["assigned"] == [shown]
    observation = upstream.payloads[1]["messages"][-1]["content"]
    assert "(the cell printed nothing):\nmean_units = np.float64(7.25)" in observation
    assert "printed nothing; print" not in observation
    assert outcome["grounding"]["ungrounded"] == []
    assert outcome["grounding"]["numbers"][0]["steps"] == [cell["index"]]


COMPUTED = {"numbers": [{"text": "7.25", "computed": True, "steps": [1]}], "ungrounded": []}


@pytest.mark.parametrize(
    ("question", "answer", "repaired"),
    [
        ("Answer as @mean[value].", "So @7.25[value]", "So @mean[7.25]"),
        ("Answer as @mean[value].", "@7.25[]", "@mean[7.25]"),
        ("Answer as @mean[value].", "It is 7.25. @mean[value]", "It is 7.25. @mean[7.25]"),
        ("Answer as @mean[value].", "@7.25", "@mean[7.25]"),
        ("Answer as @mean[value].", '```json\n{"mean": {"value": 7.25}}\n```', "@mean[7.25]"),
        ("Answer as @mean[value].", '{"Mean": [7.25]}', "@mean[7.25]"),
        ("Answer as @region[name].", '{"region": "North"}', "@region[North]"),
        # Left alone: already right, two forms asked, two written, a word not a number,
        # or a value the model put in another form.
        ("Answer as @mean[value].", "@mean[7.25]", None),
        ("Answer as @a[value] @b[value].", "@7.25[value]", None),
        ("Answer as @mean[value].", "@7.25[value] @8[value]", None),
        ("Answer as @mean[value].", "@average[value]", None),
        ("Answer as @mean[value].", "@7.25[7.25]", None),
        ("What is the mean?", "@7.25[value]", None),
        # JSON under another name, with two values, or beside prose; a bare @ in prose.
        ("Answer as @mean[value].", '{"median": 7.25}', None),
        ("Answer as @mean[value].", '{"mean": [7.25, 8]}', None),
        ("Answer as @mean[value].", 'It is {"mean": 7.25}', None),
        ("Answer as @mean[value].", 'It is:\n```json\n{"mean": 7.25}\n```', None),
        ("Answer as @mean[value].", "It is @7.25 or so", None),
        # The asked name's place taken by the value too (seen: @East[East] for
        # @region[name]); a number there stays, as above.
        ("Answer as @region[name].", "@East[East]", "@region[East]"),
        ("Answer as @region[name].", "It is @east[East].", "It is @region[East]."),
        ("Answer as @region[name].", "@East[West]", None),
        # No form at all beside the one computed number (seen, after the format recheck:
        # "The number of distinct cities in people.csv is 4.").
        ("Answer as @mean[value].", "The mean is 7.25.", "The mean is @mean[7.25]."),
        ("Answer as @mean[mean_units].", "7.25", "@mean[7.25]"),
        ("Answer as @top[name].", "The top is row 7.25.", None),
        ("Answer as @mean[value].", "The mean is 7.25 (from `df.mean()`) @", None),
    ],
)
def test_repair_form(question: str, answer: str, repaired: str | None) -> None:
    assert repair_form(question, answer, COMPUTED) == repaired


def test_an_unfilled_form_is_filled_only_from_a_single_computed_number() -> None:
    two = {"numbers": [{"text": "7.25", "computed": True, "steps": [1]},
                       {"text": "29", "computed": True, "steps": [1]}]}  # fmt: skip
    assert repair_form("Answer as @mean[value].", "7.25 of 29. @mean[value]", two) is None
    guessed = {"numbers": [{"text": "7.25", "computed": False, "steps": []}]}
    assert repair_form("Answer as @mean[value].", "7.25. @mean[value]", guessed) is None


def test_a_missing_form_is_filled_only_from_the_answers_one_number_computed() -> None:
    question = "Answer as @mean[value]."

    def grounding(*entries: tuple[str, bool, bool]) -> dict[str, Any]:
        numbers = [{"text": text, "computed": computed, "steps": [1] if computed else []}
                   for text, computed, _ in entries]  # fmt: skip
        for number, (_, _, given) in zip(numbers, entries, strict=True):
            if given:
                number.update(given=True, steps=[])
        return {"numbers": numbers}

    two = grounding(("7.25", True, False), ("29", True, False))
    assert repair_form(question, "The mean is 7.25 of 29.", two) is None
    assert repair_form(question, "The mean is 7.25.", grounding(("7.25", False, False))) is None
    assert repair_form(question, "The mean is 4.", grounding(("4", True, True))) is None
    assert repair_form(question, "The mean is 4.", grounding(("4", True, False))) == (
        "The mean is @mean[4]."
    )
