"""Real servers on loopback: the relay under uvicorn, and a scriptable fake model server.

Both run in background threads with their own event loops, on sockets bound
before the thread starts (no port races), and tests wait for ``started``
rather than sleeping.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from reckon.server import Profile, RelayConfig, create_app
from reckon.server._serve import uvicorn_config

from .redis_kit import RedisServer, a_redis_server, ping

THE_KEY = "sk-test-0123456789abcdef-SECRET"
KEY_ENV = "RECKON_TEST_UPSTREAM_KEY"
MODEL = "tiny-model"

STREAM_CHUNKS = [
    b": keep-alive\n\n",
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny-model",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n',
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny-model",'
    b'"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}\n\n',
    b": keep-alive\n\n",
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny-model",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",'
    b'"function":{"name":"run_python","arguments":"{\\"code\\": "}}]},"finish_reason":null}]}\n\n',
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny-model",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":'
    b'"\\"1+1\\"}"}}]},"finish_reason":"tool_calls"}]}\n\n',
    b"data: [DONE]\n\n",
]

COMPLETION = {
    "id": "c2",
    "object": "chat.completion",
    "created": 1,
    "model": MODEL,
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello from the fake upstream"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
}


class Running:
    """An ASGI app served by uvicorn in a thread on 127.0.0.1 (or on `host`)."""

    def __init__(
        self,
        app: Any,
        *,
        lifespan: Literal["on", "off"] = "on",
        host: str = "127.0.0.1",
        relay: RelayConfig | None = None,
    ) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        if relay is not None:  # the relay as reckon serve runs it
            config = uvicorn_config(app, relay, lifespan=lifespan, timeout_graceful_shutdown=1)
        else:
            config = uvicorn.Config(
                app,
                log_config=None,
                access_log=False,
                lifespan=lifespan,
                timeout_graceful_shutdown=1,
            )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive(), "server thread died during startup"
            assert time.monotonic() < deadline, "server did not start within 10 s"
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@dataclass
class Script:
    """What the fake model server does with the next chat call."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=lambda: list(STREAM_CHUNKS))
    body: bytes | None = None  # the non-streaming answer; default COMPLETION
    headers: dict[str, str] = field(default_factory=dict)
    delay_before_first: float = 0.0
    stall_before_first: bool = False  # send nothing until the client leaves
    stall_after: int | None = None  # send this many chunks, then wait for the client to leave
    break_after: int | None = None  # send this many chunks, then drop the connection


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


class FakeUpstream:
    """An OpenAI-compatible server that records what it got and whether its client left."""

    def __init__(self) -> None:
        self.url = ""
        self.reset()

    def reset(self) -> None:
        self.script = Script()
        self.models = ["listed-a", "listed-b"]
        self.seen: list[Seen] = []
        self.got_request = threading.Event()
        self.client_left = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append(
            Seen(scope["method"], scope["path"], headers, json.loads(body) if body else None)
        )
        self.got_request.set()
        # Captured now: a late disconnect must not reach a later test's event.
        client_left = self.client_left
        if scope["path"].endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]
            await _send_json(send, 200, {"object": "list", "data": data})
            return
        finished = False

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                message = await receive()
                if message["type"] == "http.disconnect" and not finished:
                    client_left.set()
                    group.cancel_scope.cancel()

            group.start_soon(watch)
            await self._answer(send, stream=bool(self.seen[-1].json.get("stream")))
            finished = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            group.cancel_scope.cancel()

    async def _answer(self, send: Send, *, stream: bool) -> None:
        script = self.script
        if script.stall_before_first:
            await anyio.sleep_forever()
        await anyio.sleep(script.delay_before_first)
        if script.status != 200 or not stream:
            body = script.body if script.body is not None else json.dumps(COMPLETION).encode()
            kind = b"application/json"
            await _start(send, script.status, kind, script.headers)
            if script.break_after is not None:
                await send({"type": "http.response.body", "body": body[:10], "more_body": True})
                raise ConnectionAbortedError("the fake upstream drops the connection on purpose")
            await send({"type": "http.response.body", "body": body, "more_body": True})
            return
        await _start(send, 200, b"text/event-stream", script.headers)
        for index, chunk in enumerate(script.chunks):
            if index == script.stall_after:
                await anyio.sleep_forever()
            if index == script.break_after:
                raise ConnectionAbortedError("the fake upstream drops the connection on purpose")
            await send({"type": "http.response.body", "body": chunk, "more_body": True})


async def _start(send: Send, status: int, kind: bytes, extra: dict[str, str]) -> None:
    headers = [(b"content-type", kind)] + [(k.encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _send_json(send: Send, status: int, data: Any) -> None:
    await _start(send, status, b"application/json", {})
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})


@dataclass
class Relay:
    url: str
    port: int
    config: RelayConfig
    upstream: FakeUpstream

    def client(self, **options: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, trust_env=False, timeout=10, **options)


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("RECKON_TOKEN", "RECKON_CLIENT_SECRET", "RECKON_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, THE_KEY)


@pytest.fixture(scope="session")
def a_running_upstream() -> Iterator[FakeUpstream]:
    upstream = FakeUpstream()
    with Running(upstream, lifespan="off") as running:
        upstream.url = running.url
        yield upstream


@pytest.fixture
def an_upstream(a_running_upstream: FakeUpstream) -> FakeUpstream:
    """The fake model server, with a fresh script and record for this test."""
    a_running_upstream.reset()
    return a_running_upstream


@pytest.fixture
def a_relay_with(an_upstream: FakeUpstream) -> Iterator[Callable[..., Relay]]:
    """Starts a relay in front of `an_upstream`; keyword arguments override RelayConfig."""
    running: list[Running] = []

    def start(**overrides: Any) -> Relay:
        settings: dict[str, Any] = {
            "profiles": [
                Profile(
                    name="local",
                    base_url=f"{an_upstream.url}/v1",
                    api_key_env=KEY_ENV,
                    models=[MODEL],
                    default_model=MODEL,
                )
            ],
            "port": 0,
        }
        settings.update(overrides)
        config = RelayConfig(**settings)
        server = Running(create_app(config), relay=config).__enter__()
        running.append(server)
        return Relay(server.url, server.port, config, an_upstream)

    yield start
    for server in running:
        server.__exit__()


@pytest.fixture
def a_relay(a_relay_with: Callable[..., Relay]) -> Relay:
    return a_relay_with()


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


HELLO_BODY = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}


def burst(
    urls: Sequence[str],
    count: int,
    *,
    headers: dict[str, str] | None = None,
    body: dict[str, Any] | None = None,
) -> list[httpx.Response]:
    """`count` chat calls sent at once, spread over `urls` in turn; the answers in order."""

    async def run() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
        async with httpx.AsyncClient(limits=limits, timeout=30, trust_env=False) as client:
            start = asyncio.Event()

            async def one(number: int) -> httpx.Response:
                await start.wait()
                url = f"{urls[number % len(urls)]}/v1/chat/completions"
                return await client.post(url, json=body or HELLO_BODY, headers=headers)

            tasks = [asyncio.ensure_future(one(n)) for n in range(count)]
            await asyncio.sleep(0)  # every task is waiting on the start line
            start.set()
            return list(await asyncio.gather(*tasks))

    return asyncio.run(run())
