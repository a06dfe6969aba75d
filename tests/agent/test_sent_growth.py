"""A long session's request records cost per step what the step added, not the history.

Counted, not timed: the characters the log copies per request, and the size of a
saved transcript, against the session's length.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from reckon import ProtocolError
from reckon.agent import Agent, OpenAIModel
from reckon.agent.export._transcript import Transcript, dump_state, load_state
from reckon.agent.models._sent import file_parts
from reckon.agent.models._usage import estimate_tokens

from .helpers import KernelExecutor, run

STEPS = 5  # cells per question, then an answer


class StepTransport:
    """An upstream that answers like tests/browser/test_page_load.py's (in process, so a
    long session stays quick): ``STEPS`` cells per question, then an answer. Keeps every
    body as serialized, which is what a real transport sends."""

    def __init__(self, code: str = "print('step {ask}.{done}')") -> None:
        self.code = code
        self.payloads: list[dict[str, Any]] = []
        self.asks = 0

    async def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.payloads.append(json.loads(json.dumps(payload)))
        messages = payload["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
        if done < STEPS:
            code = self.code.format(ask=self.asks, done=done)
            arguments = json.dumps({"code": code})
            function = {"name": "run_python", "arguments": arguments}
            call = {"id": f"c{len(self.payloads)}", "type": "function", "function": function}
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        else:
            self.asks += 1
            message = {"role": "assistant", "content": f"Done after {done} steps."}
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    def stream(self, path: str, payload: dict[str, Any]) -> Any:
        raise AssertionError("this model is not streamed")


def session(
    executor: KernelExecutor, asks: int, transport: StepTransport
) -> tuple[Agent, list[int]]:
    """Runs ``asks`` questions; returns the agent and the characters copied per request
    (read after each call from the log's counter, through the usage callback)."""
    totals: list[int] = []
    agent = Agent(
        OpenAIModel(transport, model="steps", stream=False),
        executor,
        on_usage=lambda _: totals.append(agent.conversation.sent_log.copied),
    )
    for number in range(asks):
        outcome = run(agent.ask(f"ask {number}", environment=executor.environment()))
        assert outcome["status"] == "ok", outcome
    return agent, [b - a for a, b in zip([0, *totals], totals, strict=False)]


def _table(executor: KernelExecutor) -> str:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    (executor.data_dir / "sales.csv").write_text("region,price\nEast,10\nWest,20\n")
    return str(executor.data_dir / "sales.csv")


def test_each_request_copies_only_what_it_added(executor: KernelExecutor) -> None:
    table = _table(executor)
    transport = StepTransport(f"import pandas as pd\nprint(pd.read_csv({table!r}), {{done}})")
    agent, copied = session(executor, 12, transport)
    bodies = transport.payloads
    assert len(copied) == len(bodies) == 12 * (STEPS + 1)
    # Still every body exactly as sent, with the same parts as scanning it whole.
    records = [r for ask in agent.transcript.asks for r in ask["sent"]]
    assert [r["body"] for r in records] == bodies
    environment = executor.environment()
    assert [r["parts"] for r in records] == [file_parts(b, environment) for b in bodies]
    assert any(p["kind"] == "observation" for p in records[-1]["parts"])
    # The token estimate is what serializing the whole body would give.
    for record in records:
        sent = json.dumps({k: record["body"][k] for k in ("messages", "tools")}, ensure_ascii=False)
        assert record["usage"]["prompt_tokens"] == estimate_tokens(sent)
    # The bodies grow with the history; what each request copied does not.
    sizes = [len(json.dumps(b)) for b in bodies]
    assert sizes[-1] > 5 * sizes[1]
    # The first request copies the prompt and the tools; later ones the new messages
    # (the same few hundred characters at question 12 as at question 2).
    second, last = copied[STEPS + 1 : 2 * (STEPS + 1)], copied[-(STEPS + 1) :]
    assert max(last) <= max(second) + 8 and sum(last) <= sum(second) + 8 * STEPS
    assert min(copied) > 0 and max(copied[1:]) < sizes[0] / 4
    assert sum(copied) < 2 * sizes[-1] < sum(sizes) / 10


def test_a_saved_ask_costs_its_first_body_and_what_each_step_added(
    executor: KernelExecutor,
) -> None:
    table = _table(executor)
    transport = StepTransport(f"print(open({table!r}).read(), {{done}})")
    agent, _ = session(executor, 12, transport)
    asks = agent.transcript.asks
    saved = json.loads(agent.transcript.to_json(compact=True))["asks"]
    # Each ask's first request is saved whole, the others as what they added: the same
    # size at question 12 as at question 2, where whole bodies grew with the history.
    rest = [len(json.dumps(ask["sent"][1:])) for ask in saved]
    whole = [len(json.dumps(ask["sent"][1:])) for ask in asks]
    assert whole[-1] > 3 * whole[1] and max(rest[1:]) <= rest[1] + 30 * STEPS
    assert rest[-1] < whole[-1] / 10
    assert all("keep" not in ask["sent"][0] for ask in saved)
    back = Transcript.from_json(agent.transcript.to_json(compact=True))
    assert json.loads(back.to_json()) == json.loads(agent.transcript.to_json())
    assert saved[0]["sent"][1]["keep"] == [0, 2] and saved[1]["sent"][1]["keep"][0] == 0


def test_a_new_system_prompt_or_a_new_file_is_still_recorded_exactly(
    executor: KernelExecutor,
) -> None:
    transport = StepTransport("print(open('/data/notes.txt').read(), {done})")
    agent = Agent(OpenAIModel(transport, model="steps", stream=False), executor)
    run(agent.ask("ask 0", environment=executor.environment()))
    _table(executor)  # an upload: a new prompt and a new file name to look for
    run(agent.ask("ask 1", environment=executor.environment()))
    agent.messages[0] = {"role": "system", "content": "a prompt edited by hand"}
    outcome = run(agent.ask("ask 2", environment=executor.environment()))
    records = [r for ask in agent.transcript.asks for r in ask["sent"]]
    assert [r["body"] for r in records] == transport.payloads
    environment = executor.environment()
    assert outcome["sent"][-1]["parts"] == file_parts(outcome["sent"][-1]["body"], environment)
    back = Transcript.from_json(agent.transcript.to_json(compact=True))
    assert json.loads(back.to_json()) == json.loads(agent.transcript.to_json())


def test_old_saves_load_and_a_broken_delta_says_what_is_wrong() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    old = {"version": 1, "asks": [{"question": "q", "sent": [{"body": body, "parts": []}]}]}
    assert Transcript.from_json(json.dumps(old)).asks == old["asks"]
    delta = {"body": {"model": "m", "messages": []}, "parts": [], "keep": [0, 5]}
    for sent in ([delta], [{"body": body, "parts": []}, delta]):
        broken = {"version": 1, "asks": [{"question": "q", "sent": sent}]}
        with pytest.raises(ProtocolError, match="delta"):
            Transcript.from_json(json.dumps(broken))


def test_the_saved_agent_state_comes_back_whole_and_bad_ones_say_what_is_wrong(
    executor: KernelExecutor,
) -> None:
    agent, _ = session(executor, 2, StepTransport())
    messages, transcript = load_state(dump_state(agent.messages, agent.transcript))
    assert messages == agent.messages and len(messages) > 2 * STEPS
    assert json.loads(transcript.to_json()) == json.loads(agent.transcript.to_json())
    nothing, empty = load_state("{}")
    assert nothing == [] and empty.asks == []
    bad = {
        "not json": "a saved agent state is not JSON",
        "[]": "must be an object",
        '{"version": 2}': "unsupported agent state version 2",
        '{"messages": [{"role": "robot"}]}': "known role",
        '{"transcript": {"asks": 3}}': "'asks' list",
    }
    for text, message in bad.items():
        with pytest.raises(ProtocolError, match=message):
            load_state(text)
