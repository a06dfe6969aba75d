"""The agent loop with a scripted model and the real kernel."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from reckon import ModelError
from reckon.agent import OBSERVATION_HEADER, Agent, ChatReply, ChatRequest, replay_cells
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, run


def tool_messages(request: ChatRequest) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def test_success_path_and_follow_up(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [
            code_reply("x = 6 * 7\nprint(x)", text="Let me compute."),
            answer("The answer is 42."),
            code_reply("print(x + 1)"),
            answer("Then 43."),
        ]
    )
    seen: list[dict[str, Any]] = []
    texts: list[str] = []
    agent = Agent(model, executor, on_step=seen.append, on_text=texts.append)
    outcome = run(agent.ask("What is 6*7?", environment=executor.environment()))
    assert outcome["status"] == "ok"
    assert outcome["answer"] == "The answer is 42."
    assert "message" not in outcome
    kinds = [step["kind"] for step in outcome["steps"]]
    assert kinds == ["code", "answer"]
    first = outcome["steps"][0]
    assert first["text"] == "Let me compute." and first["code"].startswith("x = 6 * 7")
    assert first["result"]["stdout"] == "42\n"
    assert first["model"] == "scripted" and first["ms"] >= 0 and first["index"] == 0
    assert seen == outcome["steps"]
    assert "The answer is 42." in texts
    # The model saw the real output of the cell.
    assert "42" in tool_messages(model.requests[1])[0]
    assert model.requests[0].messages[0]["role"] == "system"
    assert model.requests[0].context["python"] == "3.12.7"

    follow = run(agent.ask("And plus one?", environment=executor.environment()))
    assert follow["status"] == "ok" and follow["steps"][0]["result"]["stdout"] == "43\n"
    history = [m.get("content") for m in model.requests[2].messages]
    assert "What is 6*7?" in history and "The answer is 42." in history
    assert replay_cells(agent.transcript) == ["x = 6 * 7\nprint(x)", "print(x + 1)"]

    agent.reset()
    assert agent.messages == [] and agent.transcript.asks == []


def test_error_then_fix_shows_the_traceback(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [
            code_reply("values = [1, 2, 3]\ntotal = sum(values) / 0"),
            code_reply("total = sum(values) / len(values)\nprint(total)"),
            answer("The mean is 2.0."),
        ]
    )
    outcome = run(Agent(model, executor).ask("mean?", environment=executor.environment()))
    assert outcome["status"] == "ok"
    assert [s["result"]["status"] for s in outcome["steps"][:2]] == ["error", "ok"]
    observation = tool_messages(model.requests[1])[0]
    assert "ZeroDivisionError: division by zero" in observation
    assert "Traceback" in observation and "Cell line 2" in observation


def test_max_failures_stops_with_a_clear_message_when_an_error_comes_back(
    executor: KernelExecutor,
) -> None:
    errors = ["bad 0", "bad 1", "bad 0", "bad 3"]
    model = ScriptedModel([code_reply(f"raise ValueError({e!r})") for e in errors])
    agent = Agent(model, executor, max_failures=3)
    outcome = run(agent.ask("go", environment=executor.environment()))
    assert outcome["status"] == "error"
    assert "3 times in a row" in outcome["message"] and "ValueError: bad 0" in outcome["message"]
    assert len(model.requests) == 3 and len(outcome["steps"]) == 3


def test_failures_that_each_differ_go_on_to_twice_the_limit(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply(f"raise ValueError('bad {i}')") for i in range(8)])
    outcome = run(Agent(model, executor, max_failures=3).ask("go", environment={}))
    assert outcome["status"] == "error" and "6 times in a row" in outcome["message"]
    assert len(model.requests) == 6


def test_two_failures_start_again_fresh_with_what_went_wrong(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [code_reply("x = 1"), code_reply("print(undefined_a)"), code_reply("1/0"),
         code_reply("print(x + 1)"), answer("It is 2.")]
    )  # fmt: skip
    outcome = run(Agent(model, executor, max_failures=3).ask("Add 1 to 1.", environment={}))
    assert outcome["status"] == "ok" and outcome["answer"] == "It is 2."
    third = json.dumps(model.requests[3].messages)
    # The failed attempts left the history; one message says what went wrong in each.
    assert "undefined_a" not in third.split("failed 2 times")[0]
    restart = model.requests[3].messages[-1]["content"]
    assert restart.startswith("Your code failed 2 times in a row:")
    assert "NameError" in restart and "ZeroDivisionError" in restart
    assert "x = 1" in third  # the good state before them stays
    # Every attempt is still a step the person sees.
    assert [s["result"]["status"] for s in outcome["steps"] if s["kind"] == "code"] == [
        "ok",
        "error",
        "error",
        "ok",
    ]


def test_a_success_resets_the_failure_count(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [code_reply("1/0"), code_reply("1/0"), code_reply("print('ok')"), code_reply("1/0"),
         code_reply("1/0"), answer("done")]
    )  # fmt: skip
    outcome = run(Agent(model, executor, max_failures=3).ask("go", environment={}))
    assert outcome["status"] == "ok"


def test_max_steps_stops_with_the_last_text(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply("print(1)", text=f"try {i}") for i in range(5)])
    outcome = run(Agent(model, executor, max_steps=2).ask("go", environment={}))
    assert outcome["status"] == "error"
    assert "2 model calls" in outcome["message"]
    assert outcome["answer"] == "try 1"
    assert len(model.requests) == 2


def test_model_error_ends_the_ask_and_the_next_one_works(executor: KernelExecutor) -> None:
    async def fail(request: ChatRequest) -> ChatReply:
        raise ModelError("rate limited", status=429)

    model = ScriptedModel([fail, answer("fine")])
    agent = Agent(model, executor)
    outcome = run(agent.ask("go", environment={}))
    assert outcome["status"] == "error" and "rate limited" in outcome["message"]
    assert outcome["steps"][-1]["kind"] == "error"
    assert run(agent.ask("again", environment={}))["status"] == "ok"


def stopped_then_asked_again(
    agent: Agent, *, after: float
) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Ask, stop the agent ``after`` seconds, then ask again: both outcomes and how long
    the stopped ask took."""

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], float]:
        asyncio.get_running_loop().call_later(after, agent.stop)
        started = time.monotonic()
        first = await agent.ask("first", environment={})
        elapsed = time.monotonic() - started
        second = await agent.ask("second", environment={})
        return first, second, elapsed

    return run(scenario())


