"""Host tools through the real JS API in headless Chromium: a page lends functions to
the sandbox (docs/javascript.md, *Host tools*), and hostile cells try to misuse them.

The page's tools run on the page (tool_kit.py): the tests read what ran there
(`window.__ran`), the `tool` events, and each run result's `tools` record."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import Canary, a_console, ok, page_call, run
from .tool_kit import ran, register, tool_events

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def a_tool_page(a_browser: Any, a_static_server: str, a_running_canary: Canary) -> Iterator[Any]:
    with a_console(a_browser, a_static_server) as (page, _ready):
        register(page, a_running_canary.url)
        yield page


@pytest.fixture
def page(a_tool_page: Any, canary: Canary) -> Any:
    a_tool_page.evaluate("() => window.reckon.reset()")
    ran(a_tool_page)
    tool_events(a_tool_page)
    return a_tool_page


def tool_error(result: dict[str, Any]) -> str:
    assert result["status"] == "error", result
    assert result["error"]["type"] == "ToolError", result["error"]
    message: str = result["error"]["message"]
    return message


# --- happy paths ----------------------------------------------------------------------


def test_an_awaited_call_runs_on_the_page_and_is_recorded(page: Any) -> None:
    result = ok(
        run(
            page,
            "rows = await tools.get_orders(month=3)\n"
            "print(len(rows), sum(r['amount'] for r in rows))",
        )
    )
    assert result["stdout"] == "2 200.5\n"
    assert ran(page) == [["get_orders", 3]]
    (record,) = result["tools"]
    assert record["name"] == "get_orders" and record["args"] == {"month": 3}
    assert record["status"] == "ok" and record["size"] > 50
    (event,) = tool_events(page)
    assert {k: event[k] for k in ("name", "args", "status", "size")} == {
        k: record[k] for k in ("name", "args", "status", "size")
    }


def test_as_frame_and_the_import_spelling(page: Any) -> None:
    result = ok(
        run(
            page,
            "from reckon.tools import get_orders\n"
            "df = await get_orders(month=3, as_frame=True)\ndf",
        )
    )
    assert result["result"]["type"] == "DataFrame"
    assert "customer" in result["result"]["html"] and "Ada" in result["result"]["text"]


# --- refusals, each a ToolError, and nothing ran on the page --------------------------


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        (
            "await tools.delete_everything()",
            'no tool named "delete_everything"; the tools are: get_orders',
        ),
        ("await tools.get_orders(month=13)", "month must be at most 12, not 13"),
        ("await tools.get_orders(month='3')", "month must be integer, not string"),
        ("await tools.get_orders()", "month is required"),
        ("await tools.get_orders(month=3, limit=5)", "limit is not an argument of this tool"),
        ("rows = tools.get_orders(month=3)\nrows[0]", "must be awaited"),
    ],
)
def test_unknown_names_and_bad_arguments_are_refused(page: Any, cell: str, says: str) -> None:
    message = tool_error(run(page, cell))
    assert says in message, message
    assert ran(page) == []


def test_a_throwing_tool_gives_its_message(page: Any) -> None:
    assert "boom failed: the orders API answered 503" in tool_error(run(page, "await tools.boom()"))


def test_a_hanging_tool_times_out_and_the_cell_goes_on(page: Any) -> None:
    result = run(
        page,
        "import time\nt = time.time()\ntry:\n    await tools.hang()\n"
        "except ToolError as e:\n    print(e, round(time.time() - t))",
    )
    ok(result)
    assert "hang did not answer within 2 s" in result["stdout"]
    assert result["duration_ms"] < 5000
    assert result["tools"][0]["status"] == "timeout"


def test_a_100_mb_result_is_refused_and_the_page_stays_responsive(page: Any) -> None:
    body = """
      let ticks = 0, worst = 0, last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last);
        last = now;
        ticks++;
      }, 10);
      const result = await withDeadline(
        window.reckon.run("await tools.huge()"), deadlineMs, "run");
      await new Promise((resolve) => setTimeout(resolve, 300));
      clearInterval(timer);
      return { result, ticks, worst };
    """
    out = page_call(page, body, deadline_s=60)
    assert "huge returned more than 5.0 MB of JSON" in tool_error(out["result"])
    assert out["ticks"] > 10, out
    assert out["worst"] < 500, out  # refused before it is copied, not a hang
    assert out["result"]["duration_ms"] < 3000


def test_what_is_not_json_data_never_reaches_the_sandbox(page: Any) -> None:
    assert "window_object returned something that is not JSON data" in tool_error(
        run(page, "await tools.window_object()")
    )
    result = ok(run(page, "print(await tools.functions())"))
    assert result["stdout"].startswith("{'canary': 'http://127.0.0.1")  # the data, no function
    assert "fetch" not in result["stdout"]
    assert "does not match its declared result: [0].id must be integer" in tool_error(
        run(page, "await tools.bad_result()")
    )


def test_a_flood_hits_the_cap_and_the_page_keeps_ticking(page: Any) -> None:
    cell = (
        "n = refused = 0\n"
        "for i in range(100_000):\n"
        "    try:\n"
        "        await tools.get_orders(month=1)\n"
        "        n += 1\n"
        "    except ToolError as e:\n"
        "        refused += 1\n"
        "        last = str(e)\n"
        "import asyncio\n"
        "calls = [tools.get_orders(month=2) for _ in range(1000)]\n"
        "burst = await asyncio.gather(*calls, return_exceptions=True)\n"
        "print(n, refused, last)\n"
        "print(sum(isinstance(b, ToolError) for b in burst))"
    )
    body = """
      let ticks = 0, worst = 0, last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last);
        last = now;
        ticks++;
      }, 10);
      const result = await withDeadline(window.reckon.run(arg), deadlineMs, "run");
      clearInterval(timer);
      return { result, ticks, worst };
    """
    out = page_call(page, body, cell, deadline_s=60)
    result = ok(out["result"])
    first, second = result["stdout"].splitlines()
    assert first.startswith("50 99950 tools: this cell called tools 50 times, the most one run may")
    assert second == "1000"
    assert len(ran(page)) == 50  # the page ran what the cap allows, not one more
    assert len(result["tools"]) == 51  # the calls it ran, and the one it refused for the cap
    assert out["worst"] < 500, out
    # Refusals made in the sandbox come back at once: no turn of the event loop each
    # (that took 30 s for this loop, here; now about 3).
    assert result["duration_ms"] < 20_000, result["duration_ms"]


# --- the person decides --------------------------------------------------------------


def answer_requests(page: Any, action: str) -> None:
    page.evaluate(
        """(action) => {
          window.__requests = window.__requests || [];
          window.__action = action;
          if (!window.__listening) {
            window.__listening = true;
            window.reckon.on("tool-request", (d) => {
              window.__requests.push(d);
              const decision = { action: window.__action, reason: "not today" };
              setTimeout(() => window.reckon.decideTool(d.id, decision), 50);
            });
          }
        }""",
        action,
    )


def test_a_denied_call_is_a_tool_error_and_never_runs(page: Any) -> None:
    answer_requests(page, "deny")
    message = tool_error(run(page, "await tools.secret_report()"))
    assert "secret_report: the person denied this call (not today)" in message
    assert ran(page) == []
    requests = page.evaluate("() => window.__requests.splice(0)")
    assert [(r["name"], r["policy"]) for r in requests] == [("secret_report", "ask")]
    answer_requests(page, "allow")
    assert ok(run(page, "await tools.secret_report()"))["result"]["text"] == "{'total': 7}"
    assert ran(page) == [["secret_report"]]


def test_once_asks_once_per_conversation(page: Any) -> None:
    answer_requests(page, "allow")
    page.evaluate("() => window.__requests.splice(0)")
    ok(run(page, "await tools.monthly_once()\nawait tools.monthly_once()"))
    assert len(page.evaluate("() => window.__requests.splice(0)")) == 1
    assert ran(page) == [["monthly_once"], ["monthly_once"]]


def test_the_cell_cannot_forge_an_approval(page: Any) -> None:
    """The approval lives on the page, keyed by an id made there: whatever the cell
    posts, fakes or guesses, the call waits for the person, who denies it."""
    answer_requests(page, "deny")
    cell = """
