"""The scripted model of the tests, in both places a model sits.

- As a Reckon chat model (the agent's ``complete``, tests/agent): it plays the
  ``replies`` it was given, in order (a `ChatReply`, or an async function of the
  request that gives one), and records a copy of each `ChatRequest`.
- As the fake upstream's ``respond`` (``a_model_server(ScriptedModel())``, the
  browser tests): it plays a fixed plan over HTTP and records each request's
  payload and authorization header:
  1. writes code with a typo in a column name (fails with KeyError);
  2. after seeing the traceback, writes the fixed code, which also draws a chart;
  3. answers with the number it finds in the last observation.
  Subclasses change `chat`; the replies are built with `tool_call` and `text`.

``requests`` holds what it got, as it got it: `ChatRequest` copies in the first
role, ``{"payload", "auth"}`` in the second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from reckon.agent import ChatReply, ChatRequest
from reckon.agent.checks._recheck import draft_request, is_question

from ._sse import event_stream
from ._upstream import Script, Seen

HOSTILE_MARKDOWN = (
    '<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> '
    "**bold** [click](javascript:window.pwned=3)"
)
SALES = "region,price,qty\nEast,10,1\nWest,20,2\nEast,30,3\nNorth,5,4\n"


DRAFT_OPENING = draft_request("{}").split("{}")[0]

# A reply of the scripted chat model: as it is, or made from the request.
Reply = ChatReply | Callable[[ChatRequest], Awaitable[ChatReply]]


class ScriptedModel:
    """Plays prepared replies (as a chat model) or a fixed plan (as the fake upstream's
    ``respond``); records every request it got."""

    name = "scripted"

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies = list(replies or [])
        # ChatRequest copies through `complete`, {"payload", "auth"} through the upstream.
        self.requests: list[Any] = []

    async def complete(
        self, request: ChatRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ChatReply:
        self.requests.append(
            ChatRequest(
                messages=json.loads(json.dumps(request.messages)),
                tools=request.tools,
                model=request.model,
                context=request.context,
                tool_choice=request.tool_choice,
            )
        )
        if not self.replies:
            raise AssertionError("the scripted model ran out of replies")
        item = self.replies.pop(0)
        reply = item if isinstance(item, ChatReply) else await item(request)
        if on_text is not None and reply.text:
            on_text(reply.text)
        return reply

    def __call__(self, seen: Seen) -> Script | Awaitable[Script]:
        return self.chat(seen)

    def chat(self, seen: Seen) -> Script | Awaitable[Script]:
        payload = seen.json
        self.requests.append({"payload": payload, "auth": seen.headers.get("authorization")})
        tool_results = [m for m in payload["messages"] if m.get("role") == "tool"]
        # The person's last question, not a recheck the agent added after an answer
        # (a hostile answer runs no code, and is sent back once for that); a program
        # asked for in place of the question quotes it.
        said = [m for m in payload["messages"] if m.get("role") == "user"]
        drafted = str(said[-1]["content"]).startswith(DRAFT_OPENING)
        question = (said if drafted else [m for m in said if is_question(m)])[-1]["content"]
        if "hostile" in question:
            return self.text(HOSTILE_MARKDOWN)
        if not tool_results:
            code = (
                "import pandas as pd\ndf = pd.read_csv('/data/sales.csv')\n"
                "print(df['prise'].mean())"
            )
            return self.tool_call(code, "call_1")
        if len(tool_results) == 1:
            code = (
                "import pandas as pd\nimport matplotlib.pyplot as plt\n"
                "df = pd.read_csv('/data/sales.csv')\nmean = df['price'].mean()\n"
                "df.groupby('region')['price'].mean().plot.bar(title='Mean price by region')\n"
                "print(f'mean price = {mean}')"
            )
            return self.tool_call(code, "call_2")
        numbers = re.findall(r"mean price = ([0-9.]+)", tool_results[-1]["content"])
        return self.text(f"The mean price is {numbers[-1] if numbers else 'unknown'}.")

    def stream(self, chunks: list[dict[str, Any]]) -> Script:
        return event_stream(chunks, model=self.name, comment="scripted upstream")

    def tool_call(self, code: str, call_id: str) -> Script:
        args = json.dumps({"code": code})
        half = len(args) // 2
        first = {"index": 0, "id": call_id, "type": "function",
                 "function": {"name": "run_python", "arguments": args[:half]}}  # fmt: skip
        second = {"index": 0, "function": {"arguments": args[half:]}}
        return self.stream([
            {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]}}]},
            {"choices": [{"index": 0, "delta": {"tool_calls": [second]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ])  # fmt: skip

    def text(self, answer: str) -> Script:
        words = answer.split(" ")
        chunks = [{"choices": [{"index": 0, "delta": {"content": w + " "}}]} for w in words]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        return self.stream(chunks)
