"""Relay tools in the browser: `reckon serve --config` names an HTTP endpoint as a tool,
and a cell on the static site the relay serves calls it like a page's host tool (asked
through the agent worker, the only browser context that talks to the relay), with the
same checks, policies and records (docs/configuration.md, *Relay tools*). A call whose
cell is interrupted, or whose ask is stopped, ends at the tool's endpoint too."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from support import reckon_serve
from support._tool_endpoint import SECRET, SECRET_ENV, Endpoint, an_orders_endpoint

from .helpers import a_chat_page_with, ok, run

pytestmark = pytest.mark.browser

HANG_LIMIT_S = 30  # the hanging tool's time limit: the ends below come long before it
CANCELLED = "hang: cancelled, its cell ended first (interrupted, stopped or out of time)"


@pytest.fixture(scope="module")
def an_endpoint() -> Iterator[Endpoint]:
    with an_orders_endpoint() as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def a_relay_with_tools(
    an_endpoint: Endpoint, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    config = tmp_path_factory.mktemp("relay") / "relay.toml"
    config.write_text(
        f"""
[[tool]]
name = "get_orders"
description = "The shop's orders of one month: id, month, amount, customer."
url = "{an_endpoint.url}/orders"
[tool.parameters]
type = "object"
required = ["month"]
additionalProperties = false
properties.month = {{ type = "integer", minimum = 1, maximum = 12 }}
[tool.secret_headers]
X-Api-Key = "{SECRET_ENV}"

[[tool]]
name = "failing"
description = "An endpoint that is down."
url = "{an_endpoint.url}/fail"

[[tool]]
name = "guarded"
description = "Needs the person's approval."
url = "{an_endpoint.url}/orders"
policy = "ask"

