"""200 concurrent streams through a real relay: none fails, no chunk is lost.

A correctness test under load, with no timing assertions (timings are for
``benchmarks/relay_load.py``). Every chunk is numbered by the fake model server
and checked by the client, in order, for every stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reckon.server import Profile
from support import Relay, a_fake_upstream, reckon_serve

from .load_kit import MODEL, StreamResult, an_async_client, numbered_chunks, one_stream, run_load

CONCURRENCY = 200


@pytest.fixture(scope="module")
def a_streaming_upstream() -> Iterator[str]:
    with a_fake_upstream(numbered_chunks, models=[MODEL]) as upstream:
        yield upstream.url


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


# --- a minute: 200 streams open the whole time, through `reckon serve` as a process ---------

MINUTE_CHUNKS = 120
MINUTE_INTERVAL = 0.5  # 120 chunks, one every half second: each stream lasts a minute


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


@contextmanager
def a_relay_process(upstream: str, tmp_path: Path) -> Iterator[tuple[int, str]]:
    """`reckon serve` in its own process in front of `upstream`; yields (pid, base URL)."""
    config = tmp_path / "relay.toml"
    config.write_text(
        f"max_concurrent_streams = {CONCURRENCY + 56}\n\n"
        f'[[profile]]\nname = "load"\nbase_url = "{upstream}/v1"\nmodels = ["{MODEL}"]\n'
    )
    flags = ["--config", str(config)]
    with reckon_serve(*flags, site=tmp_path, cwd=tmp_path) as served:
        yield served.pid, served.url


async def _hold(base_url: str, pid: int) -> tuple[list[StreamResult], list[int]]:
    """200 streams at once, each a minute long; the relay's RSS sampled meanwhile."""
    samples: list[int] = []
    async with an_async_client(CONCURRENCY + 8, timeout=120) as client:
        streams = [
            asyncio.ensure_future(
                one_stream(
                    client,
                    base_url,
                    chunks=MINUTE_CHUNKS,
                    interval=MINUTE_INTERVAL,
                    name=f"m{number}",
                )
            )
            for number in range(CONCURRENCY)
        ]
        while not all(stream.done() for stream in streams):
            samples.append(_rss_kib(pid))
            await asyncio.wait(streams, timeout=1.0)
        return [stream.result() for stream in streams], samples


@pytest.mark.slow
def test_200_streams_held_for_a_minute_lose_no_chunk(
    a_streaming_upstream: str, tmp_path: Path
) -> None:
    with a_relay_process(a_streaming_upstream, tmp_path) as (pid, url):
        # One short stream first, so "before" is a relay that has served a call.
        warm = asyncio.run(_warm(f"{url}/v1"))
        assert warm.error is None, warm.error
        before = _rss_kib(pid)
        results, samples = asyncio.run(_hold(f"{url}/v1", pid))
        after = _rss_kib(pid)

    failed = [r.error for r in results if r.error is not None]
    assert failed == [], f"{len(failed)} of {CONCURRENCY} streams failed, e.g. {failed[:3]}"
    assert [r.received for r in results] == [MINUTE_CHUNKS] * CONCURRENCY
    # Every stream was open for (about) the whole minute, all at the same time.
    assert min(r.total for r in results) >= (MINUTE_CHUNKS - 1) * MINUTE_INTERVAL
    peak = max(samples)
    print(
        f"\nrelay RSS: before {before / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB, "
        f"after {after / 1024:.1f} MiB ({CONCURRENCY} streams x {MINUTE_CHUNKS} chunks)"
    )
    # Generous: 200 open streams cost a few MiB of buffers, not hundreds.
    assert after - before < 200 * 1024, (before, after)


async def _warm(base_url: str) -> StreamResult:
    async with an_async_client(2) as client:
        return await one_stream(client, base_url, chunks=3, interval=0, name="warm")
