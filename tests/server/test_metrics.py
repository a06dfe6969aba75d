"""``GET /metrics``: counts exactly what the relay did, and names nothing secret."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from reckon.server import Client, Limits, mint_token
from support import KEY_ENV, MODEL, THE_KEY, Relay, Script

HELLO = [{"role": "user", "content": "a secret prompt about payroll"}]
ALICE = Client("alice", "alice-metrics-token-0123456")
SECRET = "metrics-test-signing-secret-0123456789abcdef"
SAMPLE = re.compile(r"^([a-z_]+)(?:\{(.*)\})? (\S+)$")


def samples(text: str) -> dict[str, float]:
    """Every sample line as ``name{labels}`` -> value; checks the exposition format too."""
    found: dict[str, float] = {}
    described: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            described.add(line.split()[2])
            continue
        if line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, f"not an exposition line: {line!r}"
        name, labels, value = match.groups()
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in described or base in described, f"{name} has no # TYPE line"
        found[f"{name}{{{labels}}}" if labels else name] = float(value)
    return found


def scrape(relay: Relay, **headers: str) -> dict[str, float]:
    with relay.client() as client:
        response = client.get("/metrics", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return samples(response.text)


def test_requests_tokens_errors_and_latency_are_counted_exactly(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with()
    with relay.client() as client:
        for _ in range(2):
            client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})
        client.post("/v1/chat/completions", content=b"{not json")
        client.post("/v1/chat/completions", json={"model": "gpt-9", "messages": HELLO})
        client.get("/v1/models")
        client.get("/api/info", headers={"Origin": "https://evil.example"})
        relay.upstream.script = Script(break_after=3)
        client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": HELLO, "stream": True}
        )

    seen = scrape(relay)

    assert seen['reckon_requests_total{route="/v1/chat/completions",status="200"}'] == 3
    assert seen['reckon_requests_total{route="/v1/chat/completions",status="400"}'] == 1
    assert seen['reckon_requests_total{route="/v1/chat/completions",status="404"}'] == 1
    assert seen['reckon_requests_total{route="/v1/models",status="200"}'] == 1
    assert seen['reckon_requests_total{route="/api/info",status="403"}'] == 1
    # Two whole answers with usage 3 + 5; the stream cut after its second delta is estimated.
    assert seen['reckon_tokens_total{kind="prompt",source="reported"}'] == 6
    assert seen['reckon_tokens_total{kind="completion",source="reported"}'] == 10
    # "assistant" "Hel" "lo": 14 bytes of text, 7 tokens at one per two bytes.
    assert seen['reckon_tokens_total{kind="completion",source="estimated"}'] == 7
    assert seen['reckon_errors_total{kind="invalid_request_error"}'] == 1
    assert seen['reckon_errors_total{kind="model_not_found"}'] == 1
    assert seen['reckon_errors_total{kind="permission_error"}'] == 1
    assert seen['reckon_errors_total{kind="upstream_error"}'] == 1  # mid-stream
    assert seen['reckon_upstream_latency_seconds_count{profile="local"}'] == 3
    assert seen['reckon_upstream_latency_seconds_bucket{profile="local",le="+Inf"}'] == 3
    assert seen["reckon_model_calls_in_flight"] == 0


def test_limit_refusals_are_counted_by_limit(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(limits=Limits(requests_per_minute=2))
    with relay.client() as client:
        statuses = [
            client.post(
                "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}
            ).status_code
            for _ in range(5)
        ]

    seen = scrape(relay)

    assert statuses == [200, 200, 429, 429, 429]
    assert seen['reckon_limit_refusals_total{limit="requests_per_minute"}'] == 3
    assert seen['reckon_errors_total{kind="rate_limit_error"}'] == 3
    assert seen['reckon_requests_total{route="/v1/chat/completions",status="429"}'] == 3


def test_metrics_need_the_token_like_the_api(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(token="shared-token-1234")
    with relay.client() as client:
        refused = client.get("/metrics")

    assert refused.status_code == 401
    seen = scrape(relay, Authorization="Bearer shared-token-1234")
    assert seen['reckon_requests_total{route="/metrics",status="401"}'] == 1


@pytest.mark.parametrize(("mode", "status"), [("open", 200), ("off", 404)])
def test_metrics_can_be_open_or_off(
    a_relay_with: Callable[..., Relay], mode: str, status: int
) -> None:
    relay = a_relay_with(token="shared-token-1234", metrics=mode)
    with relay.client() as client:
        response = client.get("/metrics")
        foreign = client.get("/metrics", headers={"Origin": "https://evil.example"})

    assert response.status_code == status
    assert foreign.status_code == 403  # the Host and Origin checks still apply


def test_no_prompt_key_path_model_name_or_token_reaches_the_metrics(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(clients=[ALICE], client_secret=SECRET, limits=Limits(tokens_per_day=10**6))
    signed = mint_token("bob@example.org", SECRET, ttl=60)
    error_with_key = json.dumps({"error": {"type": THE_KEY, "message": f"bad {THE_KEY}"}})
    with relay.client() as client:
        for token in (ALICE.token, signed, "wrong-token-0123456789"):
            auth = {"Authorization": f"Bearer {token}"}
            client.post(
                "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=auth
            )
            client.post(
                "/v1/chat/completions", json={"model": THE_KEY, "messages": HELLO}, headers=auth
            )
            client.get(f"/v1/{THE_KEY}", headers=auth)
            client.get(f"/{token}")
        relay.upstream.script = Script(status=400, body=error_with_key.encode())
        client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": HELLO},
            headers={"Authorization": f"Bearer {ALICE.token}"},
        )
        text = client.get("/metrics", headers={"Authorization": f"Bearer {signed}"}).text

    for secret in (THE_KEY, ALICE.token, signed, SECRET, "payroll", "alice", "bob", KEY_ENV):
        assert secret not in text, secret
    seen = samples(text)
    assert seen['reckon_requests_total{route="other_api",status="404"}'] == 2
    assert seen['reckon_errors_total{kind="other"}'] == 1  # the upstream's odd error type
