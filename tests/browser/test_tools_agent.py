"""Host tools and the agent, through the real JS API: the model is told of the page's
tools, its code calls them, each call is in the ask's steps, and under schema privacy
what a tool returned is hidden from the model like a file's values.

`reckon serve` runs in front of a scripted upstream (playlist_kit.py) that records every
body it receives, so the tests read what really reached the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .playlist_kit import Playlist

pytestmark = pytest.mark.browser

# `window.t`: a createReckon() with two tools over the page's own orders data.
MAKE = """async () => {
  if (window.t) { await window.t.newConversation(); return; }
  const { createReckon } = await import("./reckon.js");
  const orders = [
    { id: 1, month: 3, amount: 98765.43, customer: "Zelda Quartermaine" },
    { id: 2, month: 3, amount: 1200.5, customer: "Orlando Pemberton-Vail" },
  ];
  window.calls = [];
  const t = createReckon({ persist: false, tools: [
    { name: "get_orders", description: "The shop's orders of one month.",
      parameters: { type: "object", required: ["month"],
                    properties: { month: { type: "integer", minimum: 1, maximum: 12 } } },
      run: ({ month }) => {
        window.calls.push(month);
        return orders.filter((o) => o.month === month);
      } },
    { name: "order_count", description: "How many orders there are.", run: () => orders.length },
  ] });
  window.t = t;
  await t.ready();
}"""
CELL = (
    "rows = await tools.get_orders(month=3)\n"
    "print(rows[0]['customer'], rows[0]['amount'])\n"
    "print(round(sum(r['amount'] for r in rows), 2))"
)


def ask(page: Any, question: str, settings: dict[str, Any]) -> dict[str, Any]:
    outcome: dict[str, Any] = page.evaluate(
        """async ([question, settings]) => {
            const reply = await window.t.configure(settings);
            if (reply.status !== "ok") throw new Error(reply.message);
            return window.t.ask(question, { model: "scripted" });
        }""",
        [question, settings],
    )
    return outcome


def system_prompt(model: Playlist, index: int = 0) -> str:
    messages = model.requests[index]["payload"]["messages"]
    assert messages[0]["role"] == "system"
    return str(messages[0]["content"])


@pytest.mark.slow
def test_the_model_is_told_of_the_tools_and_its_call_is_a_step(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    model.requests.clear()
    model.usage = None
    model.queue = [("code", CELL), ("text", "March's orders come to 99965.93.")]
    a_page.evaluate(MAKE)
    outcome = ask(a_page, "total of March's orders", {"privacy": "full"})
    assert outcome["status"] == "ok", outcome
    prompt = system_prompt(model)
    assert "rows = await tools.get_orders(month=...)" in prompt
    assert "- get_orders(month: integer 1..12): The shop's orders of one month." in prompt
    assert "- order_count(): How many orders there are." in prompt
    step = outcome["steps"][0]
    assert step["result"]["stdout"] == "Zelda Quartermaine 98765.43\n99965.93\n"
    (record,) = step["result"]["tools"]
    assert (record["name"], record["args"], record["status"]) == ("get_orders", {"month": 3}, "ok")
    assert "toolValues" not in step["result"]  # the agent's, never kept in a step
    assert a_page.evaluate("() => window.calls") == [3]

    # Without tools the prompt is the one before them, to the byte.
    a_page.evaluate(
        "async () => { window.t.unregisterTool('get_orders');"
        " window.t.unregisterTool('order_count'); await window.t.newConversation(); }"
    )
    model.requests.clear()
    model.queue = [("text", "No tools.")]
    ask(a_page, "total of March's orders", {"privacy": "full"})
    plain = system_prompt(model)
    assert "await tools." not in plain and "ToolError" not in plain
    assert prompt.startswith(plain + "\n\n")


@pytest.mark.slow
def test_schema_privacy_hides_what_a_tool_returned(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    a_page.evaluate("() => { window.t = null; }")
    a_page.evaluate(MAKE)
    model.requests.clear()
    model.queue = [("code", CELL), ("text", "Done.")]
    outcome = ask(a_page, "who ordered in March", {"privacy": "schema"})
    assert outcome["status"] == "ok", outcome
    assert outcome["privacy"] == "schema"
    sent = json.dumps([r["payload"] for r in model.requests])
    for value in ("Zelda Quartermaine", "Orlando Pemberton-Vail", "98765.43"):
        assert value not in sent, value
    assert "[hidden]" in sent
    # The person sees the real output; only the model's view is filtered.
    assert "Zelda Quartermaine" in outcome["steps"][0]["result"]["stdout"]
