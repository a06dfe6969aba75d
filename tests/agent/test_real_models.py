"""What real model servers do, as they do it: tool calls written as text, thinking,
tool_choice, answers with numbers no step computed (a context window that overflows:
test_real_models_window.py).

Each test scripts a real HTTP server on 127.0.0.1 (``upstream.serve``) with the
replies a real server sent (llama-cpp-python with a GGUF's own template, vLLM,
OpenAI), and drives the agent against it with an in-process kernel.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from reckon.agent._observe import (
    NEXT_AFTER_ERROR,
    NEXT_AFTER_OK,
    OBSERVATION_HEADER,
    parse_observation,
)
from support import FakeUpstream, chunk, sse, text_stream

from .helpers import (
    QWEN_CALL,
    KernelExecutor,
    ask_openai,
    call_reply,
    model_steps,
    openai_agent,
    run,
    text_reply,
)

# What the issue saw: a fenced JSON block whose code is a Python triple-quoted string.
FENCED_TRIPLE = (
    "I will compute it.\n```json\n"
    '{"name": "run_python", "arguments": {"code": """import pandas as pd\n'
    "df = pd.read_csv('/data/sales.csv')\n"
    'print(df.groupby("region")["units"].sum().idxmax())"""}}\n```'
)


def environment(executor: KernelExecutor) -> dict[str, Any]:
    env = executor.environment()
    # The in-process kernel's data dir stands in for the sandbox's /data.
    for entry in env.get("files") or []:
        entry["path"] = str(entry.get("path", "")).replace(str(executor.data_dir), "/data")
    return env


