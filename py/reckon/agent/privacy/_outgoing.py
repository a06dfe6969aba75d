"""Schema privacy over everything sent: every string of every message of a request goes
through the filter just before the request is made, whatever put it there (the system
prompt, the question, the model's own replies and code, observations, notes, an
imported notebook's account), so no field is left out because nobody thought of it.

The fields that give a message its shape (``role``, ids, tool names, ``type``) are
ours and pass as they are; a tool call's arguments are read as JSON and their strings
filtered, so they stay valid. Each string is filtered once per filter (``Redactor``
keeps what it found), so a long conversation costs only its new messages.
"""

from __future__ import annotations

import json
from typing import Any

from reckon.agent._types import JSONDict
from reckon.agent.privacy._redactor import Redactor

__all__ = ["PrivateEnvironment", "outgoing"]

_SHAPE = frozenset({"role", "tool_call_id", "id", "type", "name"})
_REMEMBERED = 20_000  # filtered strings kept per filter before it starts again


class PrivateEnvironment(dict[str, Any]):
    """The environment of a schema-mode ask: what the model may see (files from the
    scan's own look, no previews), and ``redactor``, the filter every string sent to
    the model passes (``outgoing``)."""

    def __init__(self, data: JSONDict, *, redactor: Redactor) -> None:
        super().__init__(data)
        self.redactor = redactor


def outgoing(messages: list[JSONDict], environment: JSONDict) -> list[JSONDict]:
    """The messages as they may be sent: filtered when ``environment`` is private."""
    redactor = getattr(environment, "redactor", None)
    if not isinstance(redactor, Redactor):
        return list(messages)
    if len(redactor.memo) > _REMEMBERED:
        redactor.memo.clear()
    return [_filtered(message, redactor) for message in messages]


def _filtered(value: Any, redactor: Redactor, key: str = "") -> Any:
    if isinstance(value, str):
        if key in _SHAPE:
            return value
        if key == "arguments":
            return _arguments(value, redactor)
        return redactor.hidden(value)
    if isinstance(value, dict):
        return {k: _filtered(v, redactor, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_filtered(v, redactor, key) for v in value]
    return value


def _arguments(text: str, redactor: Redactor) -> str:
    """A tool call's arguments (JSON text) with their strings filtered, still JSON (and
    as they were, byte for byte, when nothing in them is hidden)."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return redactor.hidden(text)
    cleaned = _filtered(parsed, redactor, "value")
    return text if cleaned == parsed else json.dumps(cleaned, ensure_ascii=False)
