"""The host tools in the system prompt (reckon/agent/_tools_prompt.py): each tool the
page lends, after the files; without tools the prompt is what it was, to the byte."""

from __future__ import annotations

from reckon.agent import build_system_prompt

ENV = {
    "python": "3.12",
    "packages": ["numpy", "pandas"],
    "data_dir": "/data",
    "output_dir": "/output",
    "files": [
        {
            "status": "ok",
            "path": "/data/sales.csv",
            "kind": "table",
            "format": "csv",
            "rows": 2,
            "columns": [{"name": "price", "dtype": "float64"}],
            "read_with": "pd.read_csv('/data/sales.csv')",
        }
    ],
}
ORDERS = {
    "name": "get_orders",
    "description": "The shop's orders of one month,\n  newest first.",
    "parameters": {
        "type": "object",
        "properties": {
            "month": {"type": "integer", "minimum": 1, "maximum": 12},
            "status": {"enum": ["open", "paid"]},
        },
        "required": ["month"],
    },
    "policy": "run",
}
REFUND = {
    "name": "refund",
    "description": "Refund an order.",
    "parameters": {
        "type": "object",
        "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
    },
    "policy": "ask",
}


def test_without_tools_the_prompt_is_unchanged() -> None:
    plain = build_system_prompt(ENV)
    assert build_system_prompt({**ENV, "tools": []}) == plain
    assert "tools" not in plain and "ToolError" not in plain
    for tools in (True, False):
        a = build_system_prompt(ENV, tools=tools)
        assert a == build_system_prompt({**ENV, "tools": []}, tools=tools)


def test_each_tool_is_one_line_after_the_files() -> None:
    prompt = build_system_prompt({**ENV, "tools": [ORDERS, REFUND]})
    plain = build_system_prompt(ENV)
    assert prompt.startswith(plain + "\n\n")  # the files' part is untouched, and first
    added = prompt[len(plain) :]
    assert "rows = await tools.get_orders(month=...)" in added
    assert "as_frame=True" in added and "ToolError" in added
    assert (
        '- get_orders(month: integer 1..12, status?: "open"|"paid"): '
        "The shop's orders of one month, newest first." in added
    )
    assert (
        "- refund(ids?: list[integer]): Refund an order. (the person approves each call)" in added
    )


def test_a_long_description_and_many_tools_are_bounded() -> None:
    many = [{**ORDERS, "name": f"t{i}", "description": "x" * 1000} for i in range(40)]
    added = build_system_prompt({**ENV, "tools": many})[len(build_system_prompt(ENV)) :]
    assert added.count("\n- t") == 30 and "… and 10 more" in added
    assert max(len(line) for line in added.splitlines()) < 400
