"""A browser that goes away must stop the upstream generation at once."""

from __future__ import annotations

import socket

import pytest

from support import MODEL, STREAM_CHUNKS, Relay, Script


def a_raw_chat_request(relay: Relay, *, stream: bool) -> bytes:
    body = b'{"model": "%s", "messages": [{"role": "user", "content": "hi"}], "stream": %s}' % (
        MODEL.encode(),
        b"true" if stream else b"false",
    )
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        % (relay.port, len(body), body)
    )


def test_a_stream_is_passed_on_at_once_and_leaving_it_closes_the_upstream_request(
    a_relay: Relay,
) -> None:
    a_relay.upstream.script = Script(stall_after=2)  # the upstream thinks after two chunks
    payload = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    sent = b"".join(STREAM_CHUNKS[:2])
    with (
        a_relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json=payload) as response,
    ):
        received = b""
        for chunk in response.iter_raw():
            received += chunk
            if len(received) >= len(sent):
                break
        assert received == sent  # not held back while the upstream thinks
        assert not a_relay.upstream.client_left.is_set()

    assert a_relay.upstream.client_left.wait(5)


def leave_before_the_first_byte(relay: Relay, *, stream: bool) -> None:
    """Send a chat request and go away while the upstream has not answered yet."""
    relay.upstream.script = Script(stall_before_first=True)
    with socket.create_connection(("127.0.0.1", relay.port)) as browser:
        browser.sendall(a_raw_chat_request(relay, stream=stream))
        assert relay.upstream.got_request.wait(5)
        assert not relay.upstream.client_left.is_set()


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "non-streaming"])
def test_leaving_before_the_first_byte_closes_the_upstream_request(
    a_relay: Relay, stream: bool
) -> None:
    leave_before_the_first_byte(a_relay, stream=stream)

    assert a_relay.upstream.client_left.wait(5)


def test_the_relay_keeps_serving_after_clients_left(a_relay: Relay) -> None:
    leave_before_the_first_byte(a_relay, stream=True)
    assert a_relay.upstream.client_left.wait(5)
    a_relay.upstream.script = Script()

    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
        )

    assert response.status_code == 200
