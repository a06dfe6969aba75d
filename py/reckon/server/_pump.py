"""Forward a stream of byte chunks, joining those that are already waiting.

A model server writes one small SSE event per token, and relaying each as its
own ASGI message costs a framed write (and a system call) per event. `pump`
reads in one task and sends in another: whatever the reader collected while
the previous send ran goes out as one message. An event that arrives alone is
sent at once, so nothing waits for company; a burst (a fast model, a slow
browser) goes out in fewer, larger writes. The reader stops when `limit`
bytes are waiting, so a browser that reads slowly still slows the upstream
down instead of filling the relay's memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

__all__ = ["pump"]

_LIMIT = 1 << 20


class _Waiting:
    """Chunks read but not yet sent, and what the two tasks tell each other."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.done = False
        self.error: Exception | None = None
        # anyio events cannot be cleared, so each wait gets a fresh one.
        self.filled = anyio.Event()
        self.emptied = anyio.Event()

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts, self.size = [], 0
        self.filled = anyio.Event()
        self.emptied.set()
        return data


async def pump(
    chunks: AsyncIterator[bytes],
    send: Callable[[bytes], Awaitable[None]],
    *,
    limit: int = _LIMIT,
) -> None:
    """Send every chunk of `chunks` through `send`, in order, joined where waiting.

    An exception from `chunks` (the upstream failing mid-answer) is raised
    here once everything read before it has been sent.
    """
    waiting = _Waiting()

    async def read() -> None:
        try:
            async for chunk in chunks:
                waiting.parts.append(chunk)
                waiting.size += len(chunk)
                waiting.filled.set()
                if waiting.size >= limit:
                    waiting.emptied = anyio.Event()
                    await waiting.emptied.wait()
        except Exception as exc:  # handed to the sender, which raises it in order
            waiting.error = exc
        finally:
            waiting.done = True
            waiting.filled.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        while True:
            await waiting.filled.wait()
            data = waiting.take()
            if data:
                await send(data)
            if waiting.done and not waiting.parts:
                break
    if waiting.error is not None:
        raise waiting.error
