"""A relay tool call whose browser goes away (its cell interrupted, its ask stopped):
the relay closes its own request to the tool's endpoint at once, rather than waiting
for the tool's time limit, and counts the call as cancelled. The endpoint is real, on
loopback, and says when its caller closed the connection."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from reckon.server import RelayTool
from support import Relay
from support._tool_endpoint import Endpoint, an_orders_endpoint

from .test_metrics import scrape

TOOL_TIMEOUT = 30.0


@pytest.fixture(scope="module")
def an_endpoint() -> Iterator[Endpoint]:
    with an_orders_endpoint() as endpoint:
        yield endpoint


@pytest.fixture
def relay(a_relay_with: Callable[..., Relay], an_endpoint: Endpoint) -> Relay:
    an_endpoint.seen.clear()
    an_endpoint.hung.clear()
    tools = [
        RelayTool(**an_endpoint.tool("hang", "/hang", timeout=TOOL_TIMEOUT)),
        RelayTool(**an_endpoint.tool("get_orders", "/orders")),
    ]
    return a_relay_with(tools=tools)


def until(check: Callable[[], bool], deadline_s: float = 10.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.02)


def test_a_caller_that_leaves_ends_the_call_to_the_endpoint(
    relay: Relay, an_endpoint: Endpoint
) -> None:
    left = None
    with (
        relay.client() as client,
        pytest.raises(httpx.ReadTimeout),
    ):
        try:
            # The client gives up after half a second: httpx closes the connection.
            client.post(
                "/api/tools/call", json={"name": "hang"}, timeout=httpx.Timeout(10, read=0.5)
            )
        finally:
            left = time.monotonic()

    until(lambda: len(an_endpoint.hung) == 1)
    closed_after = an_endpoint.hung[0]
    assert closed_after is not None  # the endpoint saw its caller go, rather than its own limit
    # Its request was open for about the half second the browser waited, far from 30 s.
    assert 0.3 < closed_after < 3.0, closed_after
    assert time.monotonic() - left < 3.0
    until(
        lambda: scrape(relay).get('reckon_tool_calls_total{tool="hang",outcome="cancelled"}') == 1
    )
    seen = scrape(relay)
    assert 0.3 < seen['reckon_tool_seconds_total{tool="hang"}'] < 3.0
    # The relay goes on: its limits' places were given back, the next call is answered.
    with relay.client() as client:
        answer = client.post("/api/tools/call", json={"name": "get_orders", "args": {"month": 4}})
    assert answer.json() == {
        "status": "ok",
        "result": [{"id": 3, "month": 4, "amount": 42, "customer": "Cy"}],
    }


def test_a_caller_that_stays_gets_the_tools_own_time_limit_as_data(
    a_relay_with: Callable[..., Relay], an_endpoint: Endpoint
) -> None:
    # Over httpx's default of 5 s, which once cut every tool call there.
    an_endpoint.hung.clear()
    relay = a_relay_with(tools=[RelayTool(**an_endpoint.tool("hang", "/hang", timeout=6.0))])

    with relay.client() as client:
        answer = client.post("/api/tools/call", json={"name": "hang"}, timeout=20).json()

    assert answer == {
        "status": "error",
        "code": "timeout",
        "error": "hang did not answer within 6 s (its time limit); "
        "try again later, or ask for less",
    }
    # Cut by the relay at the tool's limit: the endpoint sees its caller close then.
    until(lambda: len(an_endpoint.hung) == 1)
    closed_after = an_endpoint.hung[0]
    assert closed_after is not None and 5.8 < closed_after < 8.0, closed_after
