"""The limits in a real redis-server, shared by two relay replicas: exact, and fail closed.

Each replica is its own app under its own uvicorn (thread and event loop), as two
``reckon serve`` processes behind a load balancer would be; calls alternate between
them. Redis is Debian's ``redis-server`` on a free loopback port (``conftest``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import httpx
import pytest

from reckon.server import Client, Limits
from reckon.server._limits import Admission, Refusal
from reckon.server._limits_redis import RedisLimits, keys_of
from support import COMPLETION, MODEL, PY, STREAM_CHUNKS, Relay, Script, burst

from .redis_kit import RedisServer, free_port

HELLO = [{"role": "user", "content": "hi"}]
ALICE = Client("alice", "alice-token-for-redis-0123")


def replicas(
    start: Callable[..., Relay], redis: str, limits: Limits, **more: object
) -> list[Relay]:
    return [start(limits=limits, redis_url=redis, **more) for _ in range(2)]


def chat(relay: Relay, **headers: str) -> httpx.Response:
    with relay.client() as client:
        return client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=headers
        )


def test_two_replicas_admit_exactly_the_limit_between_them(
    a_relay_with: Callable[..., Relay], a_redis: RedisServer
) -> None:
    one, two = replicas(a_relay_with, a_redis.url, Limits(requests_per_minute=10))

    answers = burst([one.url, two.url], 60)

    statuses = [r.status_code for r in answers]
    # Each replica got 30 calls: counted apart, they would have let 20 through.
    assert statuses.count(200) == 10
    assert statuses.count(429) == 50
    for response in answers:
        if response.status_code == 429:
            assert response.headers["retry-after"] in ("59", "60")
            assert response.json()["error"]["code"] == "requests_per_minute"


def test_a_burst_wider_than_the_redis_pool_waits_for_connections_and_gets_through(
    a_relay_with: Callable[..., Relay], a_redis: RedisServer
) -> None:
    # More calls at once than connections to Redis (redis-py's pool refused the 101st
    # with MaxConnectionsError, which became a 503 under load).
    relay = a_relay_with(
        limits=Limits(requests_per_minute=10_000), redis_url=a_redis.url, max_concurrent_streams=400
    )

    statuses = [r.status_code for r in burst([relay.url], 300)]

    assert statuses == [200] * 300


def test_tokens_counted_on_one_replica_limit_the_other(
    a_relay_with: Callable[..., Relay], a_redis: RedisServer
) -> None:
    one, two = replicas(a_relay_with, a_redis.url, Limits(tokens_per_day=20), clients=[ALICE])
    auth = {"Authorization": f"Bearer {ALICE.token}"}
    assert COMPLETION["usage"]["total_tokens"] == 8  # type: ignore[index]

    statuses = [chat(relay, **auth).status_code for relay in (one, two, one, two)]

    assert statuses == [200, 200, 200, 429]
    with one.client() as client:
        refused = client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=auth
        )
    assert "Client 'alice' has used 24 tokens today" in refused.json()["error"]["message"]
    remaining = 86400 - time.time() % 86400
    assert abs(int(refused.headers["retry-after"]) - remaining) <= 2


def test_a_stream_open_on_one_replica_holds_its_place_on_the_other(
    a_relay_with: Callable[..., Relay], a_redis: RedisServer
) -> None:
    one, two = replicas(a_relay_with, a_redis.url, Limits(concurrent_streams=1))
    one.upstream.script = Script(stall_after=2)  # streams stay open; whole answers do not
    stream = {"model": MODEL, "messages": HELLO, "stream": True}
    whole = {"model": MODEL, "messages": HELLO}

    async def run() -> tuple[int, httpx.Response, int]:
        async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
            request = client.build_request("POST", f"{one.url}/v1/chat/completions", json=stream)
            held = await client.send(request, stream=True)
            reader = held.aiter_raw()  # kept: a collected reader would close the stream
            await anext(reader)
            refused = await client.post(f"{two.url}/v1/chat/completions", json=whole)
            await held.aclose()
            deadline = time.monotonic() + 10
            while True:
                after = await client.post(f"{two.url}/v1/chat/completions", json=whole)
                if after.status_code != 429 or time.monotonic() > deadline:
                    return held.status_code, refused, after.status_code
                await asyncio.sleep(0.02)

    held, refused, after = asyncio.run(run())

    assert held == 200
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "concurrent_streams"
    assert after == 200


def test_a_stream_usage_chunk_is_counted_in_redis(
    a_relay_with: Callable[..., Relay], a_redis: RedisServer
) -> None:
    (one, _) = replicas(a_relay_with, a_redis.url, Limits(tokens_per_day=10_000), clients=[ALICE])
    usage = {"prompt_tokens": 11, "completion_tokens": 31}
    final = {"object": "chat.completion.chunk", "choices": [], "usage": usage}
    one.upstream.script = Script(chunks=[*STREAM_CHUNKS[:-1], f"data: {json.dumps(final)}\n\n"
                                         .encode(), STREAM_CHUNKS[-1]])  # fmt: skip
    with one.client(headers={"Authorization": f"Bearer {ALICE.token}"}) as client:
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        assert client.post("/v1/chat/completions", json=body).status_code == 200

    # The relay settles a call once its last byte is sent, so the count may land just
    # after the client has read the stream: wait for it, within a deadline.
    day = str(int(time.time() // 86400))
    counted = redis_command(a_redis, "HGET", keys_of("client:alice")[1], day)
    deadline = time.monotonic() + 10
    while counted != b"42" and time.monotonic() < deadline:
        time.sleep(0.05)
        counted = redis_command(a_redis, "HGET", keys_of("client:alice")[1], day)
    assert counted == b"42"
    # Only the id is stored, never the token.
    assert ALICE.token.encode() not in redis_command(a_redis, "KEYS", "*")


def test_a_redis_nobody_answers_is_a_503_and_no_call_goes_through(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(
        limits=Limits(requests_per_minute=100), redis_url=f"redis://127.0.0.1:{free_port()}/0"
    )

    response = chat(relay)

    assert response.status_code == 503
    error = response.json()["error"]
    assert error["type"] == "service_unavailable"
    assert error["code"] == "limits_unavailable"
    assert "limits fail closed" in error["message"]
    assert relay.upstream.seen == []


def test_the_relay_recovers_when_redis_comes_back(
    a_relay_with: Callable[..., Relay], a_redis: RedisServer
) -> None:
    relay = a_relay_with(limits=Limits(requests_per_minute=100), redis_url=a_redis.url)
    assert chat(relay).status_code == 200

    a_redis.stop()
    down = chat(relay)
    a_redis.start()
    back = chat(relay)

    assert down.status_code == 503
    assert back.status_code == 200
    with relay.client() as client:
        metrics = client.get("/metrics").text
    assert 'reckon_errors_total{kind="service_unavailable"} 1' in metrics


def test_a_dead_replicas_streams_free_their_places_when_the_lease_ends(
    a_redis: RedisServer,
) -> None:
    async def run() -> tuple[Admission | Refusal, Admission | Refusal, float]:
        limits = Limits(concurrent_streams=1)
        dead = RedisLimits(a_redis.url, limits, lease=1.0)  # admits, then never renews
        first = await dead.admit("client:x", request="r1", reserve=0)
        assert isinstance(first, Admission)
        alive = RedisLimits(a_redis.url, limits, lease=1.0)
        refused = await alive.admit("client:x", request="r2", reserve=0)
        started = time.monotonic()
        while isinstance(await alive.admit("client:x", request="r3", reserve=0), Refusal):
            assert time.monotonic() - started < 10
            await asyncio.sleep(0.05)
        await dead.client.aclose()
        await alive.client.aclose()
        return first, refused, time.monotonic() - started

    _, refused, waited = asyncio.run(run())

    assert refused == Refusal("concurrent_streams", 1, 1)
    assert waited < 2.0


def test_a_live_replica_renews_its_streams_leases(a_redis: RedisServer) -> None:
    async def run() -> Admission | Refusal:
        limits = Limits(concurrent_streams=1)
        # Long enough that a loaded machine's stalls (a CI run once missed every renewal
        # of a 0.6 s lease) do not pass for a replica that stopped renewing.
        live = RedisLimits(a_redis.url, limits, lease=2.0)
        other = RedisLimits(a_redis.url, limits, lease=2.0)
        async with live.running():
            assert isinstance(await live.admit("client:x", request="r1", reserve=0), Admission)
            await asyncio.sleep(3.0)  # past the first lease: renewed every 0.67 s meanwhile
            result = await other.admit("client:x", request="r2", reserve=0)
        await other.client.aclose()
        return result

    assert asyncio.run(run()) == Refusal("concurrent_streams", 1, 1)


@pytest.mark.parametrize("redis", [False, True])
def test_the_redis_package_is_imported_only_with_a_redis_address(redis: bool) -> None:
    url = "redis://127.0.0.1:1/0" if redis else None
    script = (
        "import sys\n"
        "from reckon.server import Limits, RelayConfig, create_app\n"
        f"create_app(RelayConfig(limits=Limits(requests_per_minute=5), redis_url={url!r}))\n"
        "print('redis' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PY)}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(redis)


def redis_command(server: RedisServer, *parts: str) -> bytes:
    """One command over a raw connection (RESP), its reply's bytes."""
    import socket

    request = f"*{len(parts)}\r\n" + "".join(f"${len(p.encode())}\r\n{p}\r\n" for p in parts)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
        conn.sendall(request.encode())
        reply = conn.recv(65536)
    if reply.startswith(b"$"):
        return reply.split(b"\r\n", 2)[1]
    return reply
