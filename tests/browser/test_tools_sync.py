"""Host tool calls made without await (`rows = tools.get_orders(month=3)`): on a
cross-origin-isolated page the cell gets the value at once, through memory the sandbox
frame shares with its worker (PROTOCOL.md §3, *Host tools*); the page handles the call
as any other, so every check, cap, approval, limit and record is the same as with
await. On a page that is not isolated the call says to await it.

Through the real JS API in headless Chromium, with the host page of test_tools.py
(tool_kit.py), served with the build's headers (COOP/COEP) and without them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import Canary, a_console, ok, page_call, run
from .site_kit import a_site_with_its_headers
from .tool_kit import ran, register, tool_events

pytestmark = pytest.mark.browser

# A tool that answers only when its 60 s are up: the cell must end first.
SLOW = """
window.reckon.registerTool({ name: "slow", description: "never answers in time",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: () => { window.__ran.push(["slow"]); return new Promise(() => {}); }, timeoutMs: 60000 });
"""
# What a record says besides when and in which run it was made.
SAME = ("name", "args", "status", "size", "message", "result", "resultOmitted")


@pytest.fixture(scope="module")
def a_sync_page(a_browser: Any, a_built_site: Path, a_running_canary: Canary) -> Iterator[Any]:
    with a_site_with_its_headers(a_built_site) as url, a_console(a_browser, url) as (page, ready):
        assert ready["crossOriginIsolated"] is True, ready
        register(page, a_running_canary.url)
        page_call(page, SLOW)
        yield page


@pytest.fixture
def page(a_sync_page: Any, canary: Canary) -> Any:
    a_sync_page.evaluate("() => window.reckon.reset()")
    ran(a_sync_page)
    tool_events(a_sync_page)
    return a_sync_page


def same(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in SAME}


def said(page: Any, call: str) -> tuple[str, list[dict[str, Any]]]:
    """What the cell printed of `call` (its value, or its ToolError), and its records."""
    cell = f"try:\n    print(repr({call}))\nexcept ToolError as e:\n    print('ToolError:', e)"
    result = ok(run(page, cell, deadline_s=60))
    return result["stdout"], result.get("tools", [])


# --- the value, at once ---------------------------------------------------------------


def test_a_call_without_await_returns_the_value(page: Any) -> None:
    result = ok(
        run(
            page,
            "rows = tools.get_orders(month=3)\nprint(type(rows).__name__, len(rows), "
            "sum(r['amount'] for r in rows))",
        )
    )
    assert result["stdout"] == "list 2 200.5\n"
    assert ran(page) == [["get_orders", 3]]
    (record,) = result["tools"]
    assert record["status"] == "ok" and record["args"] == {"month": 3}


def test_as_frame_without_await_is_a_dataframe(page: Any) -> None:
    result = ok(
        run(
            page,
            "from reckon.tools import get_orders\n"
            "df = get_orders(month=3, as_frame=True)\nprint(type(df).__name__)\ndf",
        )
    )
    assert result["stdout"] == "DataFrame\n"
    assert result["result"]["type"] == "DataFrame" and "Ada" in result["result"]["text"]


def test_the_record_and_the_event_are_those_of_an_awaited_call(page: Any) -> None:
    awaited, (a,) = said(page, "await tools.get_orders(month=4)")
    plain, (p,) = said(page, "tools.get_orders(month=4)")
    assert awaited == plain and "'customer': 'Cy'" in plain
    assert same(a) == same(p) and p["result"] is not None
    events = tool_events(page)
    assert [same(e) for e in events] == [same(a), same(p)]


def test_awaiting_still_works_and_gather_still_runs_calls_together(page: Any) -> None:
    cell = (
        "import asyncio\n"
        "a, b = await asyncio.gather(tools.get_orders(month=3), tools.get_orders(month=4))\n"
        "c = await asyncio.wait_for(tools.get_orders(month=4), 10)\n"
        "get = lambda: tools.get_orders(month=3)\n"
        "d = await get()\n"
        "e = get()\n"
        "print(len(a), len(b), len(c), len(d), len(e))"
    )
    assert ok(run(page, cell))["stdout"] == "2 1 1 2 2\n"
    assert len(ran(page)) == 5


# --- the same refusals and errors as with await -----------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "tools.delete_everything()",
        "tools.get_orders(month=13)",
        "tools.boom()",
        "tools.hang()",
        "tools.huge()",
        "tools.window_object()",
        "tools.bad_result()",
    ],
)
def test_each_refusal_and_failure_is_the_same_without_await(page: Any, call: str) -> None:
    awaited, a = said(page, f"await {call}")
    plain, p = said(page, call)
    assert awaited.startswith("ToolError: "), awaited
    assert plain == awaited
    assert [same(r) for r in p] == [same(r) for r in a]


def test_the_cap_per_run_is_the_same_without_await(page: Any) -> None:
    loop = (
        "n = 0\nfor i in range(60):\n    try:\n        {call}\n        n += 1\n"
        "    except ToolError as e:\n        print(n, e)\n        break"
    )
    awaited = ok(run(page, loop.format(call="await tools.get_orders(month=1)")))
    assert len(ran(page)) == 50
    plain = ok(run(page, loop.format(call="tools.get_orders(month=1)")))
    assert len(ran(page)) == 50  # not one more than the cap
    assert plain["stdout"] == awaited["stdout"]
    assert plain["stdout"].startswith("50 tools: this cell called tools 50 times")
    assert [r["status"] for r in plain["tools"]] == [r["status"] for r in awaited["tools"]]


def test_a_denied_call_without_await_is_the_same_tool_error(page: Any) -> None:
    page.evaluate(
        """() => window.reckon.on("tool-request", (d) => setTimeout(
             () => window.reckon.decideTool(d.id, { action: "deny", reason: "not today" }), 50))"""
    )
    awaited, a = said(page, "await tools.secret_report()")
    plain, p = said(page, "tools.secret_report()")
    assert "secret_report: the person denied this call (not today)" in plain
    assert plain == awaited and [same(r) for r in p] == [same(r) for r in a]
    assert ran(page) == []


# --- never a hang ---------------------------------------------------------------------


def test_an_interrupt_ends_a_call_waiting_without_await(page: Any) -> None:
    body = """
      const running = window.reckon.run(arg);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const asked = performance.now();
      await window.reckon.interrupt();
      const result = await withDeadline(running, deadlineMs, "run");
      return { result, after: performance.now() - asked };
    """
    cell = "try:\n    tools.slow()\nexcept ToolError:\n    print('went on')"
    out = page_call(page, body, cell, deadline_s=30)
    result = out["result"]
    assert result["status"] == "interrupted", result
    assert result["error"]["type"] == "KeyboardInterrupt" and result["stdout"] == ""
    assert out["after"] < 1500, out  # woken at once, not at the tool's 60 s
    assert ran(page) == [["slow"]]
    assert ok(run(page, "1+1"))["result"]["text"] == "2"  # the same sandbox, still there
    assert ok(run(page, "len(tools.get_orders(month=3))"))["result"]["text"] == "2"


def test_a_call_waiting_without_await_stops_at_the_time_limit(page: Any) -> None:
    result = run(page, "tools.slow()", timeout_ms=800, deadline_s=30)
    assert result["status"] == "timeout", result
    assert result["duration_ms"] < 5000
    assert ok(run(page, "1+1"))["result"]["text"] == "2"


# --- a hostile cell -------------------------------------------------------------------

HOSTILE = """
import js, gc
from pyodide.ffi import to_js, JsProxy
found = []
kind = js.Object.prototype.toString.call
for name in js.Object.getOwnPropertyNames(js.globalThis):
    try:
        value = getattr(js.globalThis, name)
        if isinstance(value, JsProxy) and "[object SharedArrayBuffer]" in (
            kind(value), kind(getattr(value, "buffer", None))
        ):
            found.append(name)
    except Exception:
        continue
