"""Run results turned into the text the model reads after each cell.

The format is plain labelled sections (``status:``, ``error:``, ``stdout:``…) so a
model reads it easily and ``parse_observation`` can split it again (the demo
model answers from these sections). The error comes first: it is what the model
must act on. PNGs never go to the model: only the
figures' text descriptions do.
"""

from __future__ import annotations

import re

from reckon.agent._types import JSONDict

__all__ = [
    "OBSERVATION_HEADER",
    "format_observation",
    "observation_message",
    "parse_observation",
    "trim_text",
    "user_text",
]

# Prefix of an observation sent as a user message (code-block mode).
OBSERVATION_HEADER = "Output of the code you ran:"
# Said after the outputs in code-block mode. A small model writes a guessed answer
# beside its code; told what to do with the output, it answers from the output.
NEXT_AFTER_OK = (
    "If this output answers the question, give the final answer from it; otherwise run more code."
)
NEXT_AFTER_ERROR = "Fix the error and run the corrected code."
_TRACEBACK_LIMIT = 2500
_STATUS_WORDS = {
    "ok": "ok",
    "error": "error",
    "timeout": "timeout (the cell ran too long and was stopped)",
    "interrupted": "interrupted (stopped by the user)",
}


def trim_text(text: str, limit: int) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters, with a note."""
    if limit <= 0 or len(text) <= limit:
        return text
    note_room = 60
    keep = max(limit - note_room, 20)
    head = keep * 2 // 3
    tail = keep - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n… [{omitted} characters omitted] …\n{text[len(text) - tail :]}"


def format_observation(result: JSONDict, *, limit: int = 6000) -> str:
    """The model-facing text for one run result (PROTOCOL section 1)."""
    status = str(result.get("status", "error"))
    duration = result.get("duration_ms")
    head = _STATUS_WORDS.get(status, status)
    if isinstance(duration, int | float):
        head += f" ({duration:.0f} ms)"
    parts = [f"status: {head}"]
    error = result.get("error")
    if isinstance(error, dict):
        line = f" (cell line {error['line']})" if error.get("line") else ""
        parts.append(f"error: {error.get('type', 'Error')}: {error.get('message', '')}{line}")
        if error.get("hint"):
            parts.append(f"hint: {error['hint']}")
        traceback = str(error.get("traceback") or "").rstrip()
        if traceback:
            parts.append(f"traceback:\n{trim_text(traceback, _TRACEBACK_LIMIT)}")
    stdout = str(result.get("stdout") or "")
    stderr = str(result.get("stderr") or "")
    if stdout:
        parts.append(f"stdout:\n{stdout.rstrip()}")
    if stderr:
        parts.append(f"stderr:\n{stderr.rstrip()}")
    value = result.get("result")
    if isinstance(value, dict) and value.get("text") is not None:
        parts.append(f"value ({value.get('type', 'object')}):\n{str(value['text']).rstrip()}")
    assigned = [a for a in result.get("assigned") or [] if isinstance(a, dict)]
    if assigned:
        lines = [f"{a.get('name')} = {str(a.get('text')).rstrip()}" for a in assigned]
        parts.append("values assigned (the cell printed nothing):\n" + "\n".join(lines))
    figures = [f for f in result.get("figures") or [] if isinstance(f, dict)]
    if figures:
        lines = [f"- {f.get('description') or 'a figure'}" for f in figures]
        parts.append("figures (shown to the user):\n" + "\n".join(lines))
    files = [f for f in result.get("files") or [] if isinstance(f, dict)]
    if files:
        lines = [
            f"- {f.get('path')} ({f.get('change', 'created')}, {f.get('size', '?')} bytes)"
            for f in files
        ]
        parts.append("files (the user can download these):\n" + "\n".join(lines))
    notes = []
    if result.get("truncated"):
        notes.append("- the output went over the sandbox's cap and was cut")
    if result.get("restarted"):
        notes.append("- the sandbox was restarted: all variables and /output files are gone")
    silent = not stdout and not stderr and value is None and not figures and not assigned
    if silent and status == "ok":
        notes.append("- the code printed nothing; print what you need to see")
    if notes:
        parts.append("notes:\n" + "\n".join(notes))
    text = "\n".join(parts)
    if len(text) > limit:
        text = trim_text(text, limit) + "\n(the observation was shortened; print less or slice it)"
    return text


def observation_message(observations: list[str]) -> str:
    """One user message with the outputs of a reply's cells, and what to do next."""
    joined = "\n\n".join(f"{OBSERVATION_HEADER}\n{o}" for o in observations)
    failed = any(o.startswith(("status: error", "status: timeout")) for o in observations)
    return f"{joined}\n\n{NEXT_AFTER_ERROR if failed else NEXT_AFTER_OK}"


def user_text(message: JSONDict) -> str | None:
    """The text of a user message that is not a cell's output (code-block mode sends
    those as user messages too), or ``None``."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return None
    return None if content.startswith(OBSERVATION_HEADER) else content


def parse_observation(text: str) -> dict[str, str]:
    """Split an observation back into its sections (``status``, ``stdout``, ``error``…).

    Headers are only recognised in their fixed order, so a printed line such as
    ``error: 3`` inside stdout does not start a new section.
    """
    if text.startswith(OBSERVATION_HEADER):
        text = text[len(OBSERVATION_HEADER) :].lstrip("\n")
    for tail in (NEXT_AFTER_OK, NEXT_AFTER_ERROR):
        text = text.removesuffix(f"\n\n{tail}")
    sections: dict[str, str] = {}
    order = -1
    current: str | None = None
    for line in text.splitlines():
        found = _header(line, after=order)
        if found is not None:
            order, current, rest = found
            sections[current] = rest
            continue
        if current is not None:
            sections[current] = f"{sections[current]}\n{line}" if sections[current] else line
    return sections


def _header(line: str, *, after: int) -> tuple[int, str, str] | None:
    for position, (name, pattern) in enumerate(_HEADERS):
        if position <= after:
            continue
        match = pattern.match(line)
        if match:
            return position, name, (match.group(1) or "").strip()
    return None


_HEADERS = [
    ("status", re.compile(r"^status: (.*)$")),
    ("error", re.compile(r"^error: (.*)$")),
    ("hint", re.compile(r"^hint: (.*)$")),
    ("traceback", re.compile(r"^traceback:()$")),
    ("stdout", re.compile(r"^stdout:()$")),
    ("stderr", re.compile(r"^stderr:()$")),
    ("value", re.compile(r"^value \([^)\n]*\):()$")),
    ("figures", re.compile(r"^figures \(shown to the user\):()$")),
    ("files", re.compile(r"^files \(the user can download these\):()$")),
    ("notes", re.compile(r"^notes:()$")),
]
