"""``protocol = "anthropic"``: the browser speaks chat-completions, the upstream the Messages API.

The answers: whole and streamed, text and tool calls, through the official `openai`
SDK as the relay's client; errors mid-stream and from the upstream; and the stream
translator on its own, for any split of the bytes. The fake model server from
conftest answers with scripted Anthropic JSON and SSE (anthropic_kit.py).
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from reckon.server._anthropic import StreamTranslator
from support import MODEL, THE_KEY, Relay, Script, an_sdk_client

from .anthropic_kit import (
    HELLO,
    MESSAGE,
    RUN_PYTHON,
    TEXT_STREAM,
    TOOL_STREAM,
    ending,
    message_start,
    sse,
    text_block,
)


def test_a_plain_answer_comes_back_as_a_chat_completion(a_claude_relay: Relay) -> None:
    answer = an_sdk_client(a_claude_relay).chat.completions.create(model=MODEL, messages=HELLO)

    assert answer.choices[0].message.content == "Hello from Claude"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (3, 5)
    seen = a_claude_relay.upstream.seen[-1]
    assert seen.path == "/v1/messages"
    assert seen.json == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }


def test_a_whole_answer_with_tool_use_becomes_tool_calls(a_claude_relay: Relay) -> None:
    message: dict[str, Any] = {
        **MESSAGE,
        "content": [
            {"type": "text", "text": "Computing."},
            {"type": "tool_use", "id": "toolu_9", "name": "run_python", "input": {"code": "2*3"}},
        ],
        "stop_reason": "tool_use",
    }
    a_claude_relay.upstream.script = Script(body=json.dumps(message).encode())
    answer = an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL, messages=HELLO, tools=[RUN_PYTHON]
    )

    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Computing."
    [call] = choice.message.tool_calls or []
    assert call.id == "toolu_9"
    assert call.type == "function"
    assert call.function.name == "run_python"
    assert json.loads(call.function.arguments) == {"code": "2*3"}


def test_a_streamed_text_answer_arrives_through_the_sdk_with_usage(a_claude_relay: Relay) -> None:
    stream = an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL, messages=HELLO, stream=True, stream_options={"include_usage": True}
    )
    text, finish, usage = "", None, None
    for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
        usage = chunk.usage or usage

    assert text == "Hello → é"
    assert finish == "stop"
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (11, 7, 18)
    assert a_claude_relay.upstream.seen[-1].json["stream"] is True


def test_a_tool_call_streamed_in_pieces_is_assembled_by_the_sdk(a_claude_relay: Relay) -> None:
    a_claude_relay.upstream.script = Script(chunks=list(TOOL_STREAM))
    with an_sdk_client(a_claude_relay).chat.completions.stream(
        model=MODEL, messages=HELLO, tools=[RUN_PYTHON]
    ) as stream:
        final = stream.get_final_completion()

    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me compute."
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name) for c in calls] == [
        ("toolu_1", "run_python"),
        ("toolu_2", "list_files"),
    ]
    assert json.loads(calls[0].function.arguments) == {"code": "1+1"}
    # A tool without parameters streams no JSON; the client still gets an object.
    assert json.loads(calls[1].function.arguments) == {}


def test_tool_call_deltas_carry_the_tools_position_and_id_only_first(
    a_claude_relay: Relay,
) -> None:
    a_claude_relay.upstream.script = Script(chunks=list(TOOL_STREAM))
    payload = {"model": MODEL, "messages": HELLO, "stream": True}
    with (
        a_claude_relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json=payload) as response,
    ):
        body = response.read()

    assert response.headers["content-type"].startswith("text/event-stream")
    events = [e.removeprefix(b"data: ") for e in body.split(b"\n\n") if e]
    assert events[-1] == b"[DONE]"
    calls = [
        call
        for e in events[:-1]
        for call in json.loads(e)["choices"][0]["delta"].get("tool_calls", [])
    ]
    assert calls[0] == {
        "index": 0,
        "id": "toolu_1",
        "type": "function",
        "function": {"name": "run_python", "arguments": ""},
    }
    assert [c["function"]["arguments"] for c in calls[1:4]] == ['{"co', 'de": "1', '+1"}']
    assert all(set(c) == {"index", "function"} for c in calls[1:4])
    assert [c["index"] for c in calls] == [0, 0, 0, 0, 1, 1]


def test_an_error_event_mid_stream_is_raised_by_the_sdk(a_claude_relay: Relay) -> None:
    error = {"type": "overloaded_error", "message": "Overloaded"}
    a_claude_relay.upstream.script = Script(
        chunks=[*TEXT_STREAM[:4], sse("error", error=error), *TEXT_STREAM[4:]]
    )
    stream = an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL, messages=HELLO, stream=True
    )
    texts = []
    with pytest.raises(openai.APIError, match="failed mid-answer: Overloaded"):
        for chunk in stream:
            texts.append(chunk.choices[0].delta.content)

    assert texts == ["", "Hel"]


def test_a_stream_that_dies_midway_ends_with_the_relays_error_event(a_claude_relay: Relay) -> None:
    a_claude_relay.upstream.script = Script(chunks=list(TEXT_STREAM), break_after=4)
    stream = an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL, messages=HELLO, stream=True
    )
    with pytest.raises(
        openai.APIError, match=r"server 'claude' .* closed the answer before its end"
    ):
        for _ in stream:
            pass


def test_leaving_mid_stream_closes_the_upstream_request(a_claude_relay: Relay) -> None:
    a_claude_relay.upstream.script = Script(chunks=list(TEXT_STREAM), stall_after=4)
    payload = {"model": MODEL, "messages": HELLO, "stream": True}
    with (
        a_claude_relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json=payload) as response,
    ):
        # Held, so that leaving the loop does not close the response yet.
        chunks = response.iter_raw()
        for chunk in chunks:
            if b"Hel" in chunk:
                break
        assert not a_claude_relay.upstream.client_left.is_set()

    assert a_claude_relay.upstream.client_left.wait(5)


def test_an_upstream_http_error_keeps_its_status_in_our_error_shape(a_claude_relay: Relay) -> None:
    error = {"type": "invalid_request_error", "message": "prompt is too long"}
    a_claude_relay.upstream.script = Script(
        status=400, body=json.dumps({"type": "error", "error": error}).encode()
    )
    with pytest.raises(openai.BadRequestError) as raised:
        an_sdk_client(a_claude_relay).chat.completions.create(model=MODEL, messages=HELLO)

    assert raised.value.status_code == 400
    body = raised.value.response.json()
    assert body["error"]["type"] == "invalid_request_error"
    assert (
        "The model server 'claude' answered HTTP 400: prompt is too long"
        in (body["error"]["message"])
    )


def test_a_malformed_tool_is_a_400_not_a_crash(a_claude_relay: Relay) -> None:
    payload = {"model": MODEL, "messages": HELLO, "tools": [{"type": "function"}]}
    with a_claude_relay.client() as client:
        response = client.post("/v1/chat/completions", json=payload)

    assert response.status_code == 400
    assert "cannot be translated" in response.json()["error"]["message"]
    assert a_claude_relay.upstream.seen == []


def test_a_whole_answer_that_is_not_a_message_is_a_502(a_claude_relay: Relay) -> None:
    a_claude_relay.upstream.script = Script(body=b"<html>gateway</html>")
    with a_claude_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.status_code == 502
    assert "not an Anthropic message" in response.json()["error"]["message"]


def test_the_key_is_scrubbed_from_translated_answers(a_claude_relay: Relay) -> None:
    a_claude_relay.upstream.script = Script(
        chunks=[message_start(), *text_block(0, f"key: {THE_KEY}"), *ending("end_turn")]
    )
    payload = {"model": MODEL, "messages": HELLO, "stream": True}
    with a_claude_relay.client() as client:
        body = client.post("/v1/chat/completions", json=payload).content

    assert THE_KEY.encode() not in body
    assert b"key: [redacted]" in body


def translate_whole(translator: StreamTranslator, pieces: list[bytes]) -> bytes:
    translator.created = 1  # comparable across translators
    return b"".join(translator.feed(p) for p in pieces) + translator.close()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_the_stream_translator_gives_the_same_output_for_any_byte_split(newline: bytes) -> None:
    raw = b"".join([*TOOL_STREAM[:3], b": a comment\n\n", *TOOL_STREAM[3:]])
    raw = raw.replace(b"\n", newline)
    whole = translate_whole(StreamTranslator(model=MODEL), [raw])
    assert whole.endswith(b"data: [DONE]\n\n")
    # Role, text, tool start and 3 pieces, second tool start and its "{}", finish, [DONE].
    assert whole.count(b"data: ") == 10

    for offset in range(len(raw) + 1):
        pieces = [raw[:offset], raw[offset:]]
        assert translate_whole(StreamTranslator(model=MODEL), pieces) == whole, offset
    one_by_one = [raw[i : i + 1] for i in range(len(raw))]
    assert translate_whole(StreamTranslator(model=MODEL), one_by_one) == whole


def test_the_stream_translator_splits_inside_a_multibyte_character() -> None:
    raw = b"".join(TEXT_STREAM)
    offset = raw.index("é".encode()) + 1
    out = translate_whole(StreamTranslator(model=MODEL), [raw[:offset], raw[offset:]])

    events = [json.loads(e[len(b"data: ") :]) for e in out.split(b"\n\n")[:-2]]
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in events)
    assert text == "Hello → é"


def test_a_stream_that_ends_before_the_message_does_is_an_error() -> None:
    out = translate_whole(StreamTranslator(model=MODEL), TEXT_STREAM[:4])

    last = json.loads(out.split(b"\n\n")[-2].removeprefix(b"data: "))
    assert last["error"]["type"] == "upstream_error"
    assert "before the answer was complete" in last["error"]["message"]
    assert b"[DONE]" not in out