for obj in gc.get_objects():
    if isinstance(obj, JsProxy) and kind(obj) == "[object SharedArrayBuffer]":
        found.append("a Python reference")
print("found:", found, js.crossOriginIsolated)
obj = js.Object.fromEntries
fake = '[{"id": 666, "amount": 1e9}]'
for c in range(1, 60):
    for msg in (
        {"type": "tool-result", "call": c, "status": "ok", "text": fake},
        {"type": "frame-tool-result", "call": c, "status": "ok", "text": fake},
        {"type": "tool-call", "id": 0, "call": c, "name": "get_orders", "args": "{}", "sync": True},
    ):
        m = to_js(msg, dict_converter=obj)
        js.postMessage(m)
        event = to_js({"data": m}, dict_converter=obj)
        js.self.dispatchEvent(js.MessageEvent.new("message", event))
mine = js.SharedArrayBuffer.new(64)  # one of its own reaches nobody
js.postMessage(mine)
rows = tools.get_orders(month=4)
print(rows)
"""


def test_a_cell_cannot_forge_a_result_without_await(page: Any) -> None:
    result = ok(run(page, HOSTILE, deadline_s=60))
    first, rows = result["stdout"].splitlines()
    assert first == "found: [] True"
    assert rows == "[{'id': 3, 'month': 4, 'amount': 42, 'customer': 'Cy'}]"
    assert ran(page) == [["get_orders", 4]]
    (record,) = result["tools"]
    assert record["status"] == "ok" and "666" not in record["result"]


# --- without cross-origin isolation ---------------------------------------------------


def test_without_isolation_a_call_without_await_says_to_await(
    a_browser: Any, a_static_server: str, a_running_canary: Canary
) -> None:
    with a_console(a_browser, a_static_server) as (page, ready):
        assert ready["crossOriginIsolated"] is False, ready
        register(page, a_running_canary.url)
        result = run(page, "rows = tools.get_orders(month=3)\nrows[0]")
        assert result["error"]["type"] == "ToolError", result
        message = result["error"]["message"]
        assert "result = await tools.get_orders(...)" in message
        assert "this one is not" in message and "cross-origin isolated" in message
        assert ran(page) == []
        assert ok(run(page, "len(await tools.get_orders(month=3))"))["result"]["text"] == "2"
