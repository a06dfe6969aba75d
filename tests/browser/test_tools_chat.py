"""Host tools on the chat page: each call is a row where the steps go, and a tool whose
policy asks the person gets an Allow / Deny row whose buttons answer for the page.

The page runs behind `reckon serve` with a scripted model (playlist_kit.py); screenshots
at 1280 and 390 px go to tests/browser/screenshots-tools/ when RECKON_SCREENSHOTS is set."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reckon.reproduce import reproduce_in_sandbox, reproduce_notebook

from .helpers import a_chat_at, no_overflow
from .playlist_kit import Playlist, a_console_page

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("RECKON_SCREENSHOTS")

REGISTER = """() => {
  const orders = [{ id: 1, month: 3, amount: 120.5 }, { id: 2, month: 3, amount: 80 }];
  window.ran = [];
  window.reckon.registerTool({ name: "get_orders", description: "The shop's orders of one month.",
    parameters: { type: "object", required: ["month"],
                  properties: { month: { type: "integer", minimum: 1, maximum: 12 } } },
    run: ({ month }) => {
      window.ran.push("get_orders");
      return orders.filter((o) => o.month === month);
    } });
  window.reckon.registerTool({ name: "refund_total",
    description: "Refunds paid this year (asks first).",
    policy: "ask", run: () => { window.ran.push("refund_total"); return { total: 42.25 }; } });
}"""
CELL = (
    "rows = await tools.get_orders(month=3)\n"
    "refunds = await tools.refund_total()\n"
    "print(sum(r['amount'] for r in rows) - refunds['total'])"
)


@pytest.fixture(scope="module")
def a_tool_chat(a_browser: Any, a_playlist_site: str) -> Iterator[Any]:
    with a_chat_at(a_browser, a_playlist_site) as page:
        page.evaluate(REGISTER)
        yield page


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / name), full_page=False)


def start_ask(page: Any, question: str) -> None:
    page.evaluate(
        "(q) => { window.outcome = null;"
        " window.reckon.ask(q, { model: 'scripted' }).then((o) => (window.outcome = o)); }",
        question,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("width", "action"), [(1280, "Allow"), (390, "Deny")])
def test_a_tool_call_is_a_row_and_the_person_allows_or_denies(
    a_tool_chat: Any, a_playlist: tuple[Playlist, str], width: int, action: str
) -> None:
    page = a_tool_chat
    model, _ = a_playlist
    page.set_viewport_size({"width": width, "height": 900})
    page.evaluate("() => { window.ran = []; }")
    model.queue = [("code", CELL), ("text", "Net of refunds, March comes to 158.25.")]
    start_ask(page, f"March net of refunds ({width})")
    approval = page.locator(".tool-approval:not([data-decision])").last
    approval.wait_for()
    row = page.locator(".turn").last.locator(".tool-call").first
    assert "get_orders" in row.inner_text() and row.get_attribute("data-status") == "ok"
    assert "refund_total" in approval.inner_text()
    assert no_overflow(page)[0] <= width
    shot(page, f"tools-approval-{width}.png")
    assert page.evaluate("() => window.ran") == ["get_orders"]  # nothing before the answer
    approval.get_by_role("button", name=action, exact=True).click()
    page.wait_for_function("() => window.outcome !== null")
    outcome = page.evaluate("() => window.outcome")
    assert outcome["status"] == "ok", outcome
    records = outcome["steps"][0]["result"]["tools"]
    statuses = [(r["name"], r["status"]) for r in records]
    if action == "Allow":
        assert statuses == [("get_orders", "ok"), ("refund_total", "ok")]
        assert outcome["steps"][0]["result"]["stdout"] == "158.25\n"
        assert page.evaluate("() => window.ran") == ["get_orders", "refund_total"]
    else:
        assert statuses == [("get_orders", "ok"), ("refund_total", "denied")]
        assert outcome["steps"][0]["result"]["error"]["type"] == "ToolError"
        assert page.evaluate("() => window.ran") == ["get_orders"]
    decided = page.locator(".turn").last.locator(".tool-approval")
    assert decided.get_attribute("data-decision") == action.lower()
    assert (
        decided.locator(".tool-decision").inner_text()
        == {"Allow": "Allowed", "Deny": "Denied"}[action]
    )
    assert decided.get_by_role("button").count() == 0  # answered once, for good
    page.locator(".turn").last.locator(".answer").wait_for()
    shot(page, f"tools-done-{width}.png")


RESTORED_CELL = (
    "rows = await tools.get_orders(month=3)\n"
    "try:\n"
    "    await tools.get_orders(month=13)\n"
    "except ToolError as e:\n"
    "    print('refused')\n"
    "print(sum(r['amount'] for r in rows))"
)


def tool_rows(page: Any) -> list[tuple[str | None, str]]:
    rows = page.locator("#messages .turn").last.locator(".tool-call")
    return [
        (rows.nth(i).get_attribute("data-status"), rows.nth(i).inner_text())
        for i in range(rows.count())
    ]


@pytest.mark.slow
def test_a_restored_conversation_shows_its_tool_rows(
    a_browser: Any, a_playlist_site: str, a_playlist: tuple[Playlist, str]
) -> None:
    """After a reload, and in a kept conversation opened again, a cell's tool calls are
    rows where its steps are, as they were shown live (the one that failed too)."""
    model, _ = a_playlist
    with a_chat_at(a_browser, a_playlist_site) as page:
        page.evaluate(REGISTER)
        model.queue = [("code", RESTORED_CELL), ("text", "March comes to 200.5.")]
        start_ask(page, "March total")
        page.wait_for_function("() => window.outcome !== null")
        assert page.evaluate("() => window.outcome.status") == "ok"
        page.locator("#messages .turn").last.locator(".answer").wait_for()
        live = tool_rows(page)
        assert [status for status, _ in live] == ["ok", "refused"], live
        assert "get_orders" in live[0][1] and '"month":13' in live[1][1]
        shot(page, "tools-live-1280.png")

        page.reload()
        page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
        page.locator("#messages .turn .answer").last.wait_for()
        shot(page, "tools-restored-1280.png")
        assert tool_rows(page) == live
        # Each row stands before the step of the cell that made it, as live.
        assert page.evaluate(
            "() => { const s = document.querySelector('#messages .turn:last-child .steps');"
            " return s.firstElementChild.classList.contains('tool-call'); }"
        )
        assert no_overflow(page)[0] <= 1280

        # A kept conversation opened again from the list draws them too.
        kept = page.evaluate("() => window.reckon.conversations()")["current"]
        assert page.evaluate("() => window.reckon.newConversation()")["status"] == "ok"
        page.locator("#messages .turn").first.wait_for(state="detached")
        opened = page.evaluate("(id) => window.reckon.openConversation(id)", kept)
        assert opened["status"] == "ok", opened
        page.locator("#messages .turn .answer").last.wait_for()
        assert tool_rows(page) == live


class FreshSandbox:
    """A fresh page's sandbox (its own browser context, no tools lent) as
    ``reproduce_in_sandbox`` uses a session: the real JS API's ``run``."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def upload(self, file: Any) -> dict[str, Any]:
        raise AssertionError("these notebooks read no files")

    def run(self, code: str, *, timeout_ms: int | None = None) -> dict[str, Any]:
        script = "([code, ms]) => window.reckon.run(code, ms ? { timeoutMs: ms } : {})"
        result: dict[str, Any] = self.page.evaluate(script, [code, timeout_ms])
        return result


