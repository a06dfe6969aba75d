"""Relay tools on ``GET /metrics``: calls by configured tool and outcome, and the seconds
their endpoints took, against a real relay and a real endpoint on loopback. A name that
no tool has (whatever a caller writes) never becomes a label."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from reckon.server import Limits, RelayTool
from support import Relay
from support._tool_endpoint import Endpoint, an_orders_endpoint

from .test_metrics import scrape

MONTH = {
    "type": "object",
    "properties": {"month": {"type": "integer", "minimum": 1, "maximum": 12}},
    "required": ["month"],
}
# What a hostile caller might put in a tool's name: it must not reach /metrics.
FORGED = 'sk-live-0123456789"} evil{x="'


@pytest.fixture(scope="module")
def an_endpoint() -> Iterator[Endpoint]:
    with an_orders_endpoint() as endpoint:
        yield endpoint


def tools_of(endpoint: Endpoint) -> list[RelayTool]:
    return [
        RelayTool(**endpoint.tool("get_orders", "/orders", parameters=MONTH)),
        RelayTool(**endpoint.tool("slow", "/slow", timeout=1.0)),
        RelayTool(**endpoint.tool("fail", "/fail")),
        RelayTool(**endpoint.tool("huge", "/huge", max_result_bytes=100_000)),
        RelayTool(**endpoint.tool("never_called", "/orders")),
    ]


def call(relay: Relay, body: Any) -> int:
    with relay.client() as client:
        response = client.post("/api/tools/call", json=body)
    return response.status_code


def tool_samples(relay: Relay) -> dict[str, float]:
    return {k: v for k, v in scrape(relay).items() if k.startswith("reckon_tool_")}


def test_calls_are_counted_by_tool_and_outcome_with_their_seconds(
    a_relay_with: Callable[..., Relay], an_endpoint: Endpoint
) -> None:
    # Six calls reach the limits (the refused ones before them never do): the sixth is refused.
    relay = a_relay_with(tools=tools_of(an_endpoint), limits=Limits(requests_per_minute=5))
    statuses = [
        call(relay, {"name": "get_orders", "args": {"month": 3}}),
        call(relay, {"name": "get_orders", "args": {"month": 4}}),
        call(relay, {"name": "get_orders", "args": {"month": 13}}),  # bad arguments
        call(relay, {"name": FORGED, "args": {}}),  # no such tool
        call(relay, {"args": {}}),  # no name at all
        call(relay, {"name": "fail"}),
        call(relay, {"name": "slow"}),  # cut at its 1 s
        call(relay, {"name": "huge"}),  # answers over its max_result_bytes
        call(relay, {"name": "get_orders", "args": {"month": 3}}),  # refused: over the limit
    ]

    assert statuses == [200] * 8 + [429]
    seen = tool_samples(relay)
    calls = {k: v for k, v in seen.items() if k.startswith("reckon_tool_calls_total") and v}
    assert calls == {
        'reckon_tool_calls_total{tool="get_orders",outcome="ok"}': 2,
        'reckon_tool_calls_total{tool="get_orders",outcome="refused"}': 2,
        'reckon_tool_calls_total{tool="(unknown)",outcome="refused"}': 2,
        'reckon_tool_calls_total{tool="fail",outcome="error"}': 1,
        'reckon_tool_calls_total{tool="slow",outcome="timeout"}': 1,
        'reckon_tool_calls_total{tool="huge",outcome="error"}': 1,
    }
    assert 1.0 <= seen['reckon_tool_seconds_total{tool="slow"}'] < 5
    assert 0 < seen['reckon_tool_seconds_total{tool="get_orders"}'] < 2
    # Every configured tool is there from the start, at zero; its outcomes are a fixed list.
    assert seen['reckon_tool_seconds_total{tool="never_called"}'] == 0
    assert {k for k in seen if k.startswith('reckon_tool_calls_total{tool="never_called"')} == {
        f'reckon_tool_calls_total{{tool="never_called",outcome="{outcome}"}}'
        for outcome in ("ok", "error", "refused", "timeout", "cancelled")
    }
    # The routes are counted by name, not as "other_api".
    requests = scrape(relay)
    assert requests['reckon_requests_total{route="/api/tools/call",status="200"}'] == 8
    assert requests['reckon_requests_total{route="/api/tools/call",status="429"}'] == 1


def test_a_forged_tool_name_never_becomes_a_label(
    a_relay_with: Callable[..., Relay], an_endpoint: Endpoint
) -> None:
    relay = a_relay_with(tools=tools_of(an_endpoint))
    for name in (FORGED, "x" * 5000, "get_orders\n", "GET_ORDERS"):
        assert call(relay, {"name": name}) == 200

    with relay.client() as client:
        text = client.get("/metrics").text

    assert "sk-live" not in text and "evil" not in text and "xxxx" not in text
    assert 'reckon_tool_calls_total{tool="(unknown)",outcome="refused"} 4' in text.splitlines()
    tools = {
        line.split('tool="')[1].split('"')[0] for line in text.splitlines() if 'tool="' in line
    }
    assert tools == {"get_orders", "slow", "fail", "huge", "never_called", "(unknown)"}


def test_a_relay_without_tools_shows_no_tool_series(a_relay: Relay) -> None:
    seen = tool_samples(a_relay)

    assert seen == {}
    with a_relay.client() as client:
        text = client.get("/metrics").text
    # The families are described all the same, so a dashboard finds them.
    assert "# TYPE reckon_tool_calls_total counter" in text
    assert "# TYPE reckon_tool_seconds_total counter" in text
