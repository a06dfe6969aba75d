"""A cell's host tool calls, as an exported notebook records them.

A run result's ``tools`` records (PROTOCOL.md §1) hold each call's name, arguments,
status and size, and what it returned as JSON text when the page kept it (at most
256 KB, never under schema privacy; else ``resultOmitted`` says why). An export keeps
that as ``result`` (JSON data), so a reproduced notebook replays the call instead of
asking a page (``reckon/reproduce``, ``reckon.kernel.set_replay``)."""

from __future__ import annotations

import json

from reckon.agent._types import JSONDict

__all__ = ["ARGS_CHARS", "recorded_calls"]

ARGS_CHARS = 10_000  # a call's arguments, as JSON, kept in the notebook up to this size
_MESSAGE_CHARS = 500


def recorded_calls(result: JSONDict) -> list[JSONDict]:
    """``[{name, args, status, result?, resultOmitted?, message?}]`` of a run result's
    host tool calls, in order; arguments over ``ARGS_CHARS`` of JSON give way to
    ``args_chars``, their size."""
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
        kept = record.get("result")
        if call["status"] == "ok" and isinstance(kept, str):
            try:
                call["result"] = json.loads(kept)
            except ValueError:
                call["resultOmitted"] = "not JSON"
        elif isinstance(record.get("resultOmitted"), str):
            call["resultOmitted"] = str(record["resultOmitted"])[:_MESSAGE_CHARS]
        message = record.get("message")
        if call["status"] != "ok" and isinstance(message, str) and message:
            call["message"] = message[:_MESSAGE_CHARS]
        calls.append(call)
    return calls
