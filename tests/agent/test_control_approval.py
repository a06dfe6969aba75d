"""Approve and edit before a run: the loop waits for a decision on each cell."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reckon import ProtocolError
from reckon.agent import Agent, OpenAIModel
from reckon.agent._approval import parse_decision
from support import FakeUpstream, HttpxTransport, ScriptedModel, sse, text_stream, tool_stream

from .helpers import KernelExecutor, answer, code_reply, run


class Person:
    """Answers proposals from a list of decisions and remembers what it was shown."""

    def __init__(self, decisions: list[dict[str, Any]]) -> None:
        self.decisions = list(decisions)
        self.proposals: list[dict[str, Any]] = []

    async def decide(self, proposal: dict[str, Any]) -> dict[str, Any]:
        self.proposals.append(proposal)
        return self.decisions.pop(0)


def test_run_edit_and_reject_reach_the_model(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers += [
        sse([tool_stream("print(6 * 7)", call_id="a")]),
        sse([tool_stream("print(10 / 3)", call_id="b")]),
        sse([tool_stream("import os; os.remove('x')", call_id="c")]),
        sse([text_stream("Done.")]),
    ]
    person = Person([
        {"action": "run"},
        {"action": "edit", "code": "print(round(10 / 3, 2))"},
        {"action": "reject", "reason": "do not delete files"},
    ])  # fmt: skip
    model = OpenAIModel(HttpxTransport(upstream.url), model="gpt-test")
    agent = Agent(model, executor, approval="ask", decide=person.decide)
    outcome = run(agent.ask("go", environment=executor.environment()))
    assert outcome["status"] == "ok"
    assert [p["code"] for p in person.proposals] == [
        "print(6 * 7)", "print(10 / 3)", "import os; os.remove('x')"
    ]  # fmt: skip
    assert {p["tool"] for p in person.proposals} == {"run_python"}
    assert len({p["id"] for p in person.proposals}) == 3
    # Only the approved and the edited code ran; the rejected cell did not.
    assert executor.codes == ["print(6 * 7)", "print(round(10 / 3, 2))"]
    steps = outcome["steps"]
    assert [s.get("decision") for s in steps[:3]] == ["run", "edit", "reject"]
    assert steps[1]["code"] == "print(round(10 / 3, 2))" and steps[1]["proposed"] == "print(10 / 3)"
    assert steps[2]["result"] == {"status": "rejected", "reason": "do not delete files"}
    # What the upstream received says so.
    tools = {m["tool_call_id"]: m["content"] for m in upstream.payloads[-1]["messages"]
             if m["role"] == "tool"}  # fmt: skip
    assert tools["a"].startswith("status: ok") and "42" in tools["a"]
    assert "The user edited your code" in tools["b"] and "print(round(10 / 3, 2))" in tools["b"]
    assert "3.33" in tools["b"]
    assert "rejected" in tools["c"] and "do not delete files" in tools["c"]


def test_code_block_mode_edit_is_told_in_the_observation(executor: KernelExecutor) -> None:
    model = ScriptedModel([answer("```python\nprint(1)\n```"), answer("one")])
    person = Person([{"action": "edit", "code": "print('edited')"}])
    agent = Agent(model, executor, approval="ask", decide=person.decide)
    outcome = run(agent.ask("q", environment=executor.environment()))
    assert outcome["status"] == "ok" and executor.codes == ["print('edited')"]
    last = model.requests[1].messages[-1]["content"]
    assert "The user edited your code" in last and "edited" in last.split("stdout:")[1]


def test_stop_while_waiting_for_a_decision_ends_cleanly(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply("print(1)"), answer("after")])
    waiting = asyncio.Event()

    async def never(proposal: dict[str, Any]) -> dict[str, Any]:
        waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    agent = Agent(model, executor, approval="ask", decide=never)

    async def scenario() -> dict[str, Any]:
        task = asyncio.ensure_future(agent.ask("q", environment=executor.environment()))
        await waiting.wait()
        agent.stop()
        return await task

    outcome = run(scenario())
    assert outcome["status"] == "stopped" and executor.codes == []
    # The history stays valid and the agent answers the next question.
    agent.approval = "auto"
    assert run(agent.ask("again", environment=executor.environment()))["answer"] == "after"


def test_rejections_do_not_count_as_failures(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply("1"), code_reply("2"), code_reply("3"), answer("fine")])
    person = Person([{"action": "reject"}] * 3)
    agent = Agent(model, executor, approval="ask", decide=person.decide, max_failures=2)
    outcome = run(agent.ask("q", environment=executor.environment()))
    assert outcome["status"] == "ok" and executor.codes == []
    assert "(no reason given)" in model.requests[1].messages[-1]["content"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("run", r"must be an object"),
        ({"action": "go"}, r'must be "run", "edit" or "reject"'),
        ({"action": "edit"}, r"needs the edited code"),
        ({"action": "edit", "code": "  "}, r"needs the edited code"),
        ({"action": "reject", "reason": 3}, r"reason must be a string"),
    ],
)
def test_bad_decisions_say_what_to_send(raw: Any, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        parse_decision(raw, "print(1)")


def test_an_unchanged_edit_is_a_run_and_bad_modes_are_refused(executor: KernelExecutor) -> None:
    assert parse_decision({"action": "edit", "code": "x"}, "x").action == "run"
    with pytest.raises(ProtocolError, match='approval must be "auto" or "ask"'):
        Agent(ScriptedModel([]), executor, approval="sometimes")


def test_an_edit_of_a_rewritten_cell_keeps_the_models_own_code(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """The page shows ``proposed`` as the model's code: after Reckon's rewrite (a broken
    print of the answer's form, run as a print) and the person's edit, it is still what
    the model wrote."""
    broken = 'parent = "DCG"\nprint(f"@parent[name]: {parent}")\n@count[value]: {3}")\n'
    upstream.handlers += [sse([tool_stream(broken)]), sse([text_stream("Done.")])]
    person = Person([{"action": "edit", "code": "print('@parent[DCG]')"}])
    model = OpenAIModel(HttpxTransport(upstream.url), model="gpt-test")
    agent = Agent(model, executor, approval="ask", decide=person.decide)
    outcome = run(agent.ask("Which parent? Answer as @parent[name].", environment={}))
    assert person.proposals[0]["code"] != broken  # Reckon's rewrite was what was shown
    step = next(s for s in outcome["steps"] if s["kind"] == "code")
    assert step["decision"] == "edit" and step["code"] == "print('@parent[DCG]')"
    assert step["proposed"] == broken
