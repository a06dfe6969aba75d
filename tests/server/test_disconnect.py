"""A browser that goes away must stop the upstream generation at once."""

from __future__ import annotations

import socket

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


def test_leaving_mid_stream_closes_the_upstream_request(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(stall_after=2)
    payload = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with (
        a_relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json=payload) as response,
    ):
        received = b""
        for chunk in response.iter_raw():
            received += chunk
            if len(received) >= len(b"".join(STREAM_CHUNKS[:2])):
                break
        assert not a_relay.upstream.client_left.is_set()

    assert a_relay.upstream.client_left.wait(5)


def test_leaving_before_the_first_byte_closes_the_upstream_request(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(stall_before_first=True)
    with socket.create_connection(("127.0.0.1", a_relay.port)) as browser:
        browser.sendall(a_raw_chat_request(a_relay, stream=True))
        assert a_relay.upstream.got_request.wait(5)
        assert not a_relay.upstream.client_left.is_set()

    assert a_relay.upstream.client_left.wait(5)


def test_leaving_a_non_streaming_call_closes_the_upstream_request(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(stall_before_first=True)
    with socket.create_connection(("127.0.0.1", a_relay.port)) as browser:
        browser.sendall(a_raw_chat_request(a_relay, stream=False))
        assert a_relay.upstream.got_request.wait(5)

    assert a_relay.upstream.client_left.wait(5)


def test_the_relay_keeps_serving_after_clients_left(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(stall_before_first=True)
    with socket.create_connection(("127.0.0.1", a_relay.port)) as browser:
        browser.sendall(a_raw_chat_request(a_relay, stream=True))
        assert a_relay.upstream.got_request.wait(5)
    assert a_relay.upstream.client_left.wait(5)
    a_relay.upstream.script = Script()

    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
        )

    assert response.status_code == 200
