"""Each model call has a ceiling of time and bytes (issue 32, R1): a model server that
streams without end was relayed for ever, holding a place of the concurrency limits.

The fake model server here answers with a body that never ends (a token every few
milliseconds, or as fast as it can); the relay, under uvicorn on loopback, must cut it
at ``call_timeout`` or ``max_answer_bytes``, tell the client why in the error shape it
already knows, close the upstream request and give the call's place back.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import openai
import pytest
from starlette.responses import StreamingResponse

from reckon import ConfigError
from reckon.server._config import RelayConfig
from support import MODEL, FakeUpstream, Relay, Script, an_sdk_client

from .anthropic_kit import claude_profile, message_start, sse

TOKEN = b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"la "}}]}\n\n'  # noqa: E501
HELLO = {"model": MODEL, "messages": [{"role": "user", "content": "sing"}]}


def endless(
    piece: bytes, *, every: float, media: str, left: threading.Event, first: bytes = b""
) -> Any:
    """A handler of the fake upstream whose answer is ``first``, then ``piece`` for ever."""

    async def body() -> AsyncIterator[bytes]:
        try:
            if first:
                yield first
            while True:
                yield piece
                await anyio.sleep(every)
        finally:  # the relay closed its request
            left.set()

    return lambda payload: StreamingResponse(body(), media_type=media)


def stream_events(relay: Relay) -> tuple[list[Any], float]:
    """A streamed call's ``data:`` events (JSON) and how long it took."""
    started = time.monotonic()
    events = []
    with (
        relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json={**HELLO, "stream": True}) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            if time.monotonic() - started > 15:
                pytest.fail(f"the relay was still relaying after 15 s ({len(events)} events)")
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
    return events, time.monotonic() - started


def test_a_stream_that_never_ends_is_cut_at_call_timeout(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(call_timeout=1.5, max_concurrent_streams=1)
    left = threading.Event()
    an_upstream.handlers.append(endless(TOKEN, every=0.01, media="text/event-stream", left=left))

    events, took = stream_events(relay)

    assert 1.5 <= took < 6
    assert len(events) > 10 and events[0]["choices"][0]["delta"]["content"] == "la "
    error = events[-1]["error"]
    assert error["type"] == "upstream_timeout" and error["code"] == "call_timeout"
    assert "still answering after 1.5 s" in error["message"]
    assert "raise call_timeout" in error["message"]
    assert left.wait(5)  # the upstream request was closed
    with relay.client() as client:  # and the one place there is was given back
        assert client.post("/v1/chat/completions", json=HELLO).status_code == 200


def test_a_stream_over_max_answer_bytes_is_cut_there(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(max_answer_bytes=200_000)
    left = threading.Event()
    an_upstream.handlers.append(endless(TOKEN * 50, every=0, media="text/event-stream", left=left))

    events, took = stream_events(relay)

    error = events[-1]["error"]
    assert error["type"] == "upstream_error" and error["code"] == "max_answer_bytes"
    assert "more than 200000 bytes for one answer" in error["message"]
    assert len(events) * len(TOKEN) <= 200_000 + len(TOKEN) * 50
    assert took < 10 and left.wait(5)


@pytest.mark.parametrize(
    ("caps", "every", "status", "code"),
    [
        ({"call_timeout": 1.0}, 0.05, 504, "call_timeout"),
        ({"max_answer_bytes": 100_000}, 0, 502, "max_answer_bytes"),
    ],
    ids=["time", "bytes"],
)
def test_a_whole_answer_that_never_ends_is_an_error_not_a_buffer_that_grows(
    a_relay_with: Callable[..., Relay],
    an_upstream: FakeUpstream,
    caps: dict[str, Any],
    every: float,
    status: int,
    code: str,
) -> None:
    relay = a_relay_with(**caps)
    left = threading.Event()
    an_upstream.handlers.append(
        endless(b'{"choices": [' + b" " * 4096, every=every, media="application/json", left=left)
    )
    started = time.monotonic()
    with relay.client() as client:
        response = client.post("/v1/chat/completions", json=HELLO)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert time.monotonic() - started < 8 and left.wait(5)


def test_an_answer_whose_headers_do_not_come_within_call_timeout_is_a_504(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(call_timeout=1.0, first_byte_timeout=60)
    relay.upstream.script = Script(stall_before_first=True)
    with relay.client() as client:
        response = client.post("/v1/chat/completions", json=HELLO)

    assert response.status_code == 504
    assert response.json()["error"]["code"] == "call_timeout"
    assert relay.upstream.client_left.wait(5)


def test_the_openai_sdk_raises_the_relays_message(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(call_timeout=1.0)
    left = threading.Event()
    an_upstream.handlers.append(endless(TOKEN, every=0.02, media="text/event-stream", left=left))

    started = time.monotonic()
    with pytest.raises(openai.APIError, match="call_timeout"):
        for _chunk in an_sdk_client(relay).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "sing"}], stream=True
        ):
            assert time.monotonic() - started < 15, "the relay was still relaying after 15 s"


def test_an_anthropic_stream_that_never_ends_is_cut_too(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(
        profiles=[claude_profile(an_upstream.url, models=(MODEL,))], call_timeout=1.0
    )
    left = threading.Event()
    start = message_start() + sse(
        "content_block_start", index=0, content_block={"type": "text", "text": ""}
    )
    delta = sse("content_block_delta", index=0, delta={"type": "text_delta", "text": "la "})
    # A message that never stops.
    an_upstream.handlers.append(
        endless(delta, every=0.01, media="text/event-stream", left=left, first=start)
    )

    events, took = stream_events(relay)

    assert events[0]["choices"][0]["delta"].get("role") == "assistant"
    assert events[-1]["error"]["code"] == "call_timeout" and took < 6 and left.wait(5)


@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ({"call_timeout": 0}, "call_timeout must be a positive, finite number of seconds"),
        ({"send_timeout": float("inf")}, "send_timeout must be a positive, finite number"),
        ({"max_answer_bytes": 0}, "max_answer_bytes must be at least 1"),
    ],
)
def test_the_caps_are_checked_when_configured(setting: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint):
        RelayConfig(**setting)


def test_an_answer_the_server_closes_midway_says_so_and_what_to_do(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    """A local model server serving one request at a time dropped an answer for another:
    the connection closed mid-body. The person is told that, not a class name."""

    async def body() -> AsyncIterator[bytes]:
        yield TOKEN
        raise RuntimeError("the server went on to another request")

    an_upstream.handlers.append(
        lambda payload: StreamingResponse(body(), media_type="text/event-stream")
    )
    events, _ = stream_events(a_relay_with())
    assert events[0]["choices"][0]["delta"]["content"] == "la "
    error = events[-1]["error"]
    assert "closed the answer before its end" in error["message"]
    assert "ask again" in error["message"]
