"""The one fake OpenAI-compatible upstream of the tests: a real HTTP server on
127.0.0.1 that plays scripted replies, records every request and notices when its
client leaves.

What it answers to a chat call, first that applies:
1. the next of ``handlers`` (a queue; each is called with the request's JSON and
   gives a `Script` or a Starlette response),
2. ``respond`` (a stateful model: called with the `Seen` request, may be async),
3. ``script``, which answers every call alike (by default a short stream of text and
   a tool call, or `COMPLETION` when the call does not ask for a stream).
``GET .../models`` lists ``models``.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ._threads import Running

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


@dataclass
class Script:
    """What the fake upstream does with a chat call."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=lambda: list(STREAM_CHUNKS))
    body: bytes | None = None  # the non-streaming answer; default COMPLETION
    headers: dict[str, str] = field(default_factory=dict)
    stream: bool | None = None  # None: stream when the call asks to (`"stream": true`)
    delay_before_first: float = 0.0
    delay_between: float = 0.0  # between chunks, so a client reads them one by one
    stall_before_first: bool = False  # send nothing until the client leaves
    stall_after: int | None = None  # send this many chunks, then wait for the client to leave
    break_after: int | None = None  # send this many chunks, then drop the connection


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


Reply = Script | Response
Handler = Callable[[dict[str, Any]], Reply]
Responder = Callable[[Seen], Reply | Awaitable[Reply]]


class FakeUpstream:
    """An OpenAI-compatible server that records what it got and whether its client left."""

    def __init__(self, respond: Responder | None = None) -> None:
        self.url = ""
        self.respond = respond
        self.reset()

    def reset(self, *, script: Script | None = None) -> None:
        """A fresh script and record (``respond`` stays)."""
        self.script = script or Script()
        self.handlers: list[Handler] = []
        self.models = ["listed-a", "listed-b"]
        self.seen: list[Seen] = []
        self.got_request = threading.Event()
        self.client_left = threading.Event()

    @property
    def payloads(self) -> list[Any]:
        """The JSON bodies of the chat calls, in order."""
        return [s.json for s in self.seen if s.path.endswith("/chat/completions")]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        seen = Seen(scope["method"], scope["path"], headers, json.loads(body) if body else None)
        self.seen.append(seen)
        self.got_request.set()
        # Captured now: a late disconnect must not reach a later test's event.
        client_left = self.client_left
        if scope["path"].endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]
            await _send_json(send, 200, {"object": "list", "data": data})
            return
        reply = await self._reply(seen)
        if isinstance(reply, Response):
            await reply(scope, receive, send)
            return
        finished = False

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                message = await receive()
                if message["type"] == "http.disconnect" and not finished:
                    client_left.set()
                    group.cancel_scope.cancel()

            group.start_soon(watch)
            asked = isinstance(seen.json, dict) and bool(seen.json.get("stream"))
            await _answer(send, reply, stream=asked if reply.stream is None else reply.stream)
            finished = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            group.cancel_scope.cancel()

    async def _reply(self, seen: Seen) -> Reply:
        if self.handlers:
            return self.handlers.pop(0)(seen.json)
        if self.respond is None:
            return self.script
        reply = self.respond(seen)
        return await reply if inspect.isawaitable(reply) else reply


async def _answer(send: Send, script: Script, *, stream: bool) -> None:
    if script.stall_before_first:
        await anyio.sleep_forever()
    await anyio.sleep(script.delay_before_first)
    if script.status != 200 or not stream:
        body = script.body if script.body is not None else json.dumps(COMPLETION).encode()
        await _start(send, script.status, b"application/json", script.headers)
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
        if index and script.delay_between:
            await anyio.sleep(script.delay_between)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})


async def _start(send: Send, status: int, kind: bytes, extra: dict[str, str]) -> None:
    headers = [(b"content-type", kind)] + [(k.encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _send_json(send: Send, status: int, data: Any) -> None:
    await _start(send, status, b"application/json", {})
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})


@contextmanager
def a_fake_upstream(
    respond: Responder | None = None, *, models: list[str] | None = None
) -> Iterator[FakeUpstream]:
    """A `FakeUpstream` on a free loopback port for the block; ``url`` is its root
    (the OpenAI base URL is ``url + "/v1"``)."""
    upstream = FakeUpstream(respond)
    if models is not None:
        upstream.models = models
    with Running(upstream, lifespan="off") as running:
        upstream.url = running.url
        yield upstream


@contextmanager
def a_model_server(respond: Responder, *, models: list[str] | None = None) -> Iterator[str]:
    """A fake upstream answering with ``respond`` for the block; yields its OpenAI base
    URL (``.../v1``), as `reckon serve --upstream` and `reckon eval` take it."""
    with a_fake_upstream(respond, models=models or []) as upstream:
        yield f"{upstream.url}/v1"