def test_a_tool_call_written_as_text_runs_and_the_history_keeps_it_verbatim(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    code = QWEN_CALL.replace("/data/", f"{sales.data_dir}/")
    replies = [text_reply(code), text_reply("The total is 29 units.")]
    outcome = ask_openai(upstream, sales, "total units?", replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "The total is 29 units."
    (step,) = model_steps(outcome, "code")
    assert step["result"]["stdout"] == "29\n"
    second = upstream.payloads[1]["messages"]
    # Byte for byte what the model wrote, then the output as a user message.
    assert second[-2] == {"role": "assistant", "content": code}
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith(OBSERVATION_HEADER)
    assert "29" in second[-1]["content"]
    assert outcome["grounding"]["ungrounded"] == []


@pytest.mark.parametrize(
    "written",
    [
        pytest.param(
            '```json\n{"name": "run_sql", "arguments": {"query": "SELECT SUM(units) FROM sales"}}'
            "\n```\n\nThe total number of units is 100.",
            id="text-call",
        ),
        pytest.param(
            "```python\nprint(run_sql('SELECT SUM(units) FROM sales'))\n```\n"
            "The total number of units is 100.",
            id="code-block",
        ),
    ],
)
def test_an_answer_written_after_the_call_before_it_ran_is_not_kept(
    upstream: FakeUpstream, sales: KernelExecutor, written: str
) -> None:
    """What Qwen2.5-Coder-1.5B did with the free first call: the call, then the total it
    expected. With that line in its history it answered 100 over the printed 36."""
    replies = [text_reply(written), text_reply("The total is 29 units.")]
    outcome = ask_openai(upstream, sales, "total units?", replies)
    (step,) = model_steps(outcome, "code")
    assert "29" in str(step["result"]) and "100" not in step["text"]
    said = upstream.payloads[1]["messages"][-2]
    assert said["role"] == "assistant" and "100" not in said["content"]
    assert said["content"] == written[: written.index("```\n", 10) + 3]
    assert outcome["answer"] == "The total is 29 units."


def test_fenced_json_with_a_triple_quoted_string_is_read_as_a_call(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [
        text_reply(FENCED_TRIPLE.replace("/data/", f"{sales.data_dir}/")),
        text_reply("North sold the most units."),
    ]
    outcome = ask_openai(upstream, sales, "which region?", replies)
    code = model_steps(outcome, "code")
    assert code[0]["result"]["status"] == "ok" and code[0]["result"]["stdout"] == "North\n"
    assert code[0]["text"] == "I will compute it."
    assert outcome["answer"] == "North sold the most units."


def test_a_guess_with_no_code_is_sent_back_once(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [
        text_reply("The total is 31 units."),  # a guess: auto's first call is left free
        call_reply(f"import pandas as pd\nprint(pd.read_csv('{sales.data_dir}/sales.csv')"
                   "['units'].sum())"),
        text_reply("The total is 29 units."),
    ]  # fmt: skip
    outcome = ask_openai(upstream, sales, "total units?", replies)
    assert outcome["answer"] == "The total is 29 units."
    kinds = [s["kind"] for s in model_steps(outcome)]
    assert kinds == ["recheck", "code", "answer"]
    # A forced call is grammar-constrained JSON on llama-cpp-python: auto forces none,
    # the message alone sends the model back to code.
    first, second, third = upstream.payloads
    assert "tool_choice" not in first and first["tools"]
    assert "tool_choice" not in second and second["tools"]
    assert "tool_choice" not in third
    recheck, code, _ = model_steps(outcome)
    assert "You have not run any code yet" in recheck["message"]
    # The guess is out of sight: asked again, the question with the request to compute.
    asked = [m["content"] for m in second["messages"] if m["role"] != "system"]
    assert asked == ["total units?\n\n" + recheck["message"].split("\n\n", 1)[1]]
    assert outcome["grounding"]["numbers"][0]["steps"] == [code["index"]]


def test_a_number_no_step_computed_is_questioned_then_marked(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [
        call_reply("print(12 + 17)"),
        text_reply("The total is 29 units, 41.5% from the North."),
        text_reply("The total is 29 units, 41.5% from the North."),  # stands by it
    ]
    outcome = ask_openai(upstream, sales, "total?", replies)
    recheck = next(s for s in outcome["steps"] if s["kind"] == "recheck")
    listed, quoted = recheck["message"].split("\nThe last output was:\n")
    assert "41.5%" in listed and "29" not in listed and quoted == "29"
    assert outcome["status"] == "ok" and outcome["grounding"]["ungrounded"] == ["41.5%"]
    marks = {n["text"]: n["computed"] for n in outcome["grounding"]["numbers"]}
    assert marks == {"29": True, "41.5%": False}
    assert len(upstream.payloads) == 3  # asked once, not in a loop


def test_a_guess_written_beside_the_code_gives_way_to_the_output(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    # Seen with Qwen2.5-Coder-1.5B in code-block mode: the code and a guessed answer in
    # one reply, then the same code quoted again with the same guess. (Printed with a
    # label: a lone value is the answer with no model call, ``_printed``.)
    load = f"df = pd.read_csv('{sales.data_dir}/sales.csv')"
    code = f"```python\n{load}\nprint('units:', df['units'].sum())\n```"
    replies = [
        text_reply(f"{code}\n\n@total[25]"),
        text_reply(f"{code}\n\n@total[25]"),
        text_reply("@total[29]"),
    ]
    question = "Total units? Answer as @total[value]."
    outcome = ask_openai(upstream, sales, question, replies, tools="off")
    assert [s["kind"] for s in model_steps(outcome)] == ["code", "recheck", "answer"]
    assert outcome["answer"] == "@total[29]" and outcome["grounding"]["ungrounded"] == []
    observation = upstream.payloads[1]["messages"][-1]["content"]
    assert observation.startswith(OBSERVATION_HEADER) and "\nunits: 29\n" in observation
    assert observation.endswith(NEXT_AFTER_OK)
    recheck = upstream.payloads[2]["messages"][-1]["content"]
    assert "25" in recheck and recheck.endswith("The last output was:\nunits: 29")


def test_an_error_is_followed_by_the_instruction_to_fix_it(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [text_reply("```python\nprint(undefined_name)\n```"), text_reply("No.")]
    ask_openai(upstream, sales, "x?", replies, tools="off")
    observation = upstream.payloads[1]["messages"][-1]["content"]
    assert "NameError" in observation and observation.endswith(NEXT_AFTER_ERROR)
    assert parse_observation(observation)["status"].startswith("error")
    assert NEXT_AFTER_ERROR not in "".join(parse_observation(observation).values())


def test_thinking_is_shown_never_run_and_never_the_answer(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    thought = "<think>Maybe run\n```python\nprint('from thinking')\n```\n</think>"
    reasoning = chunk({"reasoning_content": "The user wants 6*7."})
    upstream.handlers += [
        sse([reasoning, text_stream(thought + "\n```python\nprint(6 * 7)\n```")]),
        sse([chunk({"reasoning_content": "42 it is."}), text_stream("6*7 is 42.")]),
    ]
    deltas: list[str] = []
    bot = openai_agent(upstream, executor)
    bot.options.on_text = deltas.append
    outcome = run(bot.ask("6*7?", environment=executor.environment()))
    kinds = [s["kind"] for s in outcome["steps"]]
    assert kinds == ["thinking", "code", "thinking", "answer"]
    assert "print('from thinking')" in outcome["steps"][0]["text"]
    assert outcome["steps"][1]["code"] == "print(6 * 7)"
    assert outcome["answer"] == "6*7 is 42." and "think" not in "".join(deltas)


def test_parallel_tool_calls_each_run_and_each_get_an_answer(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    calls = [
        {"index": i, "id": f"c{i}", "type": "function",
         "function": {"name": "run_python", "arguments": json.dumps({"code": f"print({i} * 10)"})}}
        for i in (1, 2)
    ]  # fmt: skip
    replies = [
        sse([chunk({"tool_calls": calls}, "tool_calls"), b"data: [DONE]\n\n"]),
        text_reply("10 and 20."),
    ]
    outcome = ask_openai(upstream, executor, "both?", replies)
    outputs = [s["result"]["stdout"] for s in outcome["steps"] if s["kind"] == "code"]
    assert outputs == ["10\n", "20\n"]
    tools = [m for m in upstream.payloads[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["c1", "c2"]


# Qwen2.5-Coder-1.5B leaves the form out, copies it as it stands, or puts the value
# where the name goes: 8 of 17 tools-mode answers in one benchmark run were the last two.
@pytest.mark.parametrize(
    ("answer", "unfilled"),
    [
        ("The region with the highest sales is East.", False),
        ("@region[name]", True),
        ("@East[name]", True),
        ("The answer is @region[].", True),
    ],
)
def test_an_answer_without_the_asked_form_filled_is_sent_back_for_it(
    upstream: FakeUpstream, sales: KernelExecutor, answer: str, unfilled: bool
) -> None:
    replies = [
        call_reply("print('East 40')\nprint('West 20')"),  # not one value: no fill
        text_reply(answer),
        text_reply("@region[East]"),
    ]
    question = "Which region sold the most? Answer as @region[name]."
    outcome = ask_openai(upstream, sales, question, replies)
    assert outcome["answer"] == "@region[East]"
    recheck = next(s for s in outcome["steps"] if s["kind"] == "recheck")
    assert "@region[name]" in recheck["message"]
    assert ("put the computed value inside them" in recheck["message"]) is unfilled


@pytest.mark.parametrize("answer", ["@region[name]", "The region is @region[]."])
def test_a_form_copied_unfilled_after_a_cell_printed_one_value_takes_that_value(
    upstream: FakeUpstream, sales: KernelExecutor, answer: str
) -> None:
    # Seen: `df.groupby('region')['sales'].sum().idxmax()` ran, then "@region[name]" twice.
    # (The cell draws a chart too: a lone value is otherwise the answer, ``_printed``.)
    question = "Which region sold the least? Answer as @region[name]."
    least = f"import pandas as pd\ndf = pd.read_csv('{sales.data_dir}/sales.csv')\n"
    least += "sums = df.groupby('region')['units'].sum()\nsums.plot.bar()\nprint(sums.idxmin())"
    replies = [call_reply(least), text_reply(answer)]
    outcome = ask_openai(upstream, sales, question, replies)
    assert outcome["answer"] == answer.replace("@region[name]", "@region[East]").replace(
        "@region[]", "@region[East]"
    )
    (step,) = [s for s in outcome["steps"] if s["kind"] == "answer"]
    assert step["written"] == answer and len(upstream.payloads) == 2


def test_an_answer_after_a_failed_cell_is_sent_back_once(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [
        call_reply("df['department'].mean()"),
        text_reply("The department is Sales."),
        call_reply("print(1 + 1)"),
        text_reply("It is 2."),
    ]
    outcome = ask_openai(upstream, sales, "which?", replies)
    recheck = next(s for s in outcome["steps"] if s["kind"] == "recheck")
    assert recheck["message"].startswith("Your last code failed (KeyError")
    assert outcome["answer"] == "It is 2." and len(upstream.payloads) == 4


def test_a_small_value_given_as_the_answer_is_still_checked(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [
        call_reply("df = 1"),  # loads, prints nothing
        text_reply("The total is @total[10]."),
        text_reply("The total is @total[10]."),
    ]
    outcome = ask_openai(upstream, sales, "total? @total[value]", replies)
    assert outcome["grounding"]["ungrounded"] == ["10"]
    assert any(s["kind"] == "recheck" for s in outcome["steps"])


def test_the_answer_form_written_as_code_gets_a_hint(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    replies = [call_reply("@total[value] = 3"), text_reply("Gave up.")]
    ask_openai(upstream, executor, "total? @total[value]", replies)
    observation = upstream.payloads[1]["messages"][-1]["content"]
    assert "SyntaxError" in observation and "not for code" in observation


def test_an_answer_given_as_json_under_the_asked_name_is_put_in_the_form(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    """What Qwen2.5-Coder-1.5B wrote for two questions of run 4: the right value, as JSON."""
    replies = [
        call_reply("print('units:', df['units'].sum())"),
        text_reply('```json\n{\n  "total": {\n    "value": 29\n  }\n}\n```'),
    ]
    question = "What is the total of units? Answer as @total[value]."
    outcome = ask_openai(upstream, sales, question, replies)
    assert outcome["answer"] == "@total[29]"
    assert outcome["grounding"]["ungrounded"] == [] and len(upstream.payloads) == 2
