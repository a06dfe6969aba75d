"""Approval before a run: the person runs, edits or rejects each cell the model wrote.

In ``ask`` mode the loop hands a proposal ``{id, code, tool}`` to a decision
callback and waits. The answer is ``{"action": "run"}``, ``{"action": "edit",
"code": ...}`` or ``{"action": "reject", "reason": ...}``. The model is told what
happened in the observation it reads next: an edit shows the code that really ran,
a rejection carries the reason and nothing runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from reckon._exceptions import ProtocolError
from reckon.agent._types import JSONDict
from reckon.agent.models._fences import fence

__all__ = ["APPROVAL_MODES", "Decide", "Decision", "edited_note", "parse_decision", "rejected_note"]

APPROVAL_MODES = ("auto", "ask")
Decide = Callable[[JSONDict], Awaitable[JSONDict]]


@dataclass(frozen=True)
class Decision:
    action: str  # run, edit or reject
    code: str = ""
    reason: str = ""


def parse_decision(raw: object, proposed: str) -> Decision:
    """Check one answer to a proposal; bad input raises with what to send instead."""
    if not isinstance(raw, dict):
        raise ProtocolError('a decision must be an object like {"action": "run"}')
    action = raw.get("action")
    if action == "run":
        return Decision("run", proposed)
    if action == "edit":
        code = raw.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ProtocolError(
                'an "edit" decision needs the edited code: {"action": "edit", "code": "..."}'
            )
        if code == proposed:
            return Decision("run", proposed)
        return Decision("edit", code)
    if action == "reject":
        reason = raw.get("reason", "")
        if not isinstance(reason, str):
            raise ProtocolError('a "reject" decision\'s reason must be a string')
        return Decision("reject", reason=reason.strip())
    raise ProtocolError(f'a decision\'s action must be "run", "edit" or "reject", got {action!r}')


def edited_note(code: str) -> str:
    return (
        "The user edited your code before running it. This is the code that ran "
        f"(build on it, not on your version):\n{fence(code)}"
    )


def rejected_note(reason: str) -> str:
    why = reason or "(no reason given)"
    return (
        "status: rejected (the user did not let this code run; nothing ran)\n"
        f"reason from the user: {why}\n"
        "Take the reason into account: change the approach or answer without running it."
    )
