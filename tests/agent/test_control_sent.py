"""What reaches the model: every request body kept as sent, file-derived parts marked."""

from __future__ import annotations

from typing import Any

from reckon.agent import Agent, OpenAIModel
from reckon.agent.models._sent import file_parts
from support import (
    FakeUpstream,
    HttpxTransport,
    ScriptedModel,
    json_reply,
    sse,
    text_stream,
    tool_stream,
)

from .helpers import KernelExecutor, answer, code_reply, run


def marked(record: dict[str, Any], kind: str) -> list[str]:
    messages = record["body"]["messages"]
    return [
        messages[p["message"]]["content"][p["start"] : p["end"]]
        for p in record["parts"]
        if p["kind"] == kind and p["source"] == "file"
    ]


def test_every_body_is_kept_exactly_as_the_upstream_got_it(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    table = executor.data_dir / "sales.csv"
    table.write_text("region,price\nEast,10\nWest,20\n")
    (executor.data_dir / "notes.txt").write_text("Secret first line\nmore\n")
    upstream.handlers += [
        sse([tool_stream("print(6 * 7)")]),
        sse([tool_stream(f"import pandas as pd\nprint(pd.read_csv({str(table)!r}))")]),
        sse([tool_stream("print(1 + 1)")]),
        sse([text_stream("Done.")]),
    ]
    agent = Agent(OpenAIModel(HttpxTransport(upstream.url), model="gpt-test"), executor)
    outcome = run(agent.ask("look", environment=executor.environment()))
    assert outcome["status"] == "ok"
    sent = outcome["sent"]
    assert [r["body"] for r in sent] == upstream.payloads and len(sent) == 4
    assert not any(r["offline"] for r in sent)
    last = sent[-1]
    schema = marked(last, "schema")
    assert len(schema) == 1 and "sales.csv: table" in schema[0] and "'region' (" in schema[0]
    preview = marked(last, "preview")
    assert len(preview) == 1 and "Secret first line" in preview[0]
    observations = marked(last, "observation")
    # 42 came from arithmetic, before any cell read a file: not marked. Then the table
    # print and everything after it (variables persist) are.
    assert len(observations) == 2
    assert "East" in observations[0] and "2" in observations[1]
    assert all("42" not in o for o in observations)
    # Each body is a copy: the agent's history moving on does not change it.
    assert len(sent[0]["body"]["messages"]) == 2
    assert agent.transcript.asks[0]["sent"] == sent


def test_a_refused_tools_retry_keeps_both_bodies(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers += [
        json_reply(400, {"error": {"message": "tools are not supported"}}),
        sse([text_stream("Fine.")]),
    ]
    agent = Agent(OpenAIModel(HttpxTransport(upstream.url), model="gpt-test"), executor)
    outcome = run(agent.ask("hi", environment=executor.environment()))
    assert [("tools" in r["body"]) for r in outcome["sent"]] == [True, False]
    assert "usage" not in outcome["sent"][0] and outcome["sent"][1]["usage"]["calls"] == 1


def test_a_failed_call_is_still_recorded(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    upstream.handlers.append(json_reply(500, {"error": {"message": "boom"}}))
    agent = Agent(OpenAIModel(HttpxTransport(upstream.url), model="gpt-test"), executor)
    outcome = run(agent.ask("hi", environment=executor.environment()))
    assert outcome["status"] == "error"
    assert [r["body"] for r in outcome["sent"]] == upstream.payloads
    assert outcome["usage"]["calls"] == 0


def test_code_block_mode_observations_are_marked_after_the_header() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "no files"},
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "```python\nrun_sql('SELECT * FROM t')\n```"},
            {"role": "user", "content": "Output of the code you ran:\nstatus: ok\nstdout:\nx"},
        ]
    }
    parts = file_parts(body, {"files": []})
    assert parts == [{"message": 3, "start": 28, "end": 48, "source": "file",
                      "kind": "observation"}]  # fmt: skip
    content = body["messages"][3]["content"]
    assert content[28:] == "status: ok\nstdout:\nx"


def test_offline_models_record_what_they_would_have_got(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply("print(2)"), answer("2")])
    outcome = run(Agent(model, executor).ask("q", environment=executor.environment()))
    assert [r["offline"] for r in outcome["sent"]] == [True, True]
    assert outcome["sent"][1]["body"]["messages"] == model.requests[1].messages
