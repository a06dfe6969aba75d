"""`pump`: chunks that wait are joined, order is kept, a slow reader slows the source."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from reckon.server._pump import pump


async def _numbered(
    count: int, produced: list[int], *, fail_after: int | None = None
) -> AsyncIterator[bytes]:
    for index in range(count):
        if fail_after is not None and index == fail_after:
            raise httpx.ReadError("upstream went away")
        produced.append(index)
        yield f"{index};".encode()
        # Every chunk is a real await, as a socket read is; a burst still piles up
        # while the sender is busy.
        await anyio.sleep(0)


def test_a_burst_is_sent_in_fewer_larger_pieces_in_order() -> None:
    sends: list[bytes] = []

    async def slow_send(data: bytes) -> None:
        sends.append(data)
        await anyio.sleep(0.01)

    async def main() -> None:
        await pump(_numbered(500, []), slow_send)

    anyio.run(main)
    assert b"".join(sends) == b"".join(f"{i};".encode() for i in range(500))
    assert 1 < len(sends) < 100


def test_a_lone_chunk_is_sent_without_waiting_for_the_next() -> None:
    arrivals: list[float] = []

    async def spaced() -> AsyncIterator[bytes]:
        for index in range(3):
            yield f"{index};".encode()
            await anyio.sleep(0.2)

    async def record(data: bytes) -> None:
        arrivals.append(anyio.current_time())

    async def main() -> float:
        started = anyio.current_time()
        await pump(spaced(), record)
        return started

    started = anyio.run(main)
    assert len(arrivals) == 3
    assert arrivals[0] - started < 0.1


def test_the_source_waits_while_the_limit_is_unsent() -> None:
    produced: list[int] = []
    delivered = 0
    most_ahead = 0

    async def watched() -> AsyncIterator[bytes]:
        nonlocal most_ahead
        async for chunk in _numbered(2000, produced):
            most_ahead = max(most_ahead, len(produced) - delivered)
            yield chunk

    async def slow_send(data: bytes) -> None:
        nonlocal delivered
        await anyio.sleep(0.005)
        delivered += data.count(b";")

    async def main() -> None:
        # Chunks of 2-5 bytes and a 100-byte limit: at most about two limits'
        # worth (the one being sent and the one waiting) may be read ahead.
        await pump(watched(), slow_send, limit=100)

    anyio.run(main)
    assert delivered == 2000
    assert most_ahead <= 80


def test_an_upstream_failure_is_raised_after_what_came_before_it_was_sent() -> None:
    sent: list[bytes] = []

    async def send(data: bytes) -> None:
        sent.append(data)

    async def main() -> None:
        await pump(_numbered(10, [], fail_after=4), send)

    with pytest.raises(httpx.ReadError, match="went away"):
        anyio.run(main)
    assert b"".join(sent) == b"0;1;2;3;"
