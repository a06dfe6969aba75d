"""Host tool calls made without await (reckon/kernel/_tools.py, _awaited.py): where a
blocking transport is set (the worker's, in a cross-origin-isolated frame) or a replay
(a reproduced notebook), ``rows = tools.get_orders(month=3)`` is the rows; an awaited
call, or one handed to asyncio.gather and the like, stays awaitable."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kernel_helpers import Runner

from reckon.kernel import set_replay, set_transport

ORDERS = [{"id": 1, "month": 3, "amount": 120.5}, {"id": 2, "month": 3, "amount": 80.0}]


def answer(name: str, args: str) -> str:
    """As the page answers: the month's orders, or an error."""
    if name == "get_orders":
        rows = [o for o in ORDERS if o["month"] == json.loads(args).get("month")]
        return json.dumps({"status": "ok", "text": json.dumps(rows)})
    if name == "interrupted":
        return json.dumps({"status": "error", "interrupted": True, "message": "interrupted"})
    return json.dumps({"status": "error", "message": f"no tool named {name!r}"})


@pytest.fixture
def ways() -> Iterator[list[str]]:
    """Which way each call went: "awaited" or "now"."""
    seen: list[str] = []

    async def awaited(name: str, args: str) -> str:
        seen.append("awaited")
        return answer(name, args)

    def now(name: str, args: str) -> str:
        seen.append("now")
        return answer(name, args)

    set_transport(awaited, now)
    yield seen
    set_transport(None)


def test_a_call_without_await_is_its_value(a_session: Runner, ways: list[str]) -> None:
    result = a_session("rows = tools.get_orders(month=3)\nprint(type(rows).__name__, len(rows))")
    assert result["stdout"] == "list 2\n", result
    df = a_session("df = tools.get_orders(month=3, as_frame=True)\nfloat(df.amount.sum())")
    assert df["result"]["text"] == "200.5", df
    assert ways == ["now", "now"]


@pytest.mark.parametrize(
    ("cell", "way"),
    [
        ("x = await tools.get_orders(month=3)", ["awaited"]),
        ("x = list(await tools.get_orders(month=3))", ["awaited"]),
        ("x = list(tools.get_orders(month=3))", ["now"]),
        ("x = [tools.get_orders(month=m) for m in (3, 4)]", ["now", "now"]),
        (
            "import asyncio\nx = await asyncio.gather(tools.get_orders(month=3), "
            "tools.get_orders(month=4))",
            ["awaited", "awaited"],
        ),
        ("import asyncio\nx = await asyncio.wait_for(tools.get_orders(month=3), 5)", ["awaited"]),
        # A plain function returning the call leaves it to its caller.
        ("get = lambda: tools.get_orders(month=3)\nx = await get()", ["awaited"]),
        ("get = lambda: tools.get_orders(month=3)\nx = get()", ["now"]),
        ("def get():\n    return tools.get_orders(month=3)\nx = get()", ["now"]),
        # A coroutine's return is its awaiter's value: the call's value, at once.
        ("async def get():\n    return tools.get_orders(month=3)\nx = await get()", ["now"]),
        (
            "async def get():\n    return await tools.get_orders(month=3)\nx = await get()",
            ["awaited"],
        ),
    ],
)
def test_which_way_a_call_goes(
    a_session: Runner, ways: list[str], cell: str, way: list[str]
) -> None:
    result = a_session(cell + "\nprint(type(x).__name__)")
    assert result["status"] == "ok", result["error"]
    assert result["stdout"] == "list\n"
    assert ways == way


def test_errors_and_interrupts_are_those_of_an_awaited_call(
    a_session: Runner, ways: list[str]
) -> None:
    refused = a_session("tools.nope(x=1)")
    assert refused["error"]["type"] == "ToolError"
    assert "no tool named 'nope'" in refused["error"]["message"]
    stopped = a_session("try:\n    tools.interrupted()\nexcept ToolError:\n    print('went on')")
    assert stopped["status"] == "interrupted" and stopped["stdout"] == "", stopped
    misuse = a_session("tools.get_orders(month=float('nan'))")
    assert "JSON data" in misuse["error"]["message"]
    assert ways == ["now", "now"]  # the bad arguments never left


def test_without_a_blocking_way_the_call_says_to_await(a_session: Runner) -> None:
    async def awaited(name: str, args: str) -> str:
        return answer(name, args)

    set_transport(awaited)
    try:
        result = a_session("rows = tools.get_orders(month=3)\nlen(rows)")
    finally:
        set_transport(None)
    assert result["error"]["type"] == "ToolError"
    message = result["error"]["message"]
    assert "must be awaited here: result = await tools.get_orders(...)" in message


def test_a_replay_answers_a_call_without_await(a_session: Runner) -> None:
    set_replay([{"name": "get_orders", "args": {"month": 3}, "status": "ok", "result": ORDERS}])
    try:
        result = a_session("rows = tools.get_orders(month=3)\nsum(r['amount'] for r in rows)")
    finally:
        set_replay(None)
    assert result["result"]["text"] == "200.5", result
