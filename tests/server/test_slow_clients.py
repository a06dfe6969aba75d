"""Clients that hold the relay's connections open by sending slowly (slowloris), or by
never reading what it sends.

An outside attack held 300 half-open connections for over 70 s and kept a body
trickling at one byte every five seconds open; another kept 40 connections that never
read the 117 MB snapshot (issue 32, R1). The relay under uvicorn, as ``reckon serve``
runs it, closes a connection whose headers are late, answers 408 to a body that is
late, and drops a client that takes nothing for ``send_timeout`` seconds.
"""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable
from pathlib import Path

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


def test_a_request_head_trickled_a_byte_at_a_time_is_closed_at_header_timeout(
    a_relay_with: Callable[..., Relay],
) -> None:
    """Slowloris proper: each byte comes well within the limit, the head never ends in
    time. The limit counts from the connection's start, not from the last byte."""
    relay = a_relay_with(header_timeout=0.5)
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    with connect(relay) as sock:
        started = time.monotonic()
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
            except OSError:  # closed under us: what is wanted
                break
            time.sleep(0.05)
            if time.monotonic() - started > 5:
                pytest.fail("the relay took a trickled head for 5 s")
        assert read_until_closed(sock) == b""
        assert time.monotonic() - started < 2


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


BIG = 24 * 1024 * 1024


@pytest.fixture
def a_big_site(tmp_path: Path) -> Path:
    """A site with one file far larger than the socket buffers between two ends."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>Reckon</title>")
    (site / "snapshot.heap").write_bytes(os.urandom(BIG))
    return site


def ask_for_the_big_file(relay: Relay) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    sock.settimeout(10)
    sock.connect(("127.0.0.1", relay.port))
    sock.sendall(b"GET /snapshot.heap HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % relay.port)
    return sock


def read_all_there_is(sock: socket.socket) -> int:
    """Bytes read until the relay closes or resets the connection (a 10 s wait fails)."""
    total = 0
    try:
        while chunk := sock.recv(1 << 20):
            total += len(chunk)
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail(f"the relay held the connection open ({total} bytes read)")
    return total


def test_clients_that_never_read_are_dropped_after_the_send_timeout(
    a_relay_with: Callable[..., Relay], a_big_site: Path
) -> None:
    relay = a_relay_with(site_dir=a_big_site, send_timeout=1)
    socks = [ask_for_the_big_file(relay) for _ in range(40)]
    try:
        time.sleep(1 + 2)  # the send timeout, and room for a busy machine
        started = time.monotonic()
        read = [read_all_there_is(sock) for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    assert max(read) < BIG // 2, read  # what the socket buffers held, then the end
    assert time.monotonic() - started < 5
    with relay.client() as client:  # and the relay goes on serving
        assert client.get("/index.html").status_code == 200


def test_a_client_that_pauses_for_less_than_the_send_timeout_gets_the_whole_file(
    a_relay_with: Callable[..., Relay], a_big_site: Path
) -> None:
    relay = a_relay_with(site_dir=a_big_site, send_timeout=3)
    with ask_for_the_big_file(relay) as sock:
        time.sleep(0.5)  # buffers full, writes paused, but not for long
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        _, _, body = head.partition(b"\r\n\r\n")
        got = len(body)
        while got < BIG:
            got += len(sock.recv(1 << 20) or pytest.fail(f"closed after {got} bytes"))
    assert got == BIG
