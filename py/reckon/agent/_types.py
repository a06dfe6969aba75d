"""The agent's interfaces: what a model, an executor and a transport must offer.

The loop only talks to these protocols, so the browser (JS fetch, the sandbox
behind postMessage) and the tests (httpx, an in-process kernel) plug in the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "RUN_PYTHON_TOOL",
    "RUN_SQL_TOOL",
    "ChatReply",
    "ChatRequest",
    "Executor",
    "JSONDict",
    "Model",
    "Transport",
]

JSONDict = dict[str, Any]

RUN_PYTHON_TOOL: JSONDict = {
    "type": "function",
    "function": {
        "name": "run_python",
        "description": (
            "Run Python code in the persistent sandbox and get back what it printed, the "
            "last expression's value, the error and traceback if it failed, descriptions "
            "of figures, and files written under /output."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "Python source code (no markdown fences).",
                }
            },
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}


RUN_SQL_TOOL: JSONDict = {
    "type": "function",
    "function": {
        "name": "run_sql",
        "description": (
            "Run one query in DuckDB's SQL dialect over the uploaded tables (each table file "
            "is a table, named as in the file list; files are scanned in place, so large "
            "ones work) and get the result table back."
        ),
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "One DuckDB SQL query."}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


@dataclass
class ChatRequest:
    """One model call: the conversation so far and what the model may use.

    ``messages`` are OpenAI chat messages; ``context`` is the environment dict the
    agent was asked with (files, packages, …), which only offline models like the
    demo read — a remote model sees it through the system prompt instead. A model
    that sends the request somewhere appends each body to ``sent``, exactly as it
    went out (a retry adds a second one), so the transcript can show it.
    """

    messages: list[JSONDict]
    tools: list[JSONDict] = field(default_factory=list)
    model: str = ""
    context: JSONDict = field(default_factory=dict)
    sent: list[JSONDict] = field(default_factory=list)
    # A tool the model must call this time (the first step of a data question).
    tool_choice: str | None = None


@dataclass
class ChatReply:
    """What the model answered: text, tool calls ``{id, name, arguments}``, why it stopped,
    and the reasoning a server sent beside the text (``reasoning_content``)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: JSONDict | None = None
    # Milliseconds from sending the request to the server's first streamed event.
    first_token_ms: float | None = None


@runtime_checkable
class Model(Protocol):
    """A chat model: the OpenAI-compatible client, the demo planner or a test script.

    Optional attributes the agent reads (with these defaults when missing):
    ``use_tools`` (True), ``forces_first_call`` (True), ``follows_rechecks`` (True),
    ``preloads`` (True), ``context_window`` (None), ``prefer_code_blocks()`` (none).
    """

    name: str

    async def complete(
        self, request: ChatRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ChatReply: ...


@runtime_checkable
class Executor(Protocol):
    """Runs cells and returns run results (PROTOCOL section 1)."""

    async def run(self, code: str) -> JSONDict: ...

    async def interrupt(self) -> None: ...


class Transport(Protocol):
    """Moves JSON to the relay and bytes back; raises ``ModelError`` on HTTP errors."""

    def stream(self, path: str, payload: JSONDict) -> AsyncIterator[bytes]: ...

    async def post(self, path: str, payload: JSONDict) -> JSONDict: ...
