"""Per-client limits in one relay process: exact under concurrency, 429s that say when.

A real relay in front of the fake model server; the limit store is the in-memory one.
`MemoryLimits` is also driven directly with a clock the test sets, for the exact
edges of the window and of the day.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import httpx
import pytest

from reckon import ConfigError
from reckon.server import Limits, RelayConfig
from reckon.server._access import Client
from reckon.server._identity import mint_token
from reckon.server._limits import Admission, MemoryLimits, Refusal
from support import COMPLETION, MODEL, STREAM_CHUNKS, Relay, Script, burst

HELLO = [{"role": "user", "content": "hi"}]
ALICE = Client("alice", "alice-token-0123456789")
BOB = Client("bob", "bob-token-0123456789abc")
SECRET = "a-signing-secret-for-the-tests-0123456789"


def chat(relay: Relay, *, token: str | None = None, **headers: str) -> httpx.Response:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    with relay.client() as client:
        return client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=headers
        )


def seconds_to_midnight_utc() -> float:
    return 86400 - time.time() % 86400


def upstream_calls(relay: Relay) -> int:
    return sum(1 for seen in relay.upstream.seen if seen.path.endswith("/chat/completions"))


def test_without_limits_nothing_is_refused(a_relay: Relay) -> None:
    statuses = [r.status_code for r in burst([a_relay.url], 40)]

    assert statuses == [200] * 40


def test_requests_per_minute_admit_exactly_the_limit_under_concurrency(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(limits=Limits(requests_per_minute=7))

    answers = burst([relay.url], 40)

    statuses = [r.status_code for r in answers]
    assert statuses.count(200) == 7
    assert statuses.count(429) == 33
    assert upstream_calls(relay) == 7
    refused = [r for r in answers if r.status_code == 429]
    for response in refused:
        # The oldest of the seven leaves the window a minute after it came in.
        assert response.headers["retry-after"] in ("59", "60")
        error = response.json()["error"]
        assert error["type"] == "rate_limit_error"
        assert error["code"] == "requests_per_minute"
        assert "7 model calls in the last minute" in error["message"]
        assert "(requests_per_minute = 7)" in error["message"]
        assert "This address (127.0.0.1)" in error["message"]


def test_tokens_per_day_are_counted_from_the_reported_usage(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(limits=Limits(tokens_per_day=20))
    assert COMPLETION["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}

    # 0 -> 8 -> 16 -> 24: the third call starts under the limit and ends past it.
    statuses = [chat(relay).status_code for _ in range(3)]
    refused = chat(relay)

    assert statuses == [200, 200, 200]
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "tokens_per_day"
    assert "has used 24 tokens today" in error["message"]
    assert "(tokens_per_day = 20)" in error["message"]
    assert abs(int(refused.headers["retry-after"]) - seconds_to_midnight_utc()) <= 2
    assert upstream_calls(relay) == 3


def usage_chunk(prompt: int, completion: int) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    event = {"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": usage}
    return f"data: {json.dumps(event)}\n\n".encode()


def test_a_streams_final_usage_chunk_is_what_counts(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(limits=Limits(tokens_per_day=100))
    relay.upstream.script = Script(chunks=[*STREAM_CHUNKS[:-1], usage_chunk(20, 30)])
    body = {"model": MODEL, "messages": HELLO, "stream": True}
    with relay.client() as client:
        first = client.post("/v1/chat/completions", json=body)
        second = client.post("/v1/chat/completions", json=body)
        third = client.post("/v1/chat/completions", json=body)
        metrics = client.get("/metrics").text

    assert (first.status_code, second.status_code, third.status_code) == (200, 200, 429)
    assert "has used 100 tokens today" in third.json()["error"]["message"]
    assert 'reckon_tokens_total{kind="prompt",source="reported"} 40' in metrics
    assert 'reckon_tokens_total{kind="completion",source="reported"} 60' in metrics


def test_an_answer_without_usage_is_charged_an_estimate(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(limits=Limits(tokens_per_day=1000))
    relay.upstream.script = Script(chunks=list(STREAM_CHUNKS))  # no usage chunk
    with relay.client() as client:
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        assert client.post("/v1/chat/completions", json=body).status_code == 200
        metrics = client.get("/metrics").text

    # Prompt: '[[{"role": "user", "content": "hi"}], null]' is 43 bytes -> 22 tokens.
    # Answer: the strings of the deltas, "assistant" "Hel" "lo" "call_1" "function"
    # "run_python" '{"code": ' '"1+1"}', 53 bytes -> 27 tokens (one per two bytes).
    assert 'reckon_tokens_total{kind="prompt",source="estimated"} 22' in metrics
    assert 'reckon_tokens_total{kind="completion",source="estimated"} 27' in metrics


def test_concurrent_streams_hold_their_place_until_they_end(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(limits=Limits(concurrent_streams=2))
    relay.upstream.script = Script(stall_after=2)  # each stream stays open
    body = {"model": MODEL, "messages": HELLO, "stream": True}

    async def run() -> tuple[list[int], httpx.Response, int]:
        async with httpx.AsyncClient(base_url=relay.url, timeout=10, trust_env=False) as client:
            held, readers = [], []
            for _ in range(2):
                request = client.build_request("POST", "/v1/chat/completions", json=body)
                response = await client.send(request, stream=True)
                # Kept: a reader left to the garbage collector would close its stream.
                readers.append(response.aiter_raw())
                await anext(readers[-1])  # under way
                held.append(response)
            refused = await client.post("/v1/chat/completions", json=body)
            await held[0].aclose()  # the client leaves: its place is given back
            deadline = time.monotonic() + 10
            while True:
                request = client.build_request("POST", "/v1/chat/completions", json=body)
                again = await client.send(request, stream=True)
                if again.status_code == 200 or time.monotonic() > deadline:
                    break
                await again.aclose()
                await asyncio.sleep(0.02)
            status = again.status_code
            await again.aclose()
            await held[1].aclose()
            return [r.status_code for r in held], refused, status

    held, refused, after = asyncio.run(run())

    assert held == [200, 200]
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "1"
    assert refused.json()["error"]["code"] == "concurrent_streams"
    assert "already has 2 model calls under way" in refused.json()["error"]["message"]
    assert after == 200


def test_each_client_has_its_own_limits(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(clients=[ALICE, BOB], limits=Limits(requests_per_minute=2))

    alice = [chat(relay, token=ALICE.token).status_code for _ in range(3)]
    bob = [chat(relay, token=BOB.token).status_code for _ in range(2)]
    refused = chat(relay, token=ALICE.token)

    assert alice == [200, 200, 429]
    assert bob == [200, 200]
    assert "Client 'alice' has made 2 model calls" in refused.json()["error"]["message"]


def test_signed_tokens_for_one_id_share_its_limits(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(client_secret=SECRET, limits=Limits(requests_per_minute=2))
    tokens = [mint_token("carol", SECRET, ttl=ttl) for ttl in (60, 120, 180)]
    assert len(set(tokens)) == 3

    statuses = [chat(relay, token=t).status_code for t in tokens]
    dave = chat(relay, token=mint_token("dave", SECRET, ttl=60))

    assert statuses == [200, 200, 429]
    assert dave.status_code == 200


def test_without_identities_callers_are_limited_by_address(
    a_relay_with: Callable[..., Relay],
) -> None:
    # The shared token names nobody in particular, so it is limited by address too.
    relay = a_relay_with(token="shared-token-123", limits=Limits(requests_per_minute=1))
    # A proxy on loopback (trusted by default) says where each call comes from.
    one, two = {"X-Forwarded-For": "203.0.113.1"}, {"X-Forwarded-For": "203.0.113.2"}

    first = chat(relay, token="shared-token-123", **one)
    again = chat(relay, token="shared-token-123", **one)
    other = chat(relay, token="shared-token-123", **two)

    assert (first.status_code, again.status_code, other.status_code) == (200, 429, 200)
    assert "This address (203.0.113.1) has made 1 model calls" in again.json()["error"]["message"]


def test_an_untrusted_peers_forwarded_for_is_ignored(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(trusted_proxies=["10.0.0.1"], limits=Limits(requests_per_minute=1))

    first = chat(relay, **{"X-Forwarded-For": "203.0.113.1"})
    second = chat(relay, **{"X-Forwarded-For": "203.0.113.2"})

    assert (first.status_code, second.status_code) == (200, 429)
    assert "This address (127.0.0.1)" in second.json()["error"]["message"]


def test_the_relays_own_stream_limit_says_so(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(max_concurrent_streams=1)
    relay.upstream.script = Script(delay_before_first=2.0)

    answers = burst([relay.url], 3)

    assert sorted(r.status_code for r in answers) == [200, 429, 429]
    refused = next(r for r in answers if r.status_code == 429)
    assert refused.json()["error"]["code"] == "max_concurrent_streams"
    assert refused.headers["retry-after"] == "1"


# --- the in-memory store, with a clock the test moves -------------------------------------


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


DAY_START = 20_000 * 86400.0  # midnight UTC of some day


def admit(store: MemoryLimits, reserve: int = 0) -> Admission | Refusal:
    return asyncio.run(store.admit("client:x", request="r", reserve=reserve))


def test_the_minute_is_a_sliding_window_with_an_exact_retry_after() -> None:
    clock = Clock(DAY_START + 100)
    store = MemoryLimits(Limits(requests_per_minute=2), clock=clock)

    assert isinstance(admit(store), Admission)
    clock.now += 10
    assert isinstance(admit(store), Admission)
    clock.now += 5
    refused = admit(store)
    clock.now = DAY_START + 160  # the first call is exactly a minute old: out
    third = admit(store)
    fourth = admit(store)

    assert refused == Refusal("requests_per_minute", 45, 2)
    assert isinstance(third, Admission)
    assert fourth == Refusal("requests_per_minute", 10, 2)


def test_refused_calls_do_not_fill_the_window() -> None:
    clock = Clock(DAY_START)
    store = MemoryLimits(Limits(requests_per_minute=1), clock=clock)
    admit(store)
    for _ in range(50):
        clock.now += 1
        assert isinstance(admit(store), Refusal)

    clock.now = DAY_START + 60

    assert isinstance(admit(store), Admission)


def test_the_day_ends_at_midnight_utc_and_estimates_are_settled() -> None:
    clock = Clock(DAY_START + 86400 - 30)
    store = MemoryLimits(Limits(tokens_per_day=100), clock=clock)

    first = admit(store, reserve=150)  # the estimate alone is past the limit
    refused = admit(store)
    assert isinstance(first, Admission)
    assert refused == Refusal("tokens_per_day", 30, 150)
    asyncio.run(store.settle(first, tokens=60))  # it used fewer than estimated
    assert isinstance(admit(store), Admission)
    clock.now = DAY_START + 86400  # midnight: a new day, a new count

    assert isinstance(admit(store), Admission)


def test_a_call_that_runs_past_midnight_is_charged_to_the_new_day() -> None:
    clock = Clock(DAY_START + 86400 - 1)
    store = MemoryLimits(Limits(tokens_per_day=100), clock=clock)
    call = admit(store, reserve=10)
    assert isinstance(call, Admission)
    clock.now = DAY_START + 86400 + 5
    assert isinstance(admit(store), Admission)  # the new day starts at 0

    asyncio.run(store.settle(call, tokens=120))

    assert admit(store) == Refusal("tokens_per_day", 86400 - 5, 120)


@pytest.mark.parametrize(
    ("make", "complaint"),
    [
        (lambda: Limits(requests_per_minute=0), "requests_per_minute must be a whole number"),
        (lambda: Limits(tokens_per_day=True), "tokens_per_day must be a whole number"),
        (lambda: RelayConfig(redis_url="redis://127.0.0.1:1/0"), "no limit is set"),
        (
            lambda: RelayConfig(clients=[ALICE, Client("alice", "another-token-0123456")]),
            "repeated: alice",
        ),
        (
            lambda: RelayConfig(clients=[ALICE, Client("eve", ALICE.token)]),
            "clients alice, eve have the same token",
        ),
        (lambda: RelayConfig(token=ALICE.token, clients=[ALICE]), "has the relay's shared token"),
        (lambda: RelayConfig(client_secret="short"), "at least 32 characters"),
        (lambda: RelayConfig(metrics="public"), "metrics 'public' is not one of"),
        (lambda: RelayConfig(trusted_proxies=["proxy.lan"]), "trusted proxy 'proxy.lan'"),
        (lambda: Client("a b", "a-long-enough-token-123"), "client id 'a b' is not allowed"),
        (lambda: Client("a", "short"), "at least 16 characters"),
    ],
)
def test_bad_limit_and_client_settings_are_refused(
    make: Callable[[], object], complaint: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        make()

    assert complaint in str(raised.value)
    assert ALICE.token not in str(raised.value)
