"""A model that runs the same cell again and again is told so (seen with a 1.5B model:
the same query eleven times, until the step limit)."""

from __future__ import annotations

import json

from reckon.agent import Agent, ChatReply
from support import ScriptedModel

from .helpers import KernelExecutor, answer, put_file, run


def call(code: str, call_id: str) -> ChatReply:
    arguments = json.dumps({"code": code})
    tool_call = {"id": call_id, "name": "run_python", "arguments": arguments}
    return ChatReply(text="", tool_calls=[tool_call], finish_reason="tool_calls")


def test_the_same_cell_with_the_same_output_leaves_the_history(executor: KernelExecutor) -> None:
    """The repeat is cut (a small model copies the exchange it sees again and again) and
    one message asks the question again; the tally of runs goes on."""
    model = ScriptedModel(
        [call("print(6 * 7)", "c1"), call("print(6 * 7)", "c2"), call("print(6 * 7)", "c3"),
         answer("42.")]
    )  # fmt: skip
    outcome = run(Agent(model, executor).ask("6*7?", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "42."
    assert len([s for s in outcome["steps"] if s["kind"] == "code"]) == 3
    second, third = model.requests[2].messages, model.requests[3].messages
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert "the code you ran before" not in second[-2]["content"]
    assert "You ran the same code again, with the same output as before (2 times now)" in str(
        second[-1]["content"]
    )
    assert str(second[-1]["content"]).endswith("The question: 6*7?")
    assert len(third) == len(second) and "(3 times now)" in str(third[-1]["content"])


def test_the_fourth_run_of_the_same_cell_ends_the_answer(executor: KernelExecutor) -> None:
    """Seen: one cell eleven times, to the call limit; four ends it, with a message."""
    model = ScriptedModel([call("print(6 * 7)", f"c{n}") for n in range(1, 7)])
    outcome = run(Agent(model, executor).ask("6*7?", environment=executor.environment()))
    assert outcome["status"] == "error" and len(model.requests) == 4
    assert outcome["message"] == (
        "The model ran the same code 4 times in a row, with the same output, "
        "without answering, so I stopped."
    )


def test_the_same_code_with_a_new_output_is_not_called_out(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [call("n = globals().get('n', 0) + 1\nprint(n)", "c1"),
         call("n = globals().get('n', 0) + 1\nprint(n)", "c2"), answer("2.")]
    )  # fmt: skip
    run(Agent(model, executor).ask("count?", environment=executor.environment()))
    tool_answers = [m["content"] for m in model.requests[2].messages if m["role"] == "tool"]
    assert all("the code you ran before" not in a for a in tool_answers)


FENCED = "```python\nprint(6 * 7)\n```"


def test_a_reply_that_is_only_the_last_cell_again_runs_and_is_told(
    executor: KernelExecutor,
) -> None:
    """Seen after a recheck: the model sent back its last cell, unchanged and alone.
    Quoted, it stood as the answer (status ok, an answer of code); run, the repeat
    note tells the model it changes nothing."""
    model = ScriptedModel([answer(FENCED), answer(FENCED), answer("It is 42.")])
    outcome = run(Agent(model, executor).ask("6*7?", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "It is 42."
    code = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert len(code) == 2
    assert "You ran the same code again, with the same output" in str(
        model.requests[2].messages[-1]
    )


def test_the_last_cell_quoted_in_an_answer_is_not_run_again(executor: KernelExecutor) -> None:
    quoted = "I computed it with this code:\n" + FENCED + "\nSo the product of six and seven is 42."
    model = ScriptedModel([answer(FENCED), answer(quoted)])
    outcome = run(Agent(model, executor).ask("6*7?", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"].endswith("is 42.")
    assert len([s for s in outcome["steps"] if s["kind"] == "code"]) == 1


def test_a_count_per_row_run_again_for_a_single_number_is_told_to_reduce_it(
    executor: KernelExecutor,
) -> None:
    """Seen in run 9: "How many cells hold asterisks?" answered by a count per row,
    printed four times in a row; the repeat message says the output is many values and
    the question wants one."""
    rows = "".join(f"{i},{'' if i % 7 else 'x'}\n" for i in range(80))
    put_file(executor, "t.csv", "a,b\n" + rows)
    per_row = "print(df.isnull().sum(axis=1))"
    total = "print(int(df.isnull().sum(axis=1).sum()))"
    model = ScriptedModel([call(per_row, "c1"), call(per_row, "c2"), call(total, "c3"),
                           answer("@missing[68]")])  # fmt: skip
    question = "How many cells of t.csv are empty? Answer as @missing[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    told = str(model.requests[2].messages[-1]["content"])
    assert "Its output is 80 values, one per row or group" in told and ".sum()" in told
    assert outcome["status"] == "ok" and outcome["answer"] == "@missing[68]"


def test_a_series_run_again_for_a_question_of_many_values_is_not_told_to_reduce(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "t.csv", "a\n" + "".join(f"{i}\n" for i in range(80)))
    model = ScriptedModel([call("print(df['a'] * 2)", "c1"), call("print(df['a'] * 2)", "c2"),
                           answer("Done.")])  # fmt: skip
    outcome = run(Agent(model, executor).ask("Double each a.", environment=executor.environment()))
    told = str(model.requests[2].messages[-1]["content"])
    assert told.startswith("You ran the same code again") and "reduce" not in told
    assert outcome["status"] == "ok"


def test_a_cell_that_printed_the_asked_form_and_ran_again_gave_the_answer(
    executor: KernelExecutor,
) -> None:
    """Seen on a question not written for the agent: ``print(f"@items[{n}]")`` run four
    times without an answer, until the stop. Run again, its output is the answer. (The
    cell draws a chart, so its first run is left to the model: ``_printed``.)"""
    cell = "import matplotlib.pyplot as plt\nn = 6 * 7\nplt.bar(['items'], [n])\n"
    cell += "print('counted')\nprint(f'@items[{n}]')"
    model = ScriptedModel([call(cell, f"c{n}") for n in range(1, 5)])
    question = "How many items? Answer as @items[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "@items[42]"
    assert len(model.requests) == 2  # no third call
    assert [s["kind"] for s in outcome["steps"]][-3:] == ["code", "code", "answer"]
    assert outcome["grounding"]["numbers"][0]["computed"]


def test_a_printed_form_that_leaves_an_asked_one_out_is_no_answer(
    executor: KernelExecutor,
) -> None:
    cell = "n = 6 * 7\nprint(f'@items[{n}]')\nprint('kinds:', n // 14)"
    model = ScriptedModel([call(cell, "c1"), call(cell, "c2"), answer("@items[42], @kinds[3]")])
    question = "How many items and kinds? Answer as @items[value], @kinds[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert len(model.requests) == 3 and outcome["answer"] == "@items[42], @kinds[3]"
    assert "recheck" not in [s["kind"] for s in outcome["steps"]]  # asked again, not rechecked


NOTED = (
    "import pandas as pd\n"
    "t = pd.DataFrame({'day': [1, 2], 'temp': [3, 4]})\n"
    "print((t['temp'] > t['temp']).sum())"
)


def test_a_repeated_cell_the_kernel_noted_is_told_the_note_again(
    executor: KernelExecutor,
) -> None:
    """Seen: a cell with the kernel's notes run four times unchanged, until the stop;
    the repeat message said to answer from an output the notes said was wrong."""
    model = ScriptedModel([call(NOTED, "c1"), call(NOTED, "c2"), answer("0."), answer("0.")])
    run(Agent(model, executor).ask("hotter days?", environment=executor.environment()))
    said = str(model.requests[2].messages[-1]["content"])
    assert said.startswith(
        "You ran the same code again, with the same output as before (2 times now). "
        "Reckon's note on that output still holds: t['temp'] > t['temp'] compares "
        "t['temp'] with itself"
    ), said
    assert "change the code as the note says" in said and "answer from that output now" not in said
    assert said.endswith("The question: hotter days?")


def test_a_noted_cell_run_again_leaves_the_history_with_its_first_run(
    executor: KernelExecutor,
) -> None:
    """Seen twice on questions not written for the agent: a noted cell run four times,
    told the note each time, with its first run still in view to copy. Once that run
    left the history too, the model wrote the cell again."""
    model = ScriptedModel([call(NOTED, "c1"), call(NOTED, "c2"), answer("0."), answer("0.")])
    run(Agent(model, executor).ask("hotter days?", environment=executor.environment()))
    before, after = model.requests[1].messages, model.requests[2].messages
    assert any("c1" in json.dumps(m) for m in before)
    assert not any(NOTED in json.dumps(m) or "c1" in json.dumps(m) for m in after)
    assert len(after) == len(before) - 1
    assert after[-1]["role"] == "user" and "note on that output still holds" in after[-1]["content"]


def test_a_failed_cell_run_again_is_not_told_to_answer_from_its_output(
    executor: KernelExecutor,
) -> None:
    """Seen: the same failed cell twice got the fresh start's list of errors, then
    "answer from that output now", about an output that was a traceback."""
    broken = "x = 1 +"
    model = ScriptedModel(
        [call("print(1)", "c0"), call(broken, "c1"), call(broken, "c2"), answer("It is 2.")]
    )
    run(Agent(model, executor).ask("1+1?", environment=executor.environment()))
    said = [str(m.get("content")) for m in model.requests[3].messages if m["role"] == "user"]
    assert said[-1].startswith("Your code failed 2 times in a row:")
    assert not any("same code again" in s for s in said)


def test_the_failed_cell_quoted_after_its_fix_is_not_run(executor: KernelExecutor) -> None:
    """Seen in a real-model browser test: the fix in one block, then the failed cell
    again in a second; joined, the fix printed 3.1 and the old cell failed after it."""
    broken = "import pandas as pd\nx = pd.read_csvv('a.csv')"
    fixed = "print(round((2.5 + 3 + 2 + 4.5 + 3.5) / 5, 2))"
    reply = f"Fixed:\n```python\n{fixed}\n```\nYour code was:\n```python\n{broken}\n```"
    model = ScriptedModel([call(broken, "c1"), answer(reply), answer("It is 3.1.")])
    outcome = run(Agent(model, executor).ask("mean?", environment=executor.environment()))
    code = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert [s["code"].strip() for s in code] == [broken, fixed]
    assert code[1]["result"]["status"] == "ok" and outcome["answer"] == "It is 3.1."
