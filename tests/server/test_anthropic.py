"""``protocol = "anthropic"``: the browser speaks chat-completions, the upstream the Messages API.

The fake model server from conftest answers with scripted Anthropic JSON and
SSE; the official `openai` SDK is the client of the relay.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from reckon.server import Profile, load_config_file
from reckon.server._anthropic import StreamTranslator
from support import KEY_ENV, MODEL, THE_KEY, FakeUpstream, Relay, Script, an_sdk_client

HELLO: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
RUN_PYTHON: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "run_python",
        "description": "Run Python code in the kernel.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}},
            "required": ["code"],
        },
    },
}


def sse(kind: str, **data: Any) -> bytes:
    # Anthropic sends UTF-8 as it is, so a split may fall inside a character.
    event = json.dumps({"type": kind, **data}, ensure_ascii=False)
    return f"event: {kind}\ndata: {event}\n\n".encode()


def message_start(input_tokens: int = 11) -> bytes:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return sse("message_start", message=message)


def text_block(index: int, *pieces: str) -> list[bytes]:
    return [
        sse("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *[
            sse("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
            for p in pieces
        ],
        sse("content_block_stop", index=index),
    ]


def tool_block(index: int, tool_id: str, name: str, *pieces: str) -> list[bytes]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return [
        sse("content_block_start", index=index, content_block=block),
        *[
            sse(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": p},
            )
            for p in pieces
        ],
        sse("content_block_stop", index=index),
    ]


def ending(stop_reason: str, output_tokens: int = 7) -> list[bytes]:
    return [
        sse(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        sse("message_stop"),
    ]


TEXT_STREAM = [
    message_start(),
    sse("ping"),
    *text_block(0, "Hel", "lo → é"),
    *ending("end_turn"),
]

TOOL_STREAM = [
    message_start(),
    *text_block(0, "Let me compute."),
    *tool_block(1, "toolu_1", "run_python", '{"co', 'de": "1', '+1"}'),
    *tool_block(2, "toolu_2", "list_files"),
    *ending("tool_use"),
]

MESSAGE = {
    "id": "msg_2",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "Hello from Claude"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 5},
}


@pytest.fixture
def a_claude_relay(a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream) -> Relay:
    relay = a_relay_with(
        profiles=[
            Profile(
                name="claude",
                base_url=f"{an_upstream.url}/v1",
                api_key_env=KEY_ENV,
                protocol="anthropic",
                models=[MODEL],
            )
        ]
    )
    relay.upstream.script = Script(chunks=list(TEXT_STREAM), body=json.dumps(MESSAGE).encode())
    return relay


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


def test_a_conversation_with_tools_is_translated_into_a_messages_request(
    a_claude_relay: Relay,
) -> None:
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are Reckon."},
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What are 1+1 and 2+2?"},
        {
            "role": "assistant",
            "content": "Computing both.",
            "tool_calls": [
                {
                    "id": "toolu_a",
                    "type": "function",
                    "function": {"name": "run_python", "arguments": '{"code": "1+1"}'},
                },
                {
                    "id": "toolu_b",
                    "type": "function",
                    "function": {"name": "run_python", "arguments": '{"code": "2+2"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_a", "content": "2"},
        {"role": "tool", "tool_call_id": "toolu_b", "content": "4"},
        {"role": "user", "content": "Now say them."},
    ]
    an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL,
        messages=messages,
        tools=[RUN_PYTHON],
        tool_choice="auto",
        temperature=0,
        stop=["END"],
    )

    assert a_claude_relay.upstream.seen[-1].json == {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "You are Reckon.\n\nAnswer briefly.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What are 1+1 and 2+2?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Computing both."},
                    {
                        "type": "tool_use",
                        "id": "toolu_a",
                        "name": "run_python",
                        "input": {"code": "1+1"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_b",
                        "name": "run_python",
                        "input": {"code": "2+2"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "2"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "4"},
                    {"type": "text", "text": "Now say them."},
                ],
            },
        ],
        "temperature": 0.0,
        "stop_sequences": ["END"],
        "tools": [
            {
                "name": "run_python",
                "description": "Run Python code in the kernel.",
                "input_schema": RUN_PYTHON["function"]["parameters"],
            }
        ],
        "tool_choice": {"type": "auto"},
    }


def test_a_given_max_tokens_and_a_named_tool_choice_are_passed_on(a_claude_relay: Relay) -> None:
    an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL,
        messages=HELLO,
        max_tokens=99,
        tools=[RUN_PYTHON],
        tool_choice={"type": "function", "function": {"name": "run_python"}},
    )

    seen = a_claude_relay.upstream.seen[-1].json
    assert seen["max_tokens"] == 99
    assert seen["tool_choice"] == {"type": "tool", "name": "run_python"}


def test_the_upstream_gets_the_anthropic_headers_and_none_of_the_browsers(
    a_claude_relay: Relay,
) -> None:
    an_sdk_client(a_claude_relay).chat.completions.create(model=MODEL, messages=HELLO)

    headers = a_claude_relay.upstream.seen[-1].headers
    assert headers["x-api-key"] == THE_KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert "cookie" not in headers
    assert "the-browser-side-key" not in json.dumps(headers)


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
    with pytest.raises(openai.APIError, match="connection to the model server 'claude'"):
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


def test_models_are_asked_from_the_anthropic_upstream_when_not_configured(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(
        profiles=[
            Profile(
                name="claude",
                base_url=f"{an_upstream.url}/v1",
                api_key_env=KEY_ENV,
                protocol="anthropic",
            )
        ]
    )
    ids = [m.id for m in an_sdk_client(relay).models.list()]

    assert ids == ["listed-a", "listed-b"]
    seen = relay.upstream.seen[-1]
    assert seen.path == "/v1/models"
    assert seen.headers["x-api-key"] == THE_KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers


def test_a_config_file_may_name_the_anthropic_protocol(tmp_path: Path) -> None:
    path = tmp_path / "reckon.toml"
    path.write_text(
        "[[profile]]\nname = 'claude'\nbase_url = 'https://api.anthropic.com/v1'\n"
        "api_key_env = 'ANTHROPIC_API_KEY'\nprotocol = 'anthropic'\n"
        "models = ['claude-sonnet-4-5']\n"
    )

    [profile] = load_config_file(path)["profiles"]

    assert profile.protocol == "anthropic"
    assert profile.api_key_env == "ANTHROPIC_API_KEY"


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
