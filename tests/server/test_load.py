"""200 concurrent streams through a real relay: none fails, no chunk is lost.

A correctness test under load, with no timing assertions (timings are for
``benchmarks/relay_load.py``). Every chunk is numbered by the fake model server
and checked by the client, in order, for every stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from reckon.server import Profile

from .conftest import Relay, Running
from .load_kit import MODEL, run_load, streaming_upstream

CONCURRENCY = 200


@pytest.fixture(scope="module")
def a_streaming_upstream() -> Iterator[str]:
    with Running(streaming_upstream, lifespan="off") as running:
        yield running.url


def test_200_concurrent_streams_lose_nothing(
    a_relay_with: Callable[..., Relay], a_streaming_upstream: str
) -> None:
    relay = a_relay_with(
        profiles=[Profile(name="load", base_url=f"{a_streaming_upstream}/v1", models=[MODEL])],
        max_concurrent_streams=CONCURRENCY + 56,
    )

    report = asyncio.run(
        run_load(f"{relay.url}/v1", concurrency=CONCURRENCY, seconds=5, chunks=20, interval=0.01)
    )

    assert report.errors == 0, report.samples
    assert report.lost == 0
    assert report.streams >= CONCURRENCY
    assert report.chunks == report.streams * 20
