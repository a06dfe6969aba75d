"""Fixtures of the relay tests: a fake model server and relays in front of it (one
speaking the Anthropic protocol), a site folder and a redis-server (the pieces are in
tests/support, anthropic_kit.py and redis_kit.py)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support import KEY_ENV, MODEL, THE_KEY, FakeUpstream, Relay, Script, a_fake_upstream, relays

from .anthropic_kit import MESSAGE, TEXT_STREAM, claude_profile
from .redis_kit import RedisServer, a_redis_server, ping


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("RECKON_TOKEN", "RECKON_CLIENT_SECRET", "RECKON_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, THE_KEY)


@pytest.fixture(scope="session")
def a_running_upstream() -> Iterator[FakeUpstream]:
    with a_fake_upstream() as upstream:
        yield upstream


@pytest.fixture
def an_upstream(a_running_upstream: FakeUpstream) -> FakeUpstream:
    """The fake model server, with a fresh script and record for this test."""
    a_running_upstream.reset()
    return a_running_upstream


@pytest.fixture
def a_relay_with(an_upstream: FakeUpstream) -> Iterator[Callable[..., Relay]]:
    """Starts a relay in front of `an_upstream`; keyword arguments override RelayConfig."""
    with relays(an_upstream) as start:
        yield start


@pytest.fixture
def a_relay(a_relay_with: Callable[..., Relay]) -> Relay:
    return a_relay_with()


@pytest.fixture
def a_claude_relay(a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream) -> Relay:
    """A relay whose profile speaks the Messages API to the fake model server, which
    answers with Anthropic's SSE (`TEXT_STREAM`) or JSON (`MESSAGE`)."""
    relay = a_relay_with(profiles=[claude_profile(an_upstream.url, models=(MODEL,))])
    relay.upstream.script = Script(chunks=list(TEXT_STREAM), body=json.dumps(MESSAGE).encode())
    return relay


@pytest.fixture
def a_closed_port() -> Iterator[int]:
    """A loopback port bound for the test and never listened on: connections to it are
    refused, reliably (nothing else can take it meanwhile)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        yield closed.getsockname()[1]


@pytest.fixture
def a_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>Reckon</title>")
    (site / "assets" / "app.js").write_text("export const x = 1;\n")
    (site / "assets" / "worker.mjs").write_text("self.onmessage = () => {};\n")
    (site / "assets" / "pyodide.asm.wasm").write_bytes(b"\0asm\x01\0\0\0")
    (site / "_headers.json").write_text(
        json.dumps(
            [
                {"pattern": "*.html", "headers": {"Content-Security-Policy": "default-src 'self'"}},
                {"pattern": "*", "headers": {"Cross-Origin-Opener-Policy": "same-origin"}},
                {"pattern": "assets/*.wasm", "headers": {"Cache-Control": "max-age=3600"}},
            ]
        )
    )
    return site


@pytest.fixture(scope="session")
def a_running_redis() -> Iterator[RedisServer]:
    with a_redis_server() as server:
        yield server


@pytest.fixture
def a_redis(a_running_redis: RedisServer) -> RedisServer:
    """The test session's redis-server: running (a test may have stopped it) and empty."""
    if a_running_redis.process.poll() is not None or not ping(a_running_redis.port):
        a_running_redis.start()
    with socket.create_connection(("127.0.0.1", a_running_redis.port), timeout=5) as conn:
        conn.sendall(b"FLUSHALL\r\n")
        assert conn.recv(64).startswith(b"+OK")
    return a_running_redis
