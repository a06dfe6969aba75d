"""Clients that hold the relay's connections open by sending slowly (slowloris).

An outside attack held 300 half-open connections for over 70 s and kept a body
trickling at one byte every five seconds open. The relay under uvicorn, as
``reckon serve`` runs it, closes a connection whose headers are late and answers
408 to a body that is late.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable

import pytest

from support import Relay

BODY = b'{"messages": [{"role": "user", "content": "hi"}]}'


def connect(relay: Relay) -> socket.socket:
    return socket.create_connection(("127.0.0.1", relay.port), timeout=10)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the relay sends until it closes; a 10 s socket timeout fails the test."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        pytest.fail(f"the relay held the connection open for 10 s (got {data[:80]!r})")
    return data


def read_response(sock: socket.socket) -> bytes:
    """One HTTP response: its headers and its Content-Length of body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or pytest.fail(f"closed mid-response: {data!r}")
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536) or pytest.fail(f"closed mid-body: {data!r}")
    return head + b"\r\n\r\n" + body


def test_a_request_whose_headers_never_end_is_closed(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(header_timeout=0.5)
    with connect(relay) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert read_until_closed(sock) == b""
        assert time.monotonic() - started < 5


def test_many_half_open_connections_are_all_closed(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(header_timeout=0.5)
    socks = [connect(relay) for _ in range(50)]
    try:
        for sock in socks:
            sock.sendall(b"GET / HTTP/1.1\r\n")
        assert all(read_until_closed(sock) == b"" for sock in socks)
    finally:
        for sock in socks:
            sock.close()


def test_a_trickled_body_gets_a_408(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(body_timeout=1)
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\n"
        b"Host: 127.0.0.1:" + str(relay.port).encode() + b"\r\n"
        b"Content-Type: application/json\r\n"
        b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n"
    )
    with connect(relay) as sock:
        sock.sendall(head)
        started = time.monotonic()
        for byte in BODY[:-1]:  # a byte every 0.2 s until the relay answers
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable:
                break
            sock.sendall(bytes([byte]))
        else:
            pytest.fail("the relay waited for the whole trickled body")
        waited = time.monotonic() - started
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"did not arrive within 1 s" in answer
    assert waited < 5
    assert relay.upstream.seen == []


def test_keep_alive_requests_still_work_after_the_first_answer(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(header_timeout=0.5)
    with relay.client() as client:
        for _ in range(3):
            response = client.post("/v1/chat/completions", content=BODY)
            assert response.status_code == 200
            time.sleep(0.3)  # idle between requests, under the header timeout
