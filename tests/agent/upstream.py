"""A fake OpenAI-compatible upstream: a Starlette app under uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from reckon import ModelError

Handler = Callable[[dict[str, Any]], Response]


class Upstream:
    """Answers each POST with the next scripted handler and records the payloads."""

    def __init__(self) -> None:
        self.handlers: list[Handler] = []
        self.payloads: list[dict[str, Any]] = []
        self.url = ""

    async def _chat(self, request: Request) -> Response:
        payload = await request.json()
        self.payloads.append(payload)
        if not self.handlers:
            return JSONResponse({"error": {"message": "no script left"}}, status_code=500)
        return self.handlers.pop(0)(payload)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve() -> Iterator[Upstream]:
    upstream = Upstream()
    port = _free_port()
    config = uvicorn.Config(upstream.app(), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake upstream did not start")
        time.sleep(0.02)
    upstream.url = f"http://127.0.0.1:{port}"
    try:
        yield upstream
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class HttpxTransport:
    """The tests' ``Transport``: what the page does with fetch, done with httpx."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    async def stream(self, path: str, payload: dict[str, Any]) -> AsyncIterator[bytes]:
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream("POST", self.base_url + path, json=payload) as response,
        ):
            if response.status_code >= 400:
                _raise(response.status_code, await response.aread())
            async for chunk in response.aiter_raw():
                yield chunk

    async def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(self.base_url + path, json=payload)
        if response.status_code >= 400:
            _raise(response.status_code, response.content)
        body: dict[str, Any] = response.json()
        return body


def _raise(status: int, body: bytes) -> None:
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    raise ModelError(message, status=status)


def sse(pieces: list[bytes], *, delay: float = 0.0) -> Handler:
    """A handler streaming ``pieces`` as separate writes (so chunks split oddly)."""

    async def body() -> AsyncIterator[bytes]:
        import asyncio

        for piece in pieces:
            yield piece
            if delay:
                await asyncio.sleep(delay)

    def handler(payload: dict[str, Any]) -> Response:
        return StreamingResponse(body(), media_type="text/event-stream")

    return handler


def split_every(raw: bytes, size: int) -> list[bytes]:
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return f"data: {json.dumps(body)}\n\n".encode()


def text_stream(text: str) -> bytes:
    words = [w + " " for w in text.split(" ")]
    words[-1] = words[-1][:-1]
    return b"".join(chunk({"content": w}) for w in words) + chunk({}, "stop") + b"data: [DONE]\n\n"


def tool_stream(code: str, *, call_id: str = "call_1") -> bytes:
    arguments = json.dumps({"code": code})
    half = len(arguments) // 2
    return (
        chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                               "function": {"name": "run_python", "arguments": arguments[:half]}}]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]},
                "tool_calls")
        + b"data: [DONE]\n\n"
    )  # fmt: skip


def json_reply(status: int, body: dict[str, Any]) -> Handler:
    def handler(payload: dict[str, Any]) -> Response:
        return JSONResponse(body, status_code=status)

    return handler
