"""The message shapes that cross between Python and JavaScript, typed once.

PROTOCOL.md describes exactly these (its JavaScript twin is ``web/shared/protocol.js``);
``tests/build/test_protocol_doc.py`` checks that the three agree. Every result is a
JSON-ready dict with a ``status``; every request or event has a ``type``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "AGENT_ALLOWED",
    "AGENT_EVENTS",
    "AGENT_METHODS",
    "SANDBOX_METHODS",
    "AskOutcome",
    "Assigned",
    "Call",
    "Figure",
    "FileChange",
    "FileEntry",
    "Formulas",
    "ListReply",
    "Reply",
    "RunError",
    "RunResult",
    "RunValue",
]

# The sandbox worker's methods; the page answers `interrupt` and `scan` itself (PROTOCOL.md §3).
SANDBOX_METHODS = (
    "boot",
    "run",
    "writeFile",
    "mountFile",
    "readFile",
    "listFiles",
    "inspect",
    "deleteFile",
    "reset",
)
# What the agent may ask the page to do in the sandbox (the agent-allowed column).
AGENT_ALLOWED = ("run", "listFiles", "inspect", "interrupt", "scan", "tools")
# The agent worker's methods and events (PROTOCOL.md §4).
AGENT_METHODS = (
    "start",
    "ask",
    "stop",
    "reset",
    "transcript",
    "configure",
    "decide",
    "exportState",
    "importState",
    "exportSession",
    "importNotebook",
    "relayTools",
    "relayTool",
    "cancelRelayTool",
)
AGENT_EVENTS = ("step", "delta", "waiting", "usage", "proposal")


class Call(TypedDict):
    """A request to a worker (or from the agent worker to the page)."""

    type: Literal["call"]
    id: int
    method: str
    args: dict[str, Any]


class Reply(TypedDict):
    """The answer to a ``Call`` with the same id; the method's fields beside ``status``."""

    type: Literal["reply"]
    id: int
    status: str
    message: NotRequired[str]


class RunError(TypedDict):
    type: str
    message: str
    traceback: str
    line: int | None


class RunValue(TypedDict):
    type: str
    text: str
    html: NotRequired[str]


class Figure(TypedDict):
    png: str
    width: int
    height: int
    description: str


class Formulas(TypedDict):
    """Cells of a spreadsheet file that a spreadsheet program would run (§1)."""

    count: int
    first: str
    checked: bool


class FileChange(TypedDict):
    path: str
    size: int
    change: Literal["created", "modified"]
    formulas: NotRequired[Formulas]


class Assigned(TypedDict):
    name: str
    type: str
    text: str


class RunResult(TypedDict):
    """What ``Session.run()`` returns and ``window.reckon.run()`` resolves to (§1)."""

    status: Literal["ok", "error", "timeout", "interrupted"]
    stdout: str
    stderr: str
    truncated: bool
    result: RunValue | None
    figures: list[Figure]
    files: list[FileChange]
    error: RunError | None
    duration_ms: float
    restarted: bool
    assigned: NotRequired[list[Assigned]]
    notes: NotRequired[list[str]]
    # Added by the page to a run that called host tools (web/tools.js).
    tools: NotRequired[list[dict[str, Any]]]


class FileEntry(TypedDict):
    path: str
    name: str
    size: int
    is_dir: bool
    mtime: float


class ListReply(TypedDict):
    """The sandbox's ``listFiles`` reply payload."""

    status: Literal["ok", "error"]
    files: NotRequired[list[FileEntry]]
    message: NotRequired[str]


class AskOutcome(TypedDict):
    """The agent's ``ask`` reply payload (docs/javascript.md, ``ask()``)."""

    status: str
    answer: str
    steps: list[Any]
    message: NotRequired[str]
    usage: NotRequired[dict[str, Any]]
    sessionUsage: NotRequired[dict[str, Any]]
    privacy: NotRequired[str]
    verification: NotRequired[dict[str, Any]]
    grounding: NotRequired[dict[str, Any]]
