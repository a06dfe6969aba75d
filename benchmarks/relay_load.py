"""The relay under load, against calling the model server directly, in one run.

Starts a fake model server that streams numbered chunks and the relay in front
of it (``python -m reckon.server serve --config <toml>``, a subprocess whose
resident memory is read from /proc), then measures:

- load: 200 clients streaming back to back for --seconds; errors, lost chunks,
  streams and chunks per second, relayed and direct;
- the relay's resident memory before and after the load (and its peak);
- time to first byte: median of --ttfb-requests sequential one-chunk streams;
- throughput: one stream of 10,000 chunks, relayed and direct (best of 3).

Prints a table with ratios against the direct baseline; asserts nothing.

    PYTHONPATH=py python benchmarks/relay_load.py [--seconds 60] [--concurrency 200]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# load_kit (tests/server) builds on the tests' support package (tests/), which needs py/.
sys.path[:0] = [str(ROOT / "tests" / "server"), str(ROOT / "tests"), str(ROOT / "py")]

from load_kit import (  # noqa: E402
    MODEL,
    LoadReport,
    an_async_client,
    load_upstream,
    one_stream,
    run_load,
)

from _procs import a_process, text_table  # noqa: E402

_RUNNING = re.compile(r"open http://127\.0\.0\.1:(\d+)/")


def serve_upstream() -> int:
    """The fake model server, run as its own process (``--serve-upstream``)."""
    import uvicorn

    # IPPROTO_TCP, not socket()'s default 0: asyncio sets TCP_NODELAY only on
    # sockets that say they are TCP, and without it Nagle's algorithm holds each
    # stream's first chunk for the relay's delayed ACK (~40 ms on a reused connection).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(load_upstream(), log_config=None, access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def memory_kib(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    return {
        key: int(value.split()[0])
        for key, _, value in (line.partition(":") for line in status.splitlines())
        if key in ("VmRSS", "VmHWM")
    }


async def first_byte_times(urls: dict[str, str], requests: int) -> dict[str, float]:
    """Median seconds to the first byte of a one-chunk stream, alternating targets."""
    times: dict[str, list[float]] = {name: [] for name in urls}
    async with an_async_client(4) as client:
        for number in range(requests):
            for name, url in urls.items():
                result = await one_stream(client, url, chunks=1, interval=0, name=f"t{number}")
                if result.error is not None or result.first_byte is None:
                    raise SystemExit(f"first-byte request to {name} failed: {result.error}")
                times[name].append(result.first_byte)
    return {name: statistics.median(values) for name, values in times.items()}


async def stream_seconds(urls: dict[str, str], chunks: int, repeats: int) -> dict[str, float]:
    """Best time of `repeats` single streams of `chunks` chunks, per target."""
    best: dict[str, float] = {name: float("inf") for name in urls}
    async with an_async_client(4) as client:
        for number in range(repeats):
            for name, url in urls.items():
                result = await one_stream(client, url, chunks=chunks, interval=0, name=f"b{number}")
                if result.error is not None or result.lost:
                    raise SystemExit(f"throughput stream to {name} failed: {result.error}")
                best[name] = min(best[name], result.total)
    return best


def _load_row(report: LoadReport) -> list[str]:
    return [
        f"{report.streams}",
        f"{report.errors}",
        f"{report.lost}",
        f"{report.streams / report.seconds:,.0f}",
        f"{report.chunks / report.seconds:,.0f}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="load duration (default 60)")
    parser.add_argument("--concurrency", type=int, default=200, help="concurrent streams")
    parser.add_argument("--chunks", type=int, default=20, help="chunks per load stream")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between chunks")
    parser.add_argument("--ttfb-requests", type=int, default=200, help="sequential requests")
    parser.add_argument("--throughput-chunks", type=int, default=10_000)
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        return serve_upstream()

    with tempfile.TemporaryDirectory(prefix="reckon-load-") as tmp:
        work = Path(tmp)
        upstream_argv = [sys.executable, str(Path(__file__).resolve()), "--serve-upstream"]
        with a_process(upstream_argv, re.compile(r"PORT (\d+)"), work / "upstream.log") as (
            _,
            upstream_port,
        ):
            direct = f"http://127.0.0.1:{upstream_port}/v1"
            config = work / "relay.toml"
            config.write_text(
                "max_concurrent_streams = 256\n\n[[profile]]\n"
                f'name = "bench"\nbase_url = "{direct}"\nmodels = ["{MODEL}"]\n'
            )
            relay_argv = [sys.executable, "-m", "reckon.server", "serve", "--port", "0"]
            relay_argv += ["--config", str(config)]
            log = work / "relay.log"
            with a_process(relay_argv, _RUNNING, log) as (pid, relay_port):
                relayed = f"http://127.0.0.1:{relay_port}/v1"
                status = measure(args, pid, {"direct": direct, "relayed": relayed})
            # The relay logs one INFO line per call; anything louder is worth seeing.
            loud = [line for line in log.read_text().splitlines() if " INFO " not in line]
            print(f"\nrelay log: {len(loud)} lines above INFO")
            for line in loud[:20]:
                print(f"  {line[:300]}")
            return status


def measure(args: argparse.Namespace, pid: int, urls: dict[str, str]) -> int:
    # Warm both paths (imports, connection pools) before anything is measured.
    asyncio.run(first_byte_times(urls, 5))
    idle = memory_kib(pid)
    print(
        f"relay pid {pid}; {args.concurrency} streams x {args.chunks} chunks every "
        f"{args.interval * 1000:g} ms for {args.seconds:g} s per target ...",
        file=sys.stderr,
    )

    def load(url: str) -> LoadReport:
        return asyncio.run(
            run_load(
                url,
                concurrency=args.concurrency,
                seconds=args.seconds,
                chunks=args.chunks,
                interval=args.interval,
            )
        )

    loads = {"direct": load(urls["direct"]), "relayed": load(urls["relayed"])}
    after_load = memory_kib(pid)
    time.sleep(2)
    settled = memory_kib(pid)
    first = asyncio.run(first_byte_times(urls, args.ttfb_requests))
    best = asyncio.run(stream_seconds(urls, args.throughput_chunks, repeats=3))

    rows = [["load", "streams", "errors", "lost chunks", "streams/s", "chunks/s"]]
    rows += [[name, *_load_row(report)] for name, report in loads.items()]
    direct_rate = loads["direct"].chunks / loads["direct"].seconds
    relayed_rate = loads["relayed"].chunks / loads["relayed"].seconds
    rows.append(["relayed/direct", "", "", "", "", f"{relayed_rate / direct_rate:.2f}"])
    print(text_table(rows))
    for name, report in loads.items():
        for sample in report.samples:
            print(f"  {name} error: {sample}")
    print()

    n = args.throughput_chunks
    rows = [["latency and throughput", "direct", "relayed", "relayed/direct"]]
    rows.append(
        [
            f"time to first byte, median of {args.ttfb_requests} (ms)",
            f"{first['direct'] * 1000:.2f}",
            f"{first['relayed'] * 1000:.2f}",
            f"{first['relayed'] / first['direct']:.2f}",
        ]
    )
    rows.append(
        [
            "  overhead (ms)",
            "",
            f"{(first['relayed'] - first['direct']) * 1000:+.2f}",
            "",
        ]
    )
    rows.append(
        [
            f"{n:,} chunks in one stream, best of 3 (ms)",
            f"{best['direct'] * 1000:.0f}",
            f"{best['relayed'] * 1000:.0f}",
            f"{best['relayed'] / best['direct']:.2f}",
        ]
    )
    rows.append(
        [
            "  chunks/s",
            f"{n / best['direct']:,.0f}",
            f"{n / best['relayed']:,.0f}",
            f"{best['direct'] / best['relayed']:.2f}",
        ]
    )
    print(text_table(rows))
    print()

    rows = [["relay memory (MiB)", "RSS", "peak (VmHWM)"]]
    samples: list[tuple[str, dict[str, int]]] = [
        ("before the load", idle),
        ("right after the load", after_load),
        ("2 s later", settled),
    ]
    for label, kib in samples:
        rows.append([label, f"{kib['VmRSS'] / 1024:.1f}", f"{kib['VmHWM'] / 1024:.1f}"])
    growth = (settled["VmRSS"] - idle["VmRSS"]) / 1024
    rows.append(["growth (2 s later - before)", f"{growth:+.1f}", ""])
    print(text_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
