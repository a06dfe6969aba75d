"""A numbered-chunk streaming model server and a load client (no pytest here).

Shared by ``tests/server/test_load.py`` and ``benchmarks/relay_load.py``. The
client asks for a stream through fields the relay forwards unchanged
(``x_chunks``, ``x_interval``, ``x_stream``); the server, the tests' `FakeUpstream`
answering with `numbered_chunks`, streams ``x_chunks`` chat.completion.chunk events
whose content is the chunk's number, then ``data: [DONE]``. The client checks every
number arrives once, in order.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from support import FakeUpstream, Script, Seen

__all__ = [
    "MODEL",
    "LoadReport",
    "StreamResult",
    "an_async_client",
    "load_upstream",
    "numbered_chunks",
    "one_stream",
    "run_load",
]

MODEL = "load-model"
_DONE = b"data: [DONE]\n\n"


def _chunk(stream: str, index: int) -> bytes:
    event = {
        "id": stream,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": {"content": f"{index};"}, "finish_reason": None}],
    }
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def numbered_chunks(seen: Seen) -> Script:
    """The fake upstream's answer to a load client: ``x_chunks`` chunks numbered from 0,
    ``x_interval`` s apart, then ``data: [DONE]``."""
    payload: dict[str, Any] = seen.json
    count = int(payload.get("x_chunks", 10))
    stream = str(payload.get("x_stream", "s"))
    return Script(
        chunks=[*(_chunk(stream, index) for index in range(count)), _DONE],
        delay_between=float(payload.get("x_interval", 0.0)),
        stream=True,
        headers={"cache-control": "no-cache"},
    )


def load_upstream() -> FakeUpstream:
    """The tests' fake upstream as the load model server: it streams `numbered_chunks`
    and lists `MODEL`."""
    upstream = FakeUpstream(numbered_chunks)
    upstream.models = [MODEL]
    return upstream


@dataclass
class StreamResult:
    expected: int
    received: int = 0
    error: str | None = None
    first_byte: float | None = None  # seconds from sending the request
    total: float = 0.0

    @property
    def lost(self) -> int:
        return self.expected - self.received


def an_async_client(connections: int, timeout: float = 60.0) -> httpx.AsyncClient:
    # Idle connections are dropped well before uvicorn's 5 s keep-alive ends,
    # so a request never races the server closing the connection it reuses.
    limits = httpx.Limits(
        max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0
    )
    return httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=False)


async def one_stream(
    client: httpx.AsyncClient, base_url: str, *, chunks: int, interval: float, name: str
) -> StreamResult:
    """One streamed chat call, every chunk's number checked; never raises."""
    result = StreamResult(expected=chunks)
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "count"}],
        "stream": True,
        "x_chunks": chunks,
        "x_interval": interval,
        "x_stream": name,
    }
    started = time.perf_counter()
    done = False
    try:
        async with client.stream("POST", f"{base_url}/chat/completions", json=body) as response:
            if response.status_code != 200:
                await response.aread()
                result.error = f"HTTP {response.status_code}: {response.text[:200]}"
                return result
            pending = b""
            async for data in response.aiter_raw():
                if result.first_byte is None:
                    result.first_byte = time.perf_counter() - started
                pending += data
                *events, pending = pending.split(b"\n\n")
                for event in events:
                    if not event.startswith(b"data: "):
                        continue
                    if event == b"data: [DONE]":
                        done = True
                        continue
                    item = json.loads(event[len(b"data: ") :])
                    if "error" in item:
                        result.error = f"error event: {item['error']}"
                        return result
                    number = int(item["choices"][0]["delta"]["content"].rstrip(";"))
                    if number != result.received or item["id"] != name:
                        result.error = (
                            f"chunk {number} of {item['id']} arrived as {result.received}"
                        )
                        return result
                    result.received += 1
        if not done:
            result.error = "the stream ended without [DONE]"
    except (httpx.HTTPError, ValueError, KeyError, IndexError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        result.total = time.perf_counter() - started
    return result


@dataclass
class LoadReport:
    streams: int = 0
    chunks: int = 0
    lost: int = 0
    errors: int = 0
    seconds: float = 0.0
    samples: list[str] = field(default_factory=list)


async def run_load(
    base_url: str, *, concurrency: int, seconds: float, chunks: int, interval: float
) -> LoadReport:
    """`concurrency` clients each streaming back to back until `seconds` have passed.

    Streams under way at the deadline are finished, never cut, so none is lost
    by the measurement itself.
    """
    report = LoadReport()
    deadline = time.monotonic() + seconds
    started = time.monotonic()

    async def worker(number: int, client: httpx.AsyncClient) -> None:
        count = 0
        while time.monotonic() < deadline:
            result = await one_stream(
                client, base_url, chunks=chunks, interval=interval, name=f"w{number}-{count}"
            )
            count += 1
            report.streams += 1
            report.chunks += result.received
            report.lost += result.lost
            if result.error is not None:
                report.errors += 1
                if len(report.samples) < 5:
                    report.samples.append(result.error)

    async with an_async_client(concurrency + 8) as client:
        await asyncio.gather(*(worker(n, client) for n in range(concurrency)))
    report.seconds = time.monotonic() - started
    return report