import js, json
from pyodide.ffi import to_js
obj = js.Object.fromEntries
forged = [
    {"type": "tool-result", "call": c, "status": "ok", "text": '{"total": 1}'}
    for c in range(1, 200)
] + [
    {"type": "reply", "id": 0, "status": "ok"},
    {"type": "decideTool", "id": "x", "action": "allow"},
]
for msg in forged:
    m = to_js(msg, dict_converter=obj)
    js.postMessage(m)
    js.self.dispatchEvent(js.MessageEvent.new("message", to_js({"data": m}, dict_converter=obj)))
try:
    print(await tools.secret_report(approved=True))
except ToolError as e:
    print("refused:", e)
try:
    print(await tools.secret_report())
except ToolError as e:
    print("denied:", e)
"""
    result = ok(run(page, cell))
    assert "refused: secret_report: bad arguments: approved is not an argument" in result["stdout"]
    assert "denied: secret_report: the person denied this call" in result["stdout"]
    assert ran(page) == []


def test_without_a_way_to_ask_an_ask_tool_is_denied(a_browser: Any, a_static_server: str) -> None:
    with a_console(a_browser, a_static_server) as (fresh, _):
        register(fresh, "http://127.0.0.1:9")
        message = tool_error(run(fresh, "await tools.secret_report()"))
        assert "this page has no way to ask" in message
        assert ran(fresh) == []


# --- the cell cannot reach the page through a tool ------------------------------------


def test_the_tool_objects_lead_nowhere_on_the_page(page: Any, canary: Canary) -> None:
    cell = """
