"""A reply that writes the chat template's tool list out again, then its code between
HTML code tags (seen from Qwen2.5-Coder-1.5B in a benchmark run, where that reply stood
as an ok answer): the list is dropped and the code runs.

Each test scripts a real HTTP server on 127.0.0.1 and runs the cells in an in-process
kernel.
"""

from __future__ import annotations

import json

from reckon.agent.models._fences import fenced_blocks
from support import FakeUpstream

from .helpers import KernelExecutor, ask_openai, text_reply

TOOLS = {
    "type": "function",
    "function": {"name": "run_python", "description": "Run Python code in the sandbox."},
}
ECHO = (
    f"<tools>\n{json.dumps(TOOLS)}\n</tools>\n\n"
    "<code>\nimport pandas as pd\n\nprint(df['units'].sum())\n</code>"
)


def test_the_code_in_tags_runs_and_the_tool_list_is_dropped(
    upstream: FakeUpstream, sales: KernelExecutor
) -> None:
    outcome = ask_openai(upstream, sales, "Total units?", [text_reply(ECHO), text_reply("29.")])
    assert outcome["status"] == "ok" and outcome["answer"] == "29."
    ran = [s for s in outcome["steps"] if s["kind"] == "code" and s.get("origin") != "reckon"]
    assert len(ran) == 1 and ran[0]["result"]["stdout"] == "29\n"
    assert "<tools>" not in json.dumps(upstream.payloads[1]["messages"][1:])


def test_tags_inside_a_fence_are_the_fence_s_text() -> None:
    text = "```html\n<code>\nx = 1\n</code>\n```\n<code>\ny = 2\n</code>"
    assert [(b.language, b.body) for b in fenced_blocks(text)] == [
        ("html", "<code>\nx = 1\n</code>\n"),
        ("", "y = 2\n"),
    ]
