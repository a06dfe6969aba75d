"""What it cost: token counts per call, per answer and per session, and the budget."""

from __future__ import annotations

import json
from typing import Any

from reckon.agent import Agent, ChatReply, DemoModel, OpenAIModel
from reckon.agent.models._usage import add_usage, call_usage, estimate_tokens
from support import FakeUpstream, HttpxTransport, ScriptedModel, sse, text_stream, tool_stream

from .helpers import KernelExecutor, answer, code_reply, run


def with_usage(raw: bytes, prompt: int, completion: int) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion,
             "total_tokens": prompt + completion}  # fmt: skip
    chunk = json.dumps({"object": "chat.completion.chunk", "choices": [], "usage": usage})
    return raw.replace(b"data: [DONE]", f"data: {chunk}\n\ndata: [DONE]".encode())


def remote(upstream: FakeUpstream) -> OpenAIModel:
    return OpenAIModel(HttpxTransport(upstream.url), model="gpt-test")


def test_reported_usage_is_summed_per_answer_and_per_session(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers += [
        sse([with_usage(tool_stream("print(6 * 7)"), 100, 10)]),
        sse([with_usage(text_stream("It is 42."), 130, 5)]),
        sse([with_usage(text_stream("Still 42."), 150, 4)]),
    ]
    seen: list[dict[str, Any]] = []
    agent = Agent(remote(upstream), executor, on_usage=seen.append)
    first = run(agent.ask("6*7?", environment=executor.environment()))
    assert first["status"] == "ok"
    assert first["usage"] == {"prompt_tokens": 230, "completion_tokens": 15,
                              "total_tokens": 245, "estimated": False, "calls": 2}  # fmt: skip
    assert [r["usage"]["total_tokens"] for r in first["sent"]] == [110, 135]
    assert seen[-1]["call"]["total_tokens"] == 135 and seen[-1]["answer"]["total_tokens"] == 245
    second = run(agent.ask("again?", environment=executor.environment()))
    assert second["usage"]["total_tokens"] == 154
    assert agent.session_usage["total_tokens"] == 399 and agent.session_usage["calls"] == 3
    assert agent.transcript.asks[0]["usage"] == first["usage"]
    agent.reset()
    assert agent.session_usage["total_tokens"] == 0


def test_without_usage_from_the_upstream_the_counts_are_marked_estimated(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers.append(sse([text_stream("Hello there, friend.")]))
    agent = Agent(remote(upstream), executor)
    outcome = run(agent.ask("hi", environment=executor.environment()))
    usage = outcome["usage"]
    assert usage["estimated"] is True and usage["calls"] == 1
    # The estimate is from what actually went out: the recorded body, four chars a token.
    body = upstream.payloads[0]
    sent = json.dumps({"messages": body["messages"], "tools": body["tools"]}, ensure_ascii=False)
    assert usage["prompt_tokens"] == estimate_tokens(sent) > 100
    assert usage["completion_tokens"] == estimate_tokens("Hello there, friend.") == 5


def test_a_partial_usage_report_is_completed_by_an_estimate() -> None:
    reply = ChatReply(text="abcdefgh", usage={"prompt_tokens": 50})
    usage = call_usage({"messages": []}, reply)
    assert usage == {"prompt_tokens": 50, "completion_tokens": 2, "total_tokens": 52,
                     "estimated": True, "calls": 1}  # fmt: skip
    total = add_usage([usage, None, {"total_tokens": 3, "estimated": False}])
    assert total["total_tokens"] == 55 and total["estimated"] is True


def test_the_demo_model_reports_estimated_usage(executor: KernelExecutor) -> None:
    agent = Agent(DemoModel(), executor)
    outcome = run(agent.ask("what is 17*23+4", environment=executor.environment()))
    assert outcome["status"] == "ok" and "395" in outcome["answer"]
    assert outcome["usage"]["estimated"] is True and outcome["usage"]["calls"] == 2
    assert outcome["usage"]["total_tokens"] > 0
    assert all(record["offline"] for record in outcome["sent"])


def test_the_session_budget_stops_before_running_more_code(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers += [
        sse([with_usage(tool_stream("print('first')"), 400, 20)]),
        sse([with_usage(tool_stream("print('second')"), 500, 20)]),
    ]
    agent = Agent(remote(upstream), executor, token_budget=800)
    outcome = run(agent.ask("go", environment=executor.environment()))
    assert outcome["status"] == "budget"
    assert "token budget for this session is used up (940 of 800 tokens)" in outcome["message"]
    assert "tokenBudget" in outcome["message"]
    # The second cell was proposed after the budget ran out: it never ran.
    assert executor.codes == ["print('first')"]
    assert len(upstream.payloads) == 2
    # The next ask does not call the model at all.
    again = run(agent.ask("more", environment=executor.environment()))
    assert again["status"] == "budget" and "not called again" in again["message"]
    assert len(upstream.payloads) == 2 and again["usage"]["total_tokens"] == 0
    # The history stays valid for an upstream: no tool call is left without its answer.
    assert_every_tool_call_answered(agent.messages)


def assert_every_tool_call_answered(messages: list[dict[str, Any]]) -> None:
    for index, message in enumerate(messages):
        ids = [c["id"] for c in message.get("tool_calls") or []]
        following = messages[index + 1 : index + 1 + len(ids)]
        assert [m.get("tool_call_id") for m in following] == ids, messages


def test_a_per_ask_budget_applies_to_that_answer_only(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [code_reply("print(1)"), code_reply("print(2)"), code_reply("print(3)"), answer("ok")]
    )
    agent = Agent(model, executor)
    limited = run(agent.ask("count", environment=executor.environment(), token_budget=1))
    assert limited["status"] == "budget" and "for this answer" in limited["message"]
    assert executor.codes == []
    free = run(agent.ask("count", environment=executor.environment()))
    assert free["status"] == "ok" and len(executor.codes) == 2