[[tool]]
name = "hang"
description = "Never answers while its caller waits."
url = "{an_endpoint.url}/hang"
timeout = {HANG_LIMIT_S}
""",
        encoding="utf-8",
    )
    with reckon_serve("--config", str(config), env={SECRET_ENV: SECRET}) as served:
        yield served.url


@pytest.fixture(scope="module")
def a_page(a_browser: Any, a_relay_with_tools: str) -> Iterator[Any]:
    # The chat page: its createReckon() has an agent (console.html has none, so no relay tools).
    with a_chat_page_with(a_browser, a_relay_with_tools, "a,b\n1,2\n") as page:
        page.evaluate(
            "() => { window.__tools = []; "
            "window.reckon.on('tool', (d) => window.__tools.push(d)); }"
        )
        yield page


@pytest.fixture
def page(a_page: Any, an_endpoint: Endpoint) -> Any:
    an_endpoint.seen.clear()
    an_endpoint.hung.clear()
    a_page.evaluate("() => window.__tools.splice(0)")
    return a_page


def test_a_cell_calls_a_relay_tool_and_gets_the_rows(page: Any, an_endpoint: Endpoint) -> None:
    result = ok(
        run(
            page,
            "rows = await tools.get_orders(month=3)\n"
            "df = await tools.get_orders(month=3, as_frame=True)\n"
            "print(len(rows), sum(r['amount'] for r in rows), list(df.customer))",
        )
    )

    assert result["stdout"] == "2 200.5 ['Ada', 'Bo']\n"
    # The relay forwarded both calls with its secret header; the browser never held it.
    assert [seen["headers"]["x-api-key"] for seen in an_endpoint.seen] == [SECRET, SECRET]
    first = result["tools"][0]
    assert (
        first["name"] == "get_orders" and first["args"] == {"month": 3} and first["status"] == "ok"
    )
    events = page.evaluate("() => window.__tools.splice(0)")
    assert [e["status"] for e in events] == ["ok", "ok"]
    listed = page.evaluate("() => window.reckon.tools()")
    mine = next(t for t in listed if t["name"] == "get_orders")
    assert mine["relay"] is True and mine["policy"] == "run"
    assert (
        SECRET not in str(listed)
        and an_endpoint.url not in str(listed)
        and SECRET not in str(result)
    )


def test_bad_arguments_and_a_failing_endpoint_are_tool_errors(
    page: Any, an_endpoint: Endpoint
) -> None:
    result = ok(
        run(
            page,
            "for call in (lambda: tools.get_orders(month=13), lambda: tools.failing()):\n"
            "    try:\n"
            "        await call()\n"
            "    except ToolError as e:\n"
            "        print(e)",
        )
    )

    lines = result["stdout"].splitlines()
    assert "month must be at most 12, not 13" in lines[0]
    assert lines[1].endswith("failing failed: its endpoint answered HTTP 500: database down")
    assert [seen["path"] for seen in an_endpoint.seen] == ["/fail"]  # the bad call went nowhere


def test_a_relay_tools_policy_holds_in_the_browser(page: Any, an_endpoint: Endpoint) -> None:
    # The person answers each request: the first denied, the second allowed.
    page.evaluate(
        "() => { window.__asked = []; window.reckon.on('tool-request', (r) => { "
        "window.__asked.push(r.name); window.reckon.decideTool(r.id, "
        "window.__asked.length === 1 ? {action: 'deny', reason: 'not today'} "
        ": {action: 'allow'}); }); }"
    )
    result = ok(
        run(
            page,
            "try:\n    await tools.guarded()\nexcept ToolError as e:\n    print(e)\n"
            "print(await tools.guarded())",
        )
    )

    denied, allowed = result["stdout"].splitlines()
    assert denied == (
        "guarded: the person denied this call (not today); do not call it again for this question"
    )
    assert allowed == "[]" and page.evaluate("() => window.__asked") == ["guarded", "guarded"]
    assert len(an_endpoint.seen) == 1  # only the allowed call reached the endpoint
    assert [r["status"] for r in result["tools"]] == ["denied", "ok"]


def test_a_page_tool_of_the_same_name_wins(page: Any, an_endpoint: Endpoint) -> None:
    page.evaluate(
        "() => window.reckon.registerTool({name: 'get_orders', description: 'the page', "
        "parameters: {type: 'object', properties: {month: {type: 'integer'}}}, "
        "run: () => ['page']})"
    )
    try:
        shadowed = ok(run(page, "print(await tools.get_orders(month=3))"))
        names = page.evaluate("() => window.reckon.tools().map((t) => [t.name, Boolean(t.relay)])")
    finally:
        page.evaluate("() => window.reckon.unregisterTool('get_orders')")
    again = ok(run(page, "print(len(await tools.get_orders(month=4)))"))

    assert shadowed["stdout"] == "['page']\n" and names.count(["get_orders", False]) == 1
    assert ["get_orders", True] not in names
    assert again["stdout"] == "1\n" and len(an_endpoint.seen) == 1


def until(check: Any, deadline_s: float = 20.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.05)


def test_a_relay_call_in_flight_ends_at_its_endpoint_when_the_cell_does(
    page: Any, an_endpoint: Endpoint
) -> None:
    # (An ask stopped interrupts its cell the same way: test_relay_tools_agent.py.)
    page.evaluate("() => { window.__run = window.reckon.run('await tools.hang()'); }")
    until(lambda: [s["path"] for s in an_endpoint.seen] == ["/hang"])  # the call is in flight
    asked = time.monotonic()
    page.evaluate("() => window.reckon.interrupt()")
    result = page.evaluate("() => window.__run")
    until(lambda: len(an_endpoint.hung) == 1)
    noticed = time.monotonic() - asked

    # The endpoint saw its caller (the relay) close the request within seconds of the
    # interrupt, not at the tool's 30 s limit: the worker's fetch was aborted, and the
    # relay stopped its own call when the browser's connection closed.
    closed_after = an_endpoint.hung[0]
    assert closed_after is not None and closed_after < 10, closed_after
    assert noticed < 5, noticed
    # The cell ends as any interrupted cell does, at once (not at the watchdog's restart).
    error = result["error"]
    assert (result["status"], error["type"], error["message"]) == (
        "interrupted",
        "KeyboardInterrupt",
        "Execution interrupted",
    ), result
    assert result["duration_ms"] < 5000 and not result["restarted"], result
    until(lambda: page.evaluate("() => window.__tools.length") > 0)
    events = page.evaluate("() => window.__tools.splice(0)")
    assert [(e["name"], e["status"]) for e in events] == [("hang", "error")]
    assert events[0]["message"] == CANCELLED
    # The page, the worker and the relay go on: the next call is answered.
    again = ok(run(page, "print(len(await tools.get_orders(month=3)))"))
    assert again["stdout"] == "2\n"


def test_without_await_a_relay_tool_answers_at_once_and_ends_with_its_cell(
    page: Any, an_endpoint: Endpoint
) -> None:
    # `reckon serve` sends COOP/COEP: the frame is cross-origin isolated, so a call made
    # without await waits for its value (PROTOCOL.md §3, *Host tools*).
    result = ok(
        run(page, "rows = tools.get_orders(month=3)\nprint(len(rows), rows[0]['customer'])")
    )
    assert result["stdout"] == "2 Ada\n"
    assert [seen["headers"]["x-api-key"] for seen in an_endpoint.seen] == [SECRET]
    page.evaluate("() => window.__tools.splice(0)")
    page.evaluate("() => { window.__run = window.reckon.run('tools.hang()'); }")
    until(lambda: [s["path"] for s in an_endpoint.seen][-1:] == ["/hang"])
    page.evaluate("() => window.reckon.interrupt()")
    ended = page.evaluate("() => window.__run")
    assert (ended["status"], ended["error"]["type"]) == ("interrupted", "KeyboardInterrupt")
    assert ended["duration_ms"] < 5000 and not ended["restarted"], ended
    until(lambda: len(an_endpoint.hung) == 1)
    closed_after = an_endpoint.hung[0]
    assert closed_after is not None and closed_after < 10, closed_after
    until(lambda: page.evaluate("() => window.__tools.length") > 0)
    events = page.evaluate("() => window.__tools.splice(0)")
    assert [(e["name"], e["status"], e["message"]) for e in events] == [
        ("hang", "error", CANCELLED)
    ]
    assert ok(run(page, "print(len(tools.get_orders(month=4)))"))["stdout"] == "1\n"
