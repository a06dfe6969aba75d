"""Per-client limits shared by two relay replicas through Redis: exact, and what they cost.

Starts a fake model server (this script with ``--serve-upstream``: the tests'
FakeUpstream, a real loopback HTTP server), one ``redis-server`` (Debian's, on a free
port) and ``reckon serve`` processes:

- exactness: for each limit, two replicas sharing the Redis with only that limit set;
  200 clients fire one call each at the same moment, alternating replicas, and the
  calls admitted are counted (they must equal what the limit allows, exactly);
- cost: a relay without limits (the baseline), a relay with limits in memory, and two
  replicas with all three limits in Redis (set high enough to refuse nothing), measured
  in the same run, interleaved: latency of sequential calls, and of 200 concurrent
  clients making calls back to back. Ratios are against the baseline.

Finally Redis is stopped, and a call to a replica must get 503 (limits fail closed).
Prints tables; exits 1 if an admitted count is not exact.

    PYTHONPATH=py python benchmarks/relay_limits.py [--sequential 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "py"))

from redis_kit import RedisServer, a_redis_server  # noqa: E402

from _procs import a_process, text_table  # noqa: E402
from reckon.server._usage import estimate_prompt_tokens  # noqa: E402
from support import FakeUpstream, Script, Seen  # noqa: E402

MODEL = "bench-model"
CLIENTS = 200
_RUNNING = re.compile(r"open http://127\.0\.0\.1:(\d+)/")
HELLO = [{"role": "user", "content": "What is 2 + 2?"}]


def usage_answer(seen: Seen) -> Script:
    """The fake upstream's answer: at once (or after ``x_delay`` s), with ``x_usage`` as
    the reported usage."""
    payload: dict[str, Any] = seen.json
    prompt, completion = payload.get("x_usage", [3, 5])
    answer = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
    data = json.dumps(answer).encode()
    return Script(
        body=data,
        stream=False,
        delay_before_first=float(payload.get("x_delay", 0)),
        headers={"content-length": str(len(data))},
    )


def serve_upstream() -> int:
    import uvicorn

    # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    # The tests' fake upstream, in a process of its own (it lists only MODEL).
    upstream = FakeUpstream(usage_answer)
    upstream.models = [MODEL]
    config = uvicorn.Config(
        upstream, log_config=None, access_log=False, lifespan="off", backlog=4096
    )
    uvicorn.Server(config).run(sockets=[sock])
    return 0


class Fleet:
    """The relay processes of this run, all in front of one fake model server."""

    def __init__(self, stack: ExitStack, work: Path, upstream: str) -> None:
        self.stack, self.work, self.upstream = stack, work, upstream
        self.count = 0

    def relay(self, limits: dict[str, int], redis: str | None = None) -> str:
        self.count += 1
        config = self.work / f"relay{self.count}.toml"
        table = "".join(f"{k} = {v}\n" for k, v in limits.items())
        config.write_text(
            "max_concurrent_streams = 1024\n\n"
            + (f"[limits]\n{table}\n" if limits else "")
            + f'[[profile]]\nname = "bench"\nbase_url = "{self.upstream}"\nmodels = ["{MODEL}"]\n'
        )
        argv = [sys.executable, "-m", "reckon.server", "serve", "--port", "0"]
        argv += ["--config", str(config), "--site", str(self.work)]
        if redis is not None:
            argv += ["--redis", redis]
        log = self.work / f"relay{self.count}.log"
        _, port = self.stack.enter_context(a_process(argv, _RUNNING, log))
        return f"http://127.0.0.1:{port}"


def a_client(connections: int) -> httpx.AsyncClient:
    limits = httpx.Limits(
        max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0
    )
    return httpx.AsyncClient(limits=limits, timeout=60, trust_env=False)


async def burst(urls: list[str], body: dict[str, Any]) -> list[httpx.Response | str]:
    """CLIENTS calls released at the same moment, alternating over `urls`.

    Each on a new connection: connections opened ahead and left idle while 200 others
    opened were now and then closed under a call by httpx's pool on a loaded machine
    (ReadError, with or without limits), and a call that fails so cannot be counted.
    """
    async with a_client(CLIENTS) as client:
        go = asyncio.Event()

        async def one(number: int) -> httpx.Response | str:
            await go.wait()
            url = f"{urls[number % len(urls)]}/v1/chat/completions"
            try:
                return await client.post(url, json=body)
            except httpx.HTTPError as exc:
                return type(exc).__name__

        tasks = [asyncio.ensure_future(one(n)) for n in range(CLIENTS)]
        await asyncio.sleep(0.1)
        go.set()
        return list(await asyncio.gather(*tasks))


def exactness(fleet: Fleet, redis: RedisServer) -> tuple[list[list[str]], bool]:
    body: dict[str, Any] = {"model": MODEL, "messages": HELLO}
    reserve = estimate_prompt_tokens(body)
    per_day = reserve * 41 // 2  # 20.5 calls' worth: the 21st starts under it, then no more
    cases: list[tuple[str, int, dict[str, Any], int, str]] = [
        ("requests_per_minute", 50, body, 50, "sliding minute"),
        # Every call is held 5 s upstream, so the first ten are still under way when
        # the other 190 arrive.
        ("concurrent_streams", 10, {**body, "x_delay": 5}, 10, "calls held 5 s"),
        # Each call reports exactly its reservation, so settling changes no count and
        # the admitted number is ceil(limit / tokens per call) whatever the timing.
        ("tokens_per_day", per_day, {**body, "x_usage": [reserve, 0]}, 21,
         f"{reserve} tokens a call"),
    ]  # fmt: skip
    rows = [["limit (2 replicas, 1 Redis)", "configured", "expected", "admitted", "429s", "exact"]]
    exact = True
    for name, limit, payload, expected, note in cases:
        urls = [fleet.relay({name: limit}, redis.url) for _ in range(2)]
        answers = asyncio.run(burst(urls, payload))
        replies = [r for r in answers if isinstance(r, httpx.Response)]
        admitted = sum(r.status_code == 200 for r in replies)
        refused = [r for r in replies if r.status_code == 429]
        others = len(answers) - admitted - len(refused)
        waits = sorted({int(r.headers["retry-after"]) for r in refused})
        ok = admitted == expected and others == 0
        exact &= ok
        verdict = "yes" if ok else f"NO ({others} failed or other)" if others else "NO"
        rows.append([f"{name} ({note})", f"{limit:,}", f"{expected}", f"{admitted}",
                     f"{len(refused)}", verdict])  # fmt: skip
        span = f"{waits[0]}" if len(waits) == 1 else f"{waits[0]}-{waits[-1]}" if waits else "-"
        rows.append(["  Retry-After of the 429s (s)", "", "", "", span, ""])
        if name == "tokens_per_day":
            counted = asyncio.run(_tokens_in_redis(redis))
            ok = counted == expected * reserve
            exact &= ok
            rows.append(["  tokens counted in Redis", "", f"{expected * reserve}", f"{counted}",
                         "", "yes" if ok else "NO"])  # fmt: skip
        asyncio.run(_flush(redis))
    return rows, exact


async def _tokens_in_redis(redis: RedisServer) -> int:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis.url)
    try:
        day = str(int(time.time() // 86400))
        value = await client.hget("reckon:{ip:127.0.0.1}:tokens", day)
        return int(value or 0)
    finally:
        await client.aclose()


async def _flush(redis: RedisServer) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis.url)
    try:
        await client.flushall()
    finally:
        await client.aclose()


async def sequential(
    targets: dict[str, list[str]], calls: int, errors: dict[str, list[str]]
) -> dict[str, list[float]]:
    """Seconds per call, one at a time, targets interleaved call by call."""
    times: dict[str, list[float]] = {name: [] for name in targets}
    body = {"model": MODEL, "messages": HELLO}
    async with a_client(8) as client:
        for number in range(calls):
            for name, urls in targets.items():
                url = f"{urls[number % len(urls)]}/v1/chat/completions"
                started = time.perf_counter()
                problem = await _call(client, url, body)
                if problem is None:
                    times[name].append(time.perf_counter() - started)
                else:
                    errors.setdefault(name, []).append(problem)
    return times


async def _call(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str | None:
    """One call; what went wrong, if anything (a load test counts failures, it does not stop)."""
    try:
        response = await client.post(url, json=body)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return None if response.status_code == 200 else f"HTTP {response.status_code}"


async def concurrent(urls: list[str], rounds: int, errors: list[str]) -> list[float]:
    """CLIENTS clients, each making `rounds` calls back to back; seconds per call."""
    times: list[float] = []
    body = {"model": MODEL, "messages": HELLO}
    async with a_client(CLIENTS + 8) as client:

        async def worker(number: int) -> None:
            for turn in range(rounds):
                url = f"{urls[(number + turn) % len(urls)]}/v1/chat/completions"
                started = time.perf_counter()
                problem = await _call(client, url, body)
                if problem is None:
                    times.append(time.perf_counter() - started)
                else:
                    errors.append(problem)

        await asyncio.gather(*(worker(n) for n in range(CLIENTS)))
    return times


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def cost(fleet: Fleet, redis: RedisServer, direct: str, args: argparse.Namespace) -> list[str]:
    high = {"requests_per_minute": 10**8, "tokens_per_day": 10**12, "concurrent_streams": 10**5}
    targets = {
        "direct to the model server": [direct.removesuffix("/v1")],
        "relay, no limits (baseline)": [fleet.relay({})],
        "relay, limits in memory": [fleet.relay(high)],
        "2 relays, limits in Redis": [fleet.relay(high, redis.url) for _ in range(2)],
    }
    asyncio.run(sequential(targets, 20, {}))  # warm: imports, connections, Lua scripts
    failed: dict[str, list[str]] = {}
    one_by_one = asyncio.run(sequential(targets, args.sequential, failed))
    loaded: dict[str, list[float]] = {}
    failed_loaded: dict[str, list[str]] = {}
    for _ in range(2):  # two passes, alternating, so no target always runs on a cooler machine
        for name, urls in targets.items():
            errors = failed_loaded.setdefault(name, [])
            loaded.setdefault(name, []).extend(asyncio.run(concurrent(urls, args.rounds, errors)))
    out = []
    for title, times, problems in (
        (f"one call at a time ({args.sequential} calls each, interleaved)", one_by_one, failed),
        (f"{CLIENTS} concurrent clients x {args.rounds} calls, 2 passes", loaded, failed_loaded),
    ):
        base = times["relay, no limits (baseline)"]
        b50, b95 = _percentile(base, 0.5), _percentile(base, 0.95)
        rows = [[title, "calls", "errors", "p50 ms", "p95 ms", "p50/base", "p95/base",
                 "added p50 ms", "added p95 ms"]]  # fmt: skip
        for name, values in times.items():
            p50, p95 = _percentile(values, 0.5), _percentile(values, 0.95)
            rows.append([name, f"{len(values)}", f"{len(problems.get(name, []))}",
                         f"{p50 * 1000:.2f}", f"{p95 * 1000:.2f}", f"{p50 / b50:.2f}",
                         f"{p95 / b95:.2f}", f"{(p50 - b50) * 1000:+.2f}",
                         f"{(p95 - b95) * 1000:+.2f}"])  # fmt: skip
        kinds = {f"{name}: {kind}" for name, found in problems.items() for kind in found}
        out.append(text_table(rows) + "".join(f"\n  error: {kind}" for kind in sorted(kinds)))
    return out


def fail_closed(fleet: Fleet, redis: RedisServer) -> str:
    asyncio.run(_flush(redis))  # the cost runs filled this address's minute
    url = fleet.relay({"requests_per_minute": 1000}, redis.url)
    body = {"model": MODEL, "messages": HELLO}
    with httpx.Client(trust_env=False, timeout=30) as client:
        before = client.post(f"{url}/v1/chat/completions", json=body).status_code
        redis.stop()
        started = time.perf_counter()
        down = client.post(f"{url}/v1/chat/completions", json=body)
        took = time.perf_counter() - started
    code = down.json().get("error", {}).get("code")
    return (
        f"Redis stopped: a call answered HTTP {before} before, HTTP {down.status_code} "
        f"({code}) after, in {took * 1000:.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sequential", type=int, default=300, help="sequential calls per target")
    parser.add_argument("--rounds", type=int, default=5, help="calls per concurrent client")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        return serve_upstream()

    with tempfile.TemporaryDirectory(prefix="reckon-limits-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        upstream_argv = [sys.executable, str(Path(__file__).resolve()), "--serve-upstream"]
        _, port = stack.enter_context(
            a_process(upstream_argv, re.compile(r"PORT (\d+)"), work / "upstream.log")
        )
        direct = f"http://127.0.0.1:{port}/v1"
        redis = stack.enter_context(a_redis_server())
        fleet = Fleet(stack, work, direct)
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
        rows, exact = exactness(fleet, redis)
        print(text_table(rows))
        print()
        for table in cost(fleet, redis, direct, args):
            print(table)
            print()
        print(fail_closed(fleet, redis))
        lines = [
            line
            for log in sorted(work.glob("relay*.log"))
            for line in log.read_text().splitlines()
            if " INFO " not in line and not line.startswith("reckon: note:")
        ]
        store = [line for line in lines if "limit store" in line]
        # The last one is the call made after Redis was stopped, on purpose.
        print(f"relay logs: {len(store)} warnings that the limit store was unavailable")
        loud = [line for line in lines if "limit store" not in line]
        print(f"relay logs: {len(loud)} other lines above INFO")
        for line in [*store[:5], *loud[:10]]:
            print(f"  {line[:300]}")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
