"""Host tool calls answered from a notebook's record instead of a page.

An exported notebook's cell keeps its calls in ``metadata.reckon.tools``: ``[{name,
args, status, result?, resultOmitted?, message?}]`` in call order (PROTOCOL.md §4).
A reproduction sets them as the kernel's replay source (``set_replay``) before it runs
the cell: the cell's calls take the recorded results in order, and nothing else is
called. A call the record cannot answer is the cell's ``ToolError``, "not recorded".

It answers only the calls of the kernel it is set in, from data it was given: a cell
that sets a replay of its own fakes its own results, as it could by writing them, and
no page tool runs for it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["Replay", "unreplayable"]

_SHOWN = 200  # characters of a call's arguments named in a message


def _spelled(name: str, args: Any) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return f"{name}({text if len(text) <= _SHOWN else text[:_SHOWN] + '…'})"


_OMITTED = {
    "privacy": "under schema privacy what a tool returns is the person's data: no record keeps it",
    "too large": "it was over 256 KB, or the cell's results over 1 MB",
    "not JSON": "it was not JSON text",
}


def unreplayable(record: dict[str, Any]) -> str | None:
    """Why a recorded call cannot be replayed, or None when it can: one sentence for
    the cell's ``ToolError`` and for ``reckon reproduce``'s report alike."""
    args, status = record.get("args"), record.get("status")
    # The page keeps arguments over 2,000 characters as {"...": "<size>"}; the export,
    # over 10,000, leaves them out (args_chars).
    if "args" not in record or (isinstance(args, dict) and list(args) == ["..."]):
        return "its arguments were too long to keep"
    if status == "ok" and "result" not in record:
        omitted = str(record.get("resultOmitted") or "")
        return f"its result was not kept ({_OMITTED.get(omitted, omitted or 'no reason given')})"
    if status != "ok" and not isinstance(record.get("message"), str):
        return f"it gave no result in the browser ({status}) and its message was not kept"
    return None


def _refusal(message: str) -> str:
    return json.dumps({"status": "error", "message": f"not recorded: {message}"})


class Replay:
    """A transport (``(name, args_json) -> reply_json``) over recorded calls, in order.

    A call whose name and arguments equal the next record's takes that record's outcome
    and moves on: its result, or the error it was in the browser (refused, denied,
    failed: the recorded message). One the record cannot answer (``unreplayable``: its
    result or its arguments not kept) moves on too and is a "not recorded"
    ``ToolError``; any other call is a "not
    recorded" ``ToolError`` that leaves the next record where it is."""

    def __init__(self, records: list[Any]) -> None:
        self.records = [r for r in records if isinstance(r, dict)]
        self.next = 0

    def __call__(self, name: str, args_json: str) -> str:
        args = json.loads(args_json)
        if self.next >= len(self.records):
            return _refusal(
                f"{_spelled(name, args)}: the notebook records {len(self.records)} tool "
                "call(s) for this cell and every one was replayed; a reproduction answers "
                "only the calls the cell made in the browser"
            )
        record = self.records[self.next]
        wanted = _spelled(str(record.get("name")), record.get("args"))
        why = unreplayable(record)
        if record.get("name") != name or (why is None and record["args"] != args):
            return _refusal(
                f"{_spelled(name, args)}: the next call recorded for this cell is {wanted}; "
                "a reproduction replays the recorded calls in order, with the same arguments"
            )
        self.next += 1
        if why is not None:
            return _refusal(f"{wanted}: {why}, so the notebook has nothing to replay")
        if record.get("status") == "ok":
            return json.dumps({"status": "ok", "text": json.dumps(record["result"])})
        # What the cell got in the browser was this error: it gets it again.
        return json.dumps({"status": "error", "message": record["message"]})
