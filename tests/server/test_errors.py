"""Every error the relay makes is in the OpenAI shape and says what to do."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import httpx
import pytest

from support import MODEL, Relay, Script

HELLO = [{"role": "user", "content": "hi"}]


def error_of(response: httpx.Response) -> dict[str, str]:
    body = response.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["type"], str)
    assert isinstance(body["error"]["message"], str)
    return dict(body["error"])


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"model": "tiny-model"}', "'messages' must be a non-empty list"),
        (b'{"model": "tiny-model", "messages": []}', "'messages' must be a non-empty list"),
        (b'{"model": "tiny-model", "messages": "hi"}', "'messages' must be a non-empty list"),
        (b'{"model": "tiny-model", "messages": ["hi"]}', "must be an object"),
        (b'{"model": 7, "messages": [{"role": "user"}]}', "'model' must be a string"),
        (b'{"messages": [{"role": "user"}], "stream": "yes"}', "'stream' must be true or false"),
    ],
)
def test_a_malformed_request_is_a_400(a_relay: Relay, body: bytes, complaint: str) -> None:
    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions", content=body, headers={"Content-Type": "application/json"}
        )

    assert response.status_code == 400
    error = error_of(response)
    assert error["type"] == "invalid_request_error"
    assert complaint in error["message"]
    assert a_relay.upstream.seen == []


def test_an_unknown_model_is_a_404_that_lists_the_offered_ones(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": "gpt-9", "messages": HELLO})

    assert response.status_code == 404
    error = error_of(response)
    assert error["type"] == "model_not_found"
    assert "Unknown model 'gpt-9'" in error["message"]
    assert MODEL in error["message"]


def test_an_unknown_model_under_a_known_profile_is_a_404(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions", json={"model": "local/other", "messages": HELLO}
        )

    assert response.status_code == 404


def test_an_unknown_api_path_is_a_404_in_our_shape(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.get("/v1/embeddings")

    assert response.status_code == 404
    assert "POST /v1/chat/completions" in error_of(response)["message"]


def test_a_wrong_method_is_a_405_in_our_shape(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.get("/v1/chat/completions")

    assert response.status_code == 405
    assert "GET is not allowed" in error_of(response)["message"]


def test_a_body_over_the_limit_is_a_413(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(max_body_bytes=1000)
    with relay.client() as client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": "x" * 2000}]},
        )

    assert response.status_code == 413
    assert "limit of 1000 bytes" in error_of(response)["message"]
    assert relay.upstream.seen == []


def test_a_chunked_body_without_content_length_is_counted_as_it_arrives(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(max_body_bytes=1000)

    def pieces() -> Iterator[bytes]:
        yield b'{"model": "tiny-model", "messages": [{"role": "user", "content": "'
        for _ in range(20):
            yield b"x" * 100
        yield b'"}]}'

    with relay.client() as client:
        response = client.post("/v1/chat/completions", content=pieces())

    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert response.status_code == 413


def test_too_many_streams_at_once_is_a_429_with_retry_after(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(max_concurrent_streams=1)
    relay.upstream.script = Script(stall_after=1)
    payload = {"model": MODEL, "messages": HELLO, "stream": True}
    with (
        relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json=payload) as first,
    ):
        chunks = first.iter_raw()  # kept: a dropped iterator closes the response
        next(chunks)  # the first stream is now open and holding its slot
        second = client.post("/v1/chat/completions", json=payload)

    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"
    assert "max_concurrent_streams" in error_of(second)["message"]
    assert relay.upstream.client_left.wait(5)


def test_the_stream_slot_is_free_again_after_a_stream_ends(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(max_concurrent_streams=1)
    payload = {"model": MODEL, "messages": HELLO, "stream": True}
    with relay.client() as client:
        statuses = [client.post("/v1/chat/completions", json=payload).status_code for _ in "abc"]

    assert statuses == [200, 200, 200]


def test_a_client_that_leaves_early_frees_its_slot(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(max_concurrent_streams=1)
    relay.upstream.script = Script(stall_before_first=True)
    with socket.create_connection(("127.0.0.1", relay.port)) as raw:
        body = b'{"model": "tiny-model", "messages": [{"role": "user", "content": "hi"}]}'
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (relay.port, len(body), body)
        )
        assert relay.upstream.got_request.wait(5)
    assert relay.upstream.client_left.wait(5)
    relay.upstream.script = Script()

    with relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.status_code == 200


def test_errors_are_never_cached(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", content=b"{")

    assert response.headers["cache-control"] == "no-store"
