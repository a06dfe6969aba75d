"""Which tools a real model is offered and when it must call one: ``tool_choice`` on the
first call or after a guess, and the switch to code blocks when its server leaves calls
as text or the model writes blocks (the rest of what real servers do:
test_real_models.py).

Each test scripts a real HTTP server on 127.0.0.1 (``upstream.serve``) with the
replies a real server sent, and drives the agent against it with an in-process kernel.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from support import FakeUpstream

from .helpers import (
    QWEN_CALL,
    KernelExecutor,
    ask_openai,
    call_reply,
    openai_agent,
    run,
    text_reply,
)


def test_with_tools_on_the_first_call_with_files_must_run_code_and_later_ones_may_answer(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    replies = [call_reply("print(2 + 2)"), text_reply("It is 4.")]
    ask_openai(upstream, sales, "2+2?", replies, tools="on")
    first, second = upstream.payloads
    assert first["tool_choice"] == {"type": "function", "function": {"name": "run_python"}}
    assert "tool_choice" not in second
    # null content next to tool calls is refused by llama-cpp-python (HTTP 500).
    assistant = [m for m in second["messages"] if m.get("tool_calls")]
    assert assistant and all(m["content"] == "" for m in assistant)


def test_a_call_the_server_left_as_text_switches_auto_to_code_blocks(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    code = QWEN_CALL.replace("/data/", f"{sales.data_dir}/")
    upstream.handlers += [text_reply(code), text_reply("The total is 29 units.")]
    bot = openai_agent(upstream, sales)
    run(bot.ask("total units?", environment=sales.environment()))
    assert upstream.payloads[0]["tools"] and "tools" not in upstream.payloads[1]
    upstream.handlers += [text_reply("Still 29.")]
    run(bot.ask("again?", environment=sales.environment()))
    system = upstream.payloads[2]["messages"][0]["content"]
    assert "```python code block" in system and "run_python tool" not in system


def test_a_call_written_as_json_in_a_block_keeps_the_tools_for_the_rest_of_the_chat(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    # How Qwen2.5-Coder-1.5B calls under llama-cpp-python. Dropping the tools after it
    # changed the prompt's start mid-question and again at the next question, so the
    # server read the question (and, in a chat, the whole history) anew each time.
    call = QWEN_CALL.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
    code = "```json\n" + call.replace("/data/", f"{sales.data_dir}/") + "\n```"
    upstream.handlers += [text_reply(code), text_reply("The total is 29 units.")]
    bot = openai_agent(upstream, sales)
    outcome = run(bot.ask("total units?", environment=sales.environment()))
    assert outcome["status"] == "ok" and "29" in str(outcome["steps"][-2]["result"])
    assert all(p["tools"] for p in upstream.payloads)
    upstream.handlers += [text_reply("Still 29.")]
    run(bot.ask("again?", environment=sales.environment()))
    first, _, again = upstream.payloads
    assert again["tools"] and again["messages"][0] == first["messages"][0]
    assert "run_python tool" in again["messages"][0]["content"]


def test_with_tools_on_a_call_left_as_text_keeps_the_tools(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    code = QWEN_CALL.replace("/data/", f"{sales.data_dir}/")
    replies = [text_reply(code), text_reply("The total is 29 units.")]
    ask_openai(upstream, sales, "total units?", replies, tools="on")
    assert all(p["tools"] for p in upstream.payloads)


def test_no_files_no_forced_call(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    ask_openai(upstream, executor, "hi", [text_reply("Hello!")])
    assert "tool_choice" not in upstream.payloads[0]


def test_a_server_that_refuses_tool_choice_is_asked_again_without_it(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    def refuse(payload: dict[str, Any]) -> Response:
        message = "tool_choice: only 'auto' is supported for this function call format"
        return JSONResponse({"error": {"message": message}}, status_code=400)

    replies = [refuse, call_reply("print(7)"), text_reply("7.")]
    outcome = ask_openai(upstream, sales, "seven?", replies, tools="on")
    assert outcome["status"] == "ok"
    assert "tool_choice" in upstream.payloads[0] and "tool_choice" not in upstream.payloads[1]
    assert upstream.payloads[1]["tools"]  # tools stay: only tool_choice was refused


def test_a_code_block_where_a_call_was_possible_switches_to_code_blocks(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers += [text_reply("```python\nprint(3)\n```"), text_reply("3.")]
    bot = openai_agent(upstream, executor)
    run(bot.ask("three?", environment=executor.environment()))
    assert "tools" in upstream.payloads[0] and "tools" not in upstream.payloads[1]
    upstream.handlers += [text_reply("Still 3.")]
    run(bot.ask("again?", environment=executor.environment()))
    system = upstream.payloads[2]["messages"][0]["content"]
    assert "```python code block" in system and "run_python tool" not in system
