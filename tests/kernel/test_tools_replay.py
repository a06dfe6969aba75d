"""A reproduced notebook's host tool calls answered from its record (reckon/kernel/
_replay.py): the cell's calls take the recorded results in order, and a call the
record cannot answer is a ToolError that says "not recorded" and why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_helpers import Runner

from reckon.kernel import set_replay, set_transport

ORDERS = [{"id": 1, "month": 3, "amount": 120.5}, {"id": 2, "month": 3, "amount": 80.0}]
RECORDS: list[dict[str, Any]] = [
    {"name": "get_orders", "args": {"month": 3}, "status": "ok", "result": ORDERS},
    {"name": "get_orders", "args": {"month": 13}, "status": "refused",
     "message": "get_orders: bad arguments: month: must be at most 12"},
    {"name": "refund_total", "args": {}, "status": "ok", "resultOmitted": "privacy"},
    {"name": "get_orders", "args": {"month": 9}, "status": "error"},
]  # fmt: skip


@pytest.fixture
def page_calls() -> Iterator[list[str]]:
    """A page transport that must not be reached while a replay is set."""
    seen: list[str] = []

    async def page(name: str, args: str) -> str:
        seen.append(name)
        return json.dumps({"status": "ok", "text": json.dumps("from the page")})

    set_transport(page)
    yield seen
    set_replay(None)
    set_transport(None)


def test_recorded_results_are_replayed_in_order(a_session: Runner, page_calls: list[str]) -> None:
    set_replay(RECORDS)
    result = a_session(
        "rows = await tools.get_orders(month=3)\n"
        "try:\n"
        "    await tools.get_orders(month=13)\n"
        "except ToolError as e:\n"
        "    print(e)\n"
        "sum(r['amount'] for r in rows)"
    )
    assert result["status"] == "ok", result["error"]
    assert result["result"]["text"] == "200.5"
    # A refused call is the same ToolError it was in the browser.
    assert result["stdout"] == "get_orders: bad arguments: month: must be at most 12\n"
    assert page_calls == []  # nothing went to a page


def test_as_frame_and_the_import_work_on_a_replay(a_session: Runner, page_calls: list[str]) -> None:
    set_replay(RECORDS[:1])
    result = a_session(
        "from reckon.tools import get_orders\n"
        "df = await get_orders(month=3, as_frame=True)\nfloat(df.amount.sum())"
    )
    assert result["result"]["text"] == "200.5", result
    assert page_calls == []


CATCH = "try:\n    await tools.get_orders(month=13)\nexcept ToolError:\n    pass\n"
EVERY = (
    "for call in (lambda: tools.get_orders(month=3), lambda: tools.get_orders(month=13),\n"
    "             tools.refund_total, lambda: tools.get_orders(month=9)):\n"
    "    try:\n        await call()\n    except ToolError:\n        pass\n"
)


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        ("await tools.get_orders(month=4)",
         'the next call recorded for this cell is get_orders({"month": 3})'),
        ("await tools.refund_total()", "the next call recorded for this cell is get_orders"),
        ("await tools.get_orders(month=3)\n" + CATCH + "await tools.refund_total()",
         "refund_total({}): its result was not kept (under schema privacy"),
        (EVERY + "await tools.get_orders(month=3)", "every one was replayed"),
    ],
)  # fmt: skip
def test_a_call_the_record_cannot_answer_is_not_recorded(
    a_session: Runner, page_calls: list[str], cell: str, says: str
) -> None:
    set_replay(RECORDS)
    result = a_session(cell)
    assert result["status"] == "error", result
    assert result["error"]["type"] == "ToolError"
    assert result["error"]["message"].startswith("not recorded: ")
    assert says in result["error"]["message"]
    assert page_calls == []


def test_a_failed_call_without_its_message_is_not_recorded(
    a_session: Runner, page_calls: list[str]
) -> None:
    set_replay(RECORDS[-1:])
    result = a_session("await tools.get_orders(month=9)")
    assert result["error"]["message"] == (
        'not recorded: get_orders({"month": 9}): it gave no result in the browser (error) and '
        "its message was not kept, so the notebook has nothing to replay"
    )


def test_a_mismatch_leaves_the_next_record_for_the_right_call(
    a_session: Runner, page_calls: list[str]
) -> None:
    set_replay(RECORDS)
    result = a_session(
        "try:\n    await tools.get_orders(month=5)\nexcept ToolError:\n    pass\n"
        "len(await tools.get_orders(month=3))"
    )
    assert result["result"]["text"] == "2", result


def test_clearing_the_replay_gives_calls_back_to_the_page(
    a_session: Runner, page_calls: list[str]
) -> None:
    set_replay([])
    refused = a_session("await tools.anything()")
    assert "records 0 tool call(s)" in refused["error"]["message"]
    set_replay(None)
    result = a_session("await tools.anything()")
    assert result["result"]["text"] == "'from the page'", result
    assert page_calls == ["anything"]


def test_a_call_whose_arguments_were_not_kept_says_so_and_moves_on(
    a_session: Runner, page_calls: list[str]
) -> None:
    """The same sentence ``reckon reproduce`` reports for the cell (``unreplayable``)."""
    long = {"name": "search", "args": {"...": "3000 characters"}, "status": "ok", "result": []}
    set_replay([long, RECORDS[0]])
    result = a_session(
        "try:\n    await tools.search(text='x' * 3000)\nexcept ToolError as e:\n    print(e)\n"
        "len(await tools.get_orders(month=3))"
    )
    assert result["status"] == "ok", result["error"]
    assert "its arguments were too long to keep" in result["stdout"]
    assert result["result"]["text"] == "2" and page_calls == []
