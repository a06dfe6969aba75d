"""A request with two body framings is refused and its connection closed (issue 32, R1).

h11 reads a request with both Content-Length and Transfer-Encoding as chunked and
keeps the connection: a proxy in front that framed it by Content-Length would see the
rest of the chunked body as a second request of the same connection (request
smuggling). RFC 9112 §6.3: the server MUST close the connection after such a request.
Raw sockets against the relay under uvicorn, as ``reckon serve`` runs it.
"""

from __future__ import annotations

import socket

import pytest

from support import MODEL, Relay

BODY = b'{"model": "%s", "messages": [{"role": "user", "content": "hi"}]}' % MODEL.encode()
CHUNKED = b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)
# What a proxy that trusted Content-Length would have taken for the next request.
SMUGGLED = b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def exchange(relay: Relay, data: bytes) -> bytes:
    """Send ``data`` on a new connection; everything the relay answers until it closes."""
    with socket.create_connection(("127.0.0.1", relay.port), timeout=5) as sock:
        sock.sendall(data)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            pytest.fail(f"the relay kept the connection open: {answer[:300]!r}")
    return answer


def post(relay: Relay, framing: bytes) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % relay.port
        + b"Content-Type: application/json\r\n"
        + framing
        + b"\r\n"
    )


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        b"transfer-encoding: CHUNKED\r\ncontent-length: 0\r\n",
        b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(CHUNKED),
    ],
    ids=["cl-then-te", "te-then-cl", "lower-case-and-zero", "cl-of-the-chunked-body"],
)
def test_both_content_length_and_transfer_encoding_is_a_400_and_the_end(
    a_relay: Relay, framing: bytes
) -> None:
    answer = exchange(a_relay, post(a_relay, framing) + CHUNKED + SMUGGLED)

    assert answer.startswith(b"HTTP/1.1 400 ")
    assert answer.count(b"HTTP/1.1 ") == 1  # nothing answered the smuggled request
    assert b"connection: close" in answer.lower()
    assert b"both Content-Length and Transfer-Encoding" in answer
    assert b"Send one of them." in answer
    assert a_relay.upstream.seen == []


def test_a_site_file_asked_for_with_both_framings_is_refused_too(a_relay: Relay) -> None:
    head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % a_relay.port
    answer = exchange(a_relay, head + b"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1 ") == 1


def test_one_framing_either_way_is_served_on_a_kept_connection(a_relay: Relay) -> None:
    chunked = post(a_relay, b"Transfer-Encoding: chunked\r\n") + CHUNKED
    plain = post(a_relay, b"Content-Length: %d\r\n" % len(BODY)) + BODY
    closing = b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n"

    answer = exchange(a_relay, chunked + plain + closing % a_relay.port)

    assert answer.count(b"HTTP/1.1 200 ") == 3
    assert len(a_relay.upstream.seen) == 2


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nContent-Length: %d\r\n" % len(BODY),
        b"Content-Length: 5, %d\r\n" % len(BODY),
        b"Transfer-Encoding: gzip, chunked\r\n",
        b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
        b"Transfer-Encoding : chunked\r\nContent-Length: %d\r\n" % len(BODY),
        b"Content-Length: +%d\r\n" % len(BODY),
        b"Transfer-Encoding: chunked\r\n Content-Length: 5\r\n",
    ],
    ids=["two-lengths", "a-length-list", "gzip-then-chunked", "two-encodings",
         "a-space-before-the-colon", "a-signed-length", "a-folded-line"],
)  # fmt: skip
def test_any_other_ambiguous_framing_is_refused_and_the_connection_closed(
    a_relay: Relay, framing: bytes
) -> None:
    """Variants a proxy and the relay could read two ways: each is a 4xx or 5xx that is
    the only answer on its connection, and nothing reaches the model."""
    answer = exchange(a_relay, post(a_relay, framing) + CHUNKED + SMUGGLED)
    assert answer[:10] in (b"HTTP/1.1 4", b"HTTP/1.1 5") or not answer, answer[:200]
    assert answer.count(b"HTTP/1.1 ") <= 1, answer
    assert a_relay.upstream.seen == []
