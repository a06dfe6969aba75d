"""The built-in demo model: a deterministic planner that needs no network and no key.

It reads the latest question and the uploaded files' inspect dicts, writes a real
cell for the requests it recognises, and answers from the cell's printed output.
Each turn is decided from the conversation alone (no hidden state), so a saved
conversation replays to the same replies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from reckon.agent._observe import OBSERVATION_HEADER, parse_observation
from reckon.agent._preload import TOO_BIG_TO_LOAD
from reckon.agent._types import ChatReply, ChatRequest, JSONDict
from reckon.agent.demo._answer import (
    HELP,
    answer_from,
    explain_failure,
    lead_in,
    no_column,
    no_file,
)
from reckon.agent.demo._code import plan_code
from reckon.agent.demo._intent import Intent
from reckon.agent.demo._intents import parse_intent
from reckon.agent.demo._measures import unhonoured_note
from reckon.agent.demo._sql import literal_query, plan_sql, sql_answer, sql_stdout, wants_sql
from reckon.agent.demo._verify import verify_turn

__all__ = ["DEMO_MODEL", "DemoModel"]

# The built-in model's id wherever a model is chosen: the page (web/agent/client.js
# spells it too), the agent host, headless sessions and `reckon eval`.
DEMO_MODEL = "reckon-demo"

_ATTEMPTS = 2  # the first approach, then one different approach
_SQL_LEAD_IN = "I'll answer this with one SQL query over the uploaded table."


class DemoModel:
    """Implements ``Model`` offline for common data and math questions."""

    name = DEMO_MODEL
    # It answers only from outputs and cannot take a recheck: its answers are traced
    # (and marked) like any model's, but never sent back.
    follows_rechecks = False
    preloads = False  # its cells load the files themselves

    async def complete(
        self, request: ChatRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ChatReply:
        check = verify_turn(request, on_text)  # "verify": the key number another way
        if check is not None:
            return check
        question, observations = _turn(request.messages)
        files = [f for f in request.context.get("files") or [] if isinstance(f, dict)]
        intent = parse_intent(question, files)
        literal = literal_query(question, files)
        # A file too big to load whole is queried in place whenever a query can answer.
        big = int((intent.file or {}).get("size") or 0) > TOO_BIG_TO_LOAD
        query = literal or (plan_sql(intent) if wants_sql(question) or big else None)
        if observations:
            sections = parse_observation(observations[-1])
            if sections.get("status", "").startswith("ok"):
                if literal is not None:
                    return _say(sql_answer(sections.get("value", "")), on_text)
                if query is not None and len(observations) == 1:  # the query's table
                    sections = {**sections, "stdout": sql_stdout(intent, sections.get("value", ""))}
                # A part of the question it did not do is said, not dropped in silence.
                return _say(answer_from(intent, sections) + unhonoured_note(intent), on_text)
            if literal is None and len(observations) < _ATTEMPTS:
                code = plan_code(intent, attempt=len(observations))
                if code is not None:
                    return _call(
                        lead_in(intent, len(observations)), code, len(observations), on_text
                    )
            return _say(explain_failure(intent, sections), on_text)
        if query is not None:
            return _call(_SQL_LEAD_IN, query, 0, on_text, tool="run_sql")
        code = plan_code(intent)
        if code is None:
            return _say(_decline(intent), on_text)
        return _call(lead_in(intent, 0), code, 0, on_text)

    def plan(self, question: str, files: list[JSONDict]) -> Intent:
        """How the demo reads ``question`` (for the page's hints and for tests)."""
        return parse_intent(question, files)


def _decline(intent: Intent) -> str:
    if intent.kind == "nofile":
        return no_file(intent)
    if intent.file is not None and intent.kind not in {"help", "math"}:
        return no_column(intent)
    return HELP


def _turn(messages: list[JSONDict]) -> tuple[str, list[str]]:
    """The latest real question and the observations that came back since it."""
    observations: list[str] = []
    for message in reversed(messages):
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else _text_of(content)
        if role == "tool":
            observations.append(text)
        elif role == "user":
            if text.startswith(OBSERVATION_HEADER):
                observations.append(text)
                continue
            return text, list(reversed(observations))
    return "", list(reversed(observations))


def _text_of(content: object) -> str:
    # Content may be a list of parts ({"type": "text", "text": ...}) in OpenAI format.
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _stream(text: str, on_text: Callable[[str], None] | None) -> None:
    if on_text is None:
        return
    for piece in re.findall(r"\S+\s*|\s+", text):
        on_text(piece)


def _say(text: str, on_text: Callable[[str], None] | None) -> ChatReply:
    _stream(text, on_text)
    return ChatReply(text=text, finish_reason="stop")


def _call(
    text: str,
    code: str,
    attempt: int,
    on_text: Callable[[str], None] | None,
    *,
    tool: str = "run_python",
) -> ChatReply:
    _stream(text, on_text)
    key = "query" if tool == "run_sql" else "code"
    call = {"id": f"call_demo_{attempt}", "name": tool, "arguments": json.dumps({key: code})}
    return ChatReply(text=text, tool_calls=[call], finish_reason="tool_calls")
