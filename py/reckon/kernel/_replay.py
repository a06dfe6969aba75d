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

__all__ = ["Replay"]

_SHOWN = 200  # characters of a call's arguments named in a message


def _spelled(name: str, args: Any) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return f"{name}({text if len(text) <= _SHOWN else text[:_SHOWN] + '…'})"


def _refusal(message: str) -> str:
    return json.dumps({"status": "error", "message": f"not recorded: {message}"})


class Replay:
    """A transport (``(name, args_json) -> reply_json``) over recorded calls, in order.

    A call whose name and arguments equal the next record's takes that record's outcome
    and moves on: its result, or the error it was in the browser (refused, denied,
    failed: the recorded message). One whose result was not kept (privacy, too large)
    moves on too and is a "not recorded" ``ToolError``; any other call is a "not
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
        if record.get("name") != name or "args" not in record or record["args"] != args:
            return _refusal(
                f"{_spelled(name, args)}: the next call recorded for this cell is {wanted}; "
                "a reproduction replays the recorded calls in order, with the same arguments"
            )
        self.next += 1
        status = record.get("status")
        if status == "ok" and "result" in record:
            return json.dumps({"status": "ok", "text": json.dumps(record["result"])})
        if status != "ok" and isinstance(record.get("message"), str):
            # What the cell got in the browser was this error: it gets it again.
            return json.dumps({"status": "error", "message": record["message"]})
        if status != "ok":
            why = f"it gave no result in the browser ({status}) and its message was not kept"
        else:
            omitted = record.get("resultOmitted")
            why = f"its result was not kept ({omitted})" if omitted else "its result was not kept"
        return _refusal(f"{wanted}: {why}, so the notebook has nothing to replay")