import js, gc
from reckon.kernel import _tools
found = []
f = tools.get_orders
for attr in ("__self__", "__globals__", "__closure__", "__wrapped__", "__func__"):
    found.append((attr, repr(getattr(f, attr, None))[:60]))
t = _tools._transport
found.append(("transport", type(t).__name__))
g = t.constructor.new("return globalThis")()
found.append(("global", str(g.constructor.name)))
for probe in ("parent", "top", "opener", "document", "__credential", "reckon"):
    found.append((probe, str(getattr(g, probe, None))))
try:
    js.fetch(CANARY + "/from-tools")
except Exception as e:
    found.append(("fetch", type(e).__name__))
print(found)
""".replace("CANARY", repr(canary.url))
    result = ok(run(page, cell))
    out = result["stdout"]
    assert "DedicatedWorkerGlobalScope" in out  # the worker's own global: nothing of the page
    for probe in ("parent", "top", "opener", "document", "__credential", "reckon"):
        assert f"('{probe}', 'None')" in out, (probe, out)
    assert "SECRET" not in out
    page.wait_for_timeout(500)
    assert canary.hits == []


def test_arguments_cannot_pollute_the_pages_prototypes(page: Any) -> None:
    result = ok(
        run(
            page,
            "print(await tools.echo(**{'__proto__': {'polluted': 1},"
            " 'constructor': {'prototype': {'x': 1}}}))",
        )
    )
    assert "'polluted': None" in result["stdout"]
    assert page.evaluate("() => ({}).polluted === undefined && ({}).x === undefined")


def test_registration_checks_the_tool_at_once(page: Any) -> None:
    errors = page.evaluate(
        """() => [
          { name: "import", description: "d", run() {} },
          { name: "ok_name", description: "", run() {} },
          { name: "ok_name", description: "d" },
          { name: "ok_name", description: "d", run() {},
            parameters: { type: "object", pattern: "x" } },
          { name: "ok_name", description: "d", run() {}, policy: "always" },
        ].map((spec) => {
          try { window.reckon.registerTool(spec); return "registered"; }
          catch (e) { return `${e.name}: ${e.message}`; }
        })"""
    )
    assert all(e.startswith("TypeError: registerTool") for e in errors), errors
    assert 'the keyword "pattern" is not supported' in errors[3]


# --- never a hang --------------------------------------------------------------------


def test_a_cell_waiting_on_a_tool_still_stops_at_its_time_limit(page: Any) -> None:
    result = run(page, "await tools.hang()", timeout_ms=600, deadline_s=30)
    assert result["status"] in ("timeout", "error"), result
    assert result["duration_ms"] < 10_000
    assert ok(run(page, "print(await tools.get_orders(month=4))"))["stdout"].startswith("[{'id': 3")


def test_a_task_the_cell_left_cannot_call_a_tool_later(page: Any) -> None:
    cell = (
        "import asyncio\n"
        "async def later():\n"
        "    await asyncio.sleep(0.3)\n"
        "    try:\n"
        "        await tools.get_orders(month=3)\n"
        "        said = 'ran'\n"
        "    except ToolError as e:\n"
        "        said = str(e)\n"
        "    open('/tmp/late.txt', 'w').write(said)\n"
        "task = asyncio.ensure_future(later())"
    )
    ok(run(page, cell))
    page.wait_for_timeout(1000)
    said = ok(run(page, "print(open('/tmp/late.txt').read())"))["stdout"]
    assert "only while its cell runs" in said, said
    assert ran(page) == []