def test_stop_during_a_long_model_call(executor: KernelExecutor) -> None:
    async def slow(request: ChatRequest) -> ChatReply:
        await asyncio.sleep(30)
        return answer("too late")

    model = ScriptedModel([slow, answer("second ask works")])
    first, second, elapsed = stopped_then_asked_again(Agent(model, executor), after=0.2)
    assert first["status"] == "stopped" and first["message"] == "Stopped by the user."
    assert elapsed < 5
    assert second["status"] == "ok" and second["answer"] == "second ask works"


def test_stop_during_a_long_cell(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [
            code_reply("import asyncio\nkept = 5\nawait asyncio.sleep(30)"),
            code_reply("print(kept * 2)"),
            answer("10"),
        ]
    )
    agent = Agent(model, executor)
    first, second, elapsed = stopped_then_asked_again(agent, after=0.5)
    assert first["status"] == "stopped" and elapsed < 5
    assert executor.interrupts == 1
    assert first["steps"][0]["result"]["status"] == "interrupted"
    # Every tool call got its answer, so the history is valid for the next ask.
    calls = [m for m in agent.messages if m["role"] == "tool"]
    assert "interrupted" in calls[0]["content"]
    assert second["status"] == "ok"
    assert second["steps"][0]["result"]["stdout"] == "10\n"  # the namespace survived


def test_code_block_fallback(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [
            answer("Let me compute.\n```python\nresult = 2 + 3\nprint(result)\n```"),
            answer("It is 5. I ran:\n```python\nresult = 2 + 3\nprint(result)\n```"),
        ]
    )
    outcome = run(Agent(model, executor).ask("2+3?", environment={}))
    assert outcome["status"] == "ok"
    step = outcome["steps"][0]
    assert step["kind"] == "code" and step["code"] == "result = 2 + 3\nprint(result)"
    assert step["text"] == "Let me compute."
    observation = model.requests[1].messages[-1]
    assert observation["role"] == "user"
    assert observation["content"].startswith(OBSERVATION_HEADER) and "5" in observation["content"]
    # Quoting the same code again in the answer does not run it again.
    assert outcome["steps"][1]["kind"] == "answer" and len(executor.codes) == 1


def test_broken_tool_arguments(executor: KernelExecutor) -> None:
    broken = ChatReply(
        tool_calls=[{"id": "c1", "name": "run_python", "arguments": '{"code": "print(1)'}]
    )
    raw_newlines = ChatReply(
        tool_calls=[
            {"id": "c2", "name": "run_python", "arguments": '{"code": "a = 1\nprint(a + 1)"}'}
        ]
    )
    model = ScriptedModel([broken, raw_newlines, answer("2")])
    outcome = run(Agent(model, executor).ask("go", environment={}))
    assert outcome["status"] == "ok"
    assert [s["kind"] for s in outcome["steps"]] == ["error", "code", "answer"]
    assert "not valid JSON" in tool_messages(model.requests[1])[0]
    assert outcome["steps"][1]["result"]["stdout"] == "2\n"


def test_observations_are_trimmed(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply("print('START' + 'x' * 50000 + 'END')"), answer("long")])
    outcome = run(Agent(model, executor, observation_limit=1000).ask("go", environment={}))
    observation = tool_messages(model.requests[1])[0]
    assert len(observation) < 1100
    assert "START" in observation and "END" in observation and "characters omitted" in observation
    assert len(outcome["steps"][0]["result"]["stdout"]) > 50000  # the step keeps everything


def test_several_tool_calls_in_one_reply(executor: KernelExecutor) -> None:
    calls = [
        {"id": "a", "name": "run_python", "arguments": json.dumps({"code": "p = 2"})},
        {"id": "b", "name": "run_python", "arguments": json.dumps({"code": "print(p ** 10)"})},
    ]
    model = ScriptedModel([ChatReply(text="Two cells.", tool_calls=calls), answer("1024")])
    outcome = run(Agent(model, executor).ask("go", environment={}))
    assert [s["kind"] for s in outcome["steps"]] == ["code", "code", "answer"]
    assert outcome["steps"][1]["result"]["stdout"] == "1024\n"
    assert [m["tool_call_id"] for m in model.requests[1].messages if m["role"] == "tool"] == [
        "a",
        "b",
    ]