def export_of(page: Any, model: Playlist, cell: str, question: str) -> str:
    assert page.evaluate("() => window.reckon.newConversation()")["status"] == "ok"
    model.queue = [("code", cell), ("text", "Done.")]
    start_ask(page, question)
    page.wait_for_function("() => window.outcome !== null")
    assert page.evaluate("() => window.outcome.status") == "ok"
    text: str = page.evaluate("() => window.reckon.exportNotebook()")
    return text


@pytest.mark.slow
def test_an_export_records_the_tool_results_and_a_reproduction_replays_them(
    a_tool_chat: Any, a_playlist: tuple[Playlist, str], a_browser: Any, a_playlist_site: str
) -> None:
    """The exported notebook's cell carries its calls (name, arguments, status, and what
    each returned, or the error it was), and reproducing it where no page lends the
    tools, on CPython and in a fresh sandbox, answers them from that record: it matches."""
    page = a_tool_chat
    model, _ = a_playlist
    text = export_of(page, model, RESTORED_CELL, "March total, to export")
    cells = [c for c in json.loads(text)["cells"] if c["cell_type"] == "code"]
    tooled = [c for c in cells if "tools" in c["metadata"]["reckon"]]
    assert len(tooled) == 1 and "tools.get_orders" in "".join(tooled[0]["source"])
    calls = tooled[0]["metadata"]["reckon"]["tools"]
    assert [(c["name"], c["args"], c["status"]) for c in calls] == [
        ("get_orders", {"month": 3}, "ok"),
        ("get_orders", {"month": 13}, "refused"),
    ]
    assert calls[0]["result"] == [{"id": 1, "month": 3, "amount": 120.5},
                                  {"id": 2, "month": 3, "amount": 80}]  # fmt: skip
    assert "must be at most 12" in calls[1]["message"] and "message" not in calls[0]
    assert "result" not in calls[1] and not any("resultOmitted" in c for c in calls)
    report = reproduce_notebook(text, timeout_s=120)
    assert (report["differences"], report["share"]) == ([], 1.0)
    with a_console_page(a_browser, a_playlist_site) as fresh:
        report = reproduce_in_sandbox(FreshSandbox(fresh), text, timeout_ms=60_000)
        assert (report["differences"], report["share"]) == ([], 1.0)
        # The replay was for that cell only: a later call has no page to go to.
        after = fresh.evaluate("() => window.reckon.run('await tools.get_orders(month=3)')")
        assert "this page lends no tools" in after["error"]["message"], after


