"""OpenAIModel against a real HTTP server on 127.0.0.1, through an httpx transport."""

from __future__ import annotations

import json

import pytest

from reckon import ModelError
from reckon.agent import Agent, ChatRequest, OpenAIModel
from support import (
    FakeUpstream,
    HttpxTransport,
    chunk,
    json_reply,
    split_every,
    sse,
    text_stream,
    tool_stream,
)

from .helpers import KernelExecutor, run

QUESTION = ChatRequest(messages=[{"role": "user", "content": "hi"}], model="m")


def model(upstream: FakeUpstream, **options: object) -> OpenAIModel:
    return OpenAIModel(HttpxTransport(upstream.url), model="gpt-test", **options)  # type: ignore[arg-type]


def test_streamed_text_split_into_tiny_writes(upstream: FakeUpstream) -> None:
    raw = b": keep-alive\r\n\r\n" + text_stream("Grüße — the answer is 42 🎉").replace(
        b"\n", b"\r\n"
    )
    raw = raw.replace(
        b"data: [DONE]", b'data: {"choices": [], "usage": {"total_tokens": 9}}\r\n\r\ndata: [DONE]'
    )
    upstream.handlers.append(sse(split_every(raw, 3)))
    texts: list[str] = []
    reply = run(model(upstream).complete(QUESTION, on_text=texts.append))
    assert reply.text == "Grüße — the answer is 42 🎉"
    assert "".join(texts) == reply.text and len(texts) > 3
    assert reply.finish_reason == "stop" and reply.usage == {"total_tokens": 9}
    payload = upstream.payloads[0]
    assert payload["stream"] is True and payload["stream_options"] == {"include_usage": True}
    assert payload["model"] == "m" and payload["temperature"] == 0
    assert payload["tools"][0]["function"]["name"] == "run_python"


def test_streamed_tool_call(upstream: FakeUpstream) -> None:
    upstream.handlers.append(sse(split_every(tool_stream("print('a')"), 5)))
    reply = run(model(upstream).complete(QUESTION))
    assert reply.tool_calls == [
        {"id": "call_1", "name": "run_python", "arguments": json.dumps({"code": "print('a')"})}
    ]


def test_non_streaming_json(upstream: FakeUpstream) -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "x",
                "type": "function",
                "function": {"name": "run_python", "arguments": '{"code": "1"}'},
            }
        ],
    }
    upstream.handlers.append(json_reply(200, {
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 3}}))  # fmt: skip
    reply = run(model(upstream, stream=False, temperature=None).complete(QUESTION))
    assert reply.tool_calls[0]["arguments"] == '{"code": "1"}' and reply.usage == {
        "prompt_tokens": 3
    }
    assert "stream" not in upstream.payloads[0] and "temperature" not in upstream.payloads[0]


def test_tools_rejected_retries_without_and_remembers(upstream: FakeUpstream) -> None:
    rejection = {"error": {"type": "invalid_request_error",
                           "message": "this model does not support tools"}}  # fmt: skip
    upstream.handlers += [json_reply(400, rejection), sse([text_stream("fine")]),
                          sse([text_stream("again")])]  # fmt: skip
    client = model(upstream)
    history = ChatRequest(
        messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
             "function": {"name": "run_python", "arguments": '{"code": "1+1"}'}}]},
            {"role": "tool", "tool_call_id": "c", "content": "status: ok"},
        ]
    )  # fmt: skip
    assert run(client.complete(history)).text == "fine"
    assert client.use_tools is False
    assert "tools" in upstream.payloads[0] and "tools" not in upstream.payloads[1]
    roles = [m["role"] for m in upstream.payloads[1]["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert "```python\n1+1\n```" in upstream.payloads[1]["messages"][1]["content"]
    assert run(client.complete(QUESTION)).text == "again"
    assert len(upstream.payloads) == 3  # no second rejection round-trip


@pytest.mark.parametrize("status", [400, 401, 429, 502])
def test_http_errors_raise_model_error(upstream: FakeUpstream, status: int) -> None:
    upstream.handlers.append(json_reply(status, {"error": {"message": f"nope {status}"}}))
    with pytest.raises(ModelError, match=f"nope {status}") as info:
        run(model(upstream).complete(QUESTION))
    assert info.value.status == status


def test_error_object_inside_the_stream(upstream: FakeUpstream) -> None:
    upstream.handlers.append(
        sse([chunk({"content": "par"}), b'data: {"error": {"message": "upstream died"}}\n\n'])
    )
    with pytest.raises(ModelError, match="upstream died"):
        run(model(upstream).complete(QUESTION))


def test_agent_end_to_end_over_http(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    upstream.handlers += [
        sse(split_every(tool_stream("import math\nprint(math.factorial(10))"), 7), delay=0.001),
        sse([text_stream("10! is 3628800.")]),
    ]
    texts: list[str] = []
    agent = Agent(model(upstream), executor, on_text=texts.append)
    outcome = run(agent.ask("What is 10 factorial?", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "10! is 3628800."
    assert outcome["steps"][0]["result"]["stdout"] == "3628800\n"
    second = upstream.payloads[1]["messages"]
    assert second[0]["role"] == "system" and "Never guess" in second[0]["content"]
    assert second[-1]["role"] == "tool" and "3628800" in second[-1]["content"]
    assert "".join(texts) == "10! is 3628800."
