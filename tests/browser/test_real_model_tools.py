"""The local real model (Qwen2.5-Coder-1.5B-Instruct, as test_real_model.py serves it)
uses a host tool: told of the page's tool in its prompt, it calls it from its code and
answers from what one computation over the result printed.

The expected total follows from the page's data, computed here, never typed in."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from support import reckon_serve

from .test_real_model import ASK_MS, a_model_server, serve_flags, story  # noqa: F401

pytestmark = pytest.mark.real_model

ORDERS = [
    {"id": 1, "month": 3, "amount": 120.5},
    {"id": 2, "month": 3, "amount": 80.25},
    {"id": 3, "month": 3, "amount": 43.0},
    {"id": 4, "month": 4, "amount": 99.0},
]
MARCH = round(sum(o["amount"] for o in ORDERS if o["month"] == 3), 2)  # 243.75

REGISTER = """(orders) => {
  window.calls = [];
  window.reckon.registerTool({
    name: "get_orders",
    description: "The shop's orders of one month: a list of {id, month, amount}.",
    parameters: { type: "object", required: ["month"],
                  properties: { month: { type: "integer", minimum: 1, maximum: 12 } } },
    run: ({ month }) => {
      window.calls.push(month);
      return orders.filter((o) => o.month === month);
    },
  });
}"""


@pytest.fixture(scope="module")
def a_tool_site(a_model_server: str) -> Iterator[str]:  # noqa: F811
    with reckon_serve(*serve_flags(a_model_server)) as served:
        yield served.url


def test_the_local_model_calls_a_tool_and_computes_from_it(
    a_browser: Any, a_tool_site: str
) -> None:
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{a_tool_site}/index.html")
        page.evaluate("() => window.reckon.ready()")
        page.evaluate(REGISTER, ORDERS)
        outcome: dict[str, Any] = page.evaluate(
            """async ([q, ms]) => {
                const timer = new Promise((_, no) =>
                    setTimeout(() => no(new Error("ask hung")), ms));
                return Promise.race([window.reckon.ask(q), timer]);
            }""",
            ["What is the total amount of the shop's orders in March?", ASK_MS],
        )
        calls = page.evaluate("() => window.calls")
    finally:
        context.close()
    assert outcome["status"] == "ok", story(outcome)
    records = [
        r for s in outcome["steps"] if s["kind"] == "code" for r in s["result"].get("tools", [])
    ]
    assert any(r["name"] == "get_orders" and r["status"] == "ok" for r in records), story(outcome)
    assert 3 in calls, (calls, story(outcome))
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", outcome["answer"].replace(",", ""))]
    assert MARCH in numbers, story(outcome)
