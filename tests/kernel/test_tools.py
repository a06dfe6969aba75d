"""Host tools in a cell (reckon/kernel/_tools.py): what a cell sees of the page's tools.

The transport here is a real coroutine function standing where the worker's bridge
stands (the page's side is tested in the browser: tests/browser/test_tools*.py); it
answers as the page does, with JSON text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_helpers import Runner

from reckon.kernel import set_transport

ORDERS = [{"id": 1, "month": 3, "amount": 120.5}, {"id": 2, "month": 3, "amount": 80.0}]


@pytest.fixture
def calls() -> Iterator[list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []

    async def page(name: str, args: str) -> str:
        seen.append((name, json.loads(args)))
        if name == "get_orders":
            rows = [o for o in ORDERS if o["month"] == json.loads(args).get("month")]
            return json.dumps({"status": "ok", "text": json.dumps(rows)})
        if name == "count":
            return json.dumps({"status": "ok", "text": "3"})
        if name == "interrupted":  # as the worker answers when the cell is interrupted
            message = "tools.interrupted: the cell was interrupted while the tool ran"
            return json.dumps({"status": "error", "interrupted": True, "message": message})
        return json.dumps({"status": "error", "message": f"no tool named {name!r}"})

    set_transport(page)
    yield seen
    set_transport(None)


def test_an_awaited_call_returns_the_pages_data(a_session: Runner, calls: list[Any]) -> None:
    result = a_session("rows = await tools.get_orders(month=3)\nsum(r['amount'] for r in rows)")
    assert result["status"] == "ok", result["error"]
    assert result["result"]["text"] == "200.5"
    assert calls == [("get_orders", {"month": 3})]


def test_as_frame_makes_records_a_dataframe(a_session: Runner, calls: list[Any]) -> None:
    result = a_session(
        "df = await tools.get_orders(month=3, as_frame=True)\nfloat(df.amount.sum())"
    )
    assert result["status"] == "ok", result["error"]
    assert result["result"]["text"] == "200.5"
    assert calls == [("get_orders", {"month": 3})]  # as_frame stays in the sandbox
    bad = a_session("await tools.count(as_frame=True)")
    assert bad["error"]["type"] == "ToolError"
    assert "as_frame=True needs a list of records" in bad["error"]["message"]


def test_importable_from_reckon_tools(a_session: Runner, calls: list[Any]) -> None:
    result = a_session("from reckon.tools import get_orders\nlen(await get_orders({'month': 3}))")
    assert result["result"]["text"] == "2", result


def test_a_refusal_is_a_tool_error_the_cell_can_catch(a_session: Runner, calls: list[Any]) -> None:
    result = a_session("await tools.nope(x=1)")
    assert result["status"] == "error"
    assert result["error"]["type"] == "ToolError"
    assert "no tool named 'nope'" in result["error"]["message"]
    caught = a_session(
        "try:\n    await tools.nope()\nexcept ToolError as e:\n    print('caught', e)"
    )
    assert caught["stdout"].startswith("caught no tool named"), caught


def test_a_call_ended_by_an_interrupt_ends_the_cell_as_interrupted(
    a_session: Runner, calls: list[Any]
) -> None:
    # Not a ToolError: a cell that catches those still stops when it is interrupted.
    result = a_session(
        "try:\n    await tools.interrupted()\nexcept ToolError:\n    print('went on')"
    )
    assert result["status"] == "interrupted", result
    assert result["error"]["type"] == "KeyboardInterrupt" and result["stdout"] == ""


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        ("rows = tools.get_orders(month=3)\nlen(rows)", "must be awaited"),
        ("tools.get_orders(month=3)[0]", "must be awaited"),
        ("await tools.get_orders(3)", "keyword arguments"),
        ("await tools.get_orders(month=float('nan'))", "JSON data"),
        ("await tools.get_orders(month=object())", "JSON data"),
    ],
)
def test_misuse_says_what_to_write(
    a_session: Runner, calls: list[Any], cell: str, says: str
) -> None:
    result = a_session(cell)
    assert result["error"]["type"] == "ToolError", result
    assert says in result["error"]["message"]
    assert calls == []  # nothing left the sandbox


def test_without_a_page_a_call_says_none_are_lent(a_session: Runner) -> None:
    result = a_session("await tools.get_orders(month=3)")
    assert result["error"]["type"] == "ToolError"
    assert "no tools are available" in result["error"]["message"]


def test_dunder_names_are_not_tools(a_session: Runner, calls: list[Any]) -> None:
    result = a_session("hasattr(tools, '__wrapped__'), callable(tools.get_orders), repr(tools)")
    assert result["result"]["text"].startswith("(False, True, '<tools the page lends")