def tool_calls(notebook: str) -> list[dict[str, Any]]:
    """The host tool calls an exported notebook's one cell with tools records."""
    cells = [c for c in json.loads(notebook)["cells"] if c["cell_type"] == "code"]
    (tooled,) = [c for c in cells if "tools" in c["metadata"]["reckon"]]
    calls: list[dict[str, Any]] = tooled["metadata"]["reckon"]["tools"]
    return calls


@pytest.mark.slow
def test_calls_without_await_export_and_replay_as_awaited_ones(
    a_tool_chat: Any, a_playlist: tuple[Playlist, str], a_browser: Any, a_playlist_site: str
) -> None:
    """`reckon serve` makes the sandbox cross-origin isolated, so the model's code may
    leave out `await`: the export records the same calls, and a reproduction answers the
    calls without await from the record too, on CPython and in a fresh sandbox."""
    page = a_tool_chat
    model, _ = a_playlist
    awaited = export_of(page, model, RESTORED_CELL, "March total, awaited")
    plain_cell = RESTORED_CELL.replace("await ", "")
    plain = export_of(page, model, plain_cell, "March total, without await")
    assert tool_calls(plain) == tool_calls(awaited)
    assert [c["status"] for c in tool_calls(plain)] == ["ok", "refused"]
    report = reproduce_notebook(plain, timeout_s=120)
    assert (report["differences"], report["share"]) == ([], 1.0)
    with a_console_page(a_browser, a_playlist_site) as fresh:
        report = reproduce_in_sandbox(FreshSandbox(fresh), plain, timeout_ms=60_000)
        assert (report["differences"], report["share"]) == ([], 1.0)


@pytest.mark.slow
def test_under_schema_privacy_no_tool_result_is_kept(
    a_tool_chat: Any, a_playlist: tuple[Playlist, str], a_browser: Any, a_playlist_site: str
) -> None:
    """Under schema privacy what a tool returned is the person's data: the record says
    ``resultOmitted: "privacy"`` and nothing of it is in the export; a reproduction
    names that call as the reason the cell cannot be checked."""
    page = a_tool_chat
    model, _ = a_playlist
    assert page.evaluate("() => window.reckon.configure({ privacy: 'schema' })")["status"] == "ok"
    try:
        cell = "rows = await tools.get_orders(month=3)\nprint(len(rows), 'orders')"
        text = export_of(page, model, cell, "How many March orders?")
    finally:
        assert page.evaluate("() => window.reckon.configure({ privacy: 'full' })")["status"] == "ok"
    (tooled,) = [c for c in json.loads(text)["cells"] if "tools" in c["metadata"].get("reckon", {})]
    assert tooled["metadata"]["reckon"]["tools"] == [
        {"name": "get_orders", "status": "ok", "args": {"month": 3}, "resultOmitted": "privacy"}
    ]
    assert "".join(tooled["outputs"][0]["text"]) == "2 orders\n"
    assert "120.5" not in text and "amount" not in text
    with a_console_page(a_browser, a_playlist_site) as fresh:
        report = reproduce_in_sandbox(FreshSandbox(fresh), text, timeout_ms=60_000)
    (difference,) = report["differences"]
    assert difference["output"] == "run" and "not recorded" in difference["fresh"]
    assert "host tool get_orders" in difference["why"] and "schema privacy" in difference["why"]
