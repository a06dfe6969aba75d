"""What a host tool returned, as schema privacy's values (reckon/agent/_tool_values.py),
and the filter that learns them mid-ask (Redactor.extend)."""

from __future__ import annotations

import json

from reckon.agent._tool_values import ToolValues, values_of
from reckon.agent.privacy._redactor import Redactor

ROWS = [
    {"customer": "Zelda Quartermaine", "amount": 98765.43, "paid": True, "note": None},
    {"customer": "Orlando Vail", "amount": 1200, "tags": ["vip", "north"]},
]


def test_values_are_the_leaves_not_the_keys() -> None:
    strings, numbers = values_of([json.dumps(ROWS), "not json", json.dumps("solo")])
    assert sorted(strings) == ["Orlando Vail", "Zelda Quartermaine", "north", "solo", "vip"]
    assert sorted(numbers) == [1200.0, 98765.43]  # True is no number here


def test_the_filter_learns_them_from_the_call_on() -> None:
    redactor = Redactor(["Known Person"], [], keep=["customer", "amount"])
    text = "Zelda Quartermaine paid 98765.43; Known Person too; customer, amount"
    assert "Zelda Quartermaine" in redactor.hidden(text)  # not known yet (and remembered)
    seen = ToolValues()
    seen.arrived([json.dumps(ROWS)])  # nobody listens: nothing happens
    seen.listener = redactor.extend
    seen.arrived([json.dumps(ROWS)])
    shown = redactor.hidden(text)
    assert "Zelda" not in shown and "98765" not in shown and "Known Person" not in shown
    assert "customer, amount" in shown  # names that may be sent stay
