"""A cell's host tool calls, as an exported notebook records them.

A run result's ``tools`` records (PROTOCOL.md §1) hold each call's name, arguments,
status and size, not what the tool returned: the page hands the returned JSON to the
agent only for schema privacy, which never keeps it (``reckon/agent/_tool_values.py``).
So an export records the calls, and a reproduced notebook can say that a cell's output
came from the page, not replay it (``reckon/reproduce``)."""

from __future__ import annotations

import json

from reckon.agent._types import JSONDict

__all__ = ["ARGS_CHARS", "recorded_calls"]

ARGS_CHARS = 10_000  # a call's arguments, as JSON, kept in the notebook up to this size
_MESSAGE_CHARS = 500


def recorded_calls(result: JSONDict) -> list[JSONDict]:
    """``[{name, args, status, message?}]`` of a run result's host tool calls, in order;
    arguments over ``ARGS_CHARS`` of JSON give way to ``args_chars``, their size."""
    calls: list[JSONDict] = []
    records = result.get("tools")
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, dict):
            continue
        call: JSONDict = {
            "name": str(record.get("name", "")),
            "status": str(record.get("status", "")),
        }
        args = record.get("args")
        text = json.dumps(args, ensure_ascii=False)
        if len(text) <= ARGS_CHARS:
            call["args"] = args
        else:
            call["args_chars"] = len(text)
        message = record.get("message")
        if call["status"] != "ok" and isinstance(message, str) and message:
            call["message"] = message[:_MESSAGE_CHARS]
        calls.append(call)
    return calls
