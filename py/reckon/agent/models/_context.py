"""Keeping a conversation inside the model's context window.

A long session outgrows a small model's window (8k tokens for a laptop model). Then
the history is cut, never the current question: first the long outputs of earlier
questions are shortened, then whole earlier questions are left out (oldest first,
each with its calls and results, so no tool call loses its answer), then the older
outputs of the current question. A question left out keeps a line in the system
prompt, its words and its answer's (numbers and all), so a follow-up can still
build on the first answer of a long conversation; the recap keeps to a quarter of
what is kept, its middle lines going first. The cut history replaces the
agent's own, so the requests after it extend it byte for byte again and a server's
prompt cache keeps working; and it is cut below the window (to 60% of it, where 85%
triggers a cut), so the next few questions fit without another cut.
"""

from __future__ import annotations

import json
import re

from reckon._exceptions import ModelError
from reckon.agent._types import JSONDict
from reckon.agent.checks._recheck import is_question

__all__ = ["LEFT_OUT", "RECAP", "estimate_tokens", "fit_messages", "is_overflow"]

LEFT_OUT = "(Earlier parts of this conversation were left out to fit the model's context.)"
RECAP = "Earlier questions and their answers:"
_SHORT = 240
_RECAP_QUESTION = 120
_RECAP_ANSWER = 200
_RECAP_SHARE = 4  # the recap takes at most a quarter of what is kept
_OVERFLOW = re.compile(
    r"context (?:length|window|size)|maximum context|too many tokens|prompt is too long"
    r"|exceeds? (?:the )?(?:context|max)|requested tokens|n_ctx|context_length_exceeded",
    re.IGNORECASE,
)


def estimate_tokens(messages: list[JSONDict]) -> int:
    """A cautious estimate (code and JSON run about 3.5 characters a token)."""
    return int(sum(len(json.dumps(m, ensure_ascii=False)) for m in messages) / 3.5) + 8


def is_overflow(exc: ModelError) -> bool:
    """Whether the model server refused the request for being longer than its window."""
    return exc.status in (None, 400, 413, 422, 500) and bool(_OVERFLOW.search(str(exc)))


def _is_question(message: JSONDict) -> bool:
    # Not a cell's output, nor one of Reckon's own messages (a recheck, a fresh start).
    return is_question(message)


def _is_output(message: JSONDict) -> bool:
    return message.get("role") == "tool" or (
        message.get("role") == "user" and not _is_question(message)
    )


def _shorten(message: JSONDict) -> JSONDict:
    content = message.get("content")
    if not isinstance(content, str) or len(content) <= _SHORT:
        return message
    cut = content[:_SHORT].rstrip()
    return {**message, "content": f"{cut}\n[… the rest of this output was left out …]"}


def fit_messages(
    messages: list[JSONDict], *, limit: int, target: int | None = None
) -> list[JSONDict]:
    """``messages`` when they fit in ``limit`` tokens, else cut to about ``target``.

    A cut rewrites the system message (its recap) and so the start of every request
    after it, which a server's prompt cache then reads anew: cut to ``limit`` exactly,
    a long chat at its window was cut, and read whole, at every question. Cut lower,
    the next questions extend the history as it is (``target``: a share of ``limit``)."""
    if estimate_tokens(messages) <= limit or len(messages) < 3:
        return messages
    limit = limit if target is None else min(limit, target)
    questions = [i for i, m in enumerate(messages) if _is_question(m)]
    current = questions[-1] if questions else len(messages) - 1
    head = messages[:1] if messages[0].get("role") == "system" else []
    body = messages[len(head) :]
    current -= len(head)
    older = [_shorten(m) if _is_output(m) else m for m in body[:current]]
    rest = body[current:]
    # The recap of earlier cuts is rewritten with this one's, a share of the window at
    # most: kept whole, the lines of dozens of asks filled a small window.
    recaps = _recap_lines(head)
    head = _unrecapped(head)
    cut = older != body[:current] or bool(recaps)
    while True:
        fitted = _with_note(head, cut, recaps) + older + rest
        if estimate_tokens(fitted) <= limit:
            return fitted
        starts = [i for i, m in enumerate(older) if _is_question(m)]
        if not older:
            break
        # Leave out the oldest question with everything that answered it; its words
        # and its answer stay as a line of the recap.
        end = starts[1] if len(starts) > 1 else len(older)
        recap = _recap(older[:end])
        if recap:
            recaps = _thinned([*recaps, recap], limit // _RECAP_SHARE)
        older, cut = older[end:], True
    outputs = [i for i, m in enumerate(rest) if _is_output(m)]
    for index in outputs[:-2]:  # the two newest outputs stay whole
        rest[index] = _shorten(rest[index])
        fitted = _with_note(head, True, recaps) + rest
        if estimate_tokens(fitted) <= limit:
            return fitted
    # The recap goes last, the middle of it first: the first answer and the newest stay.
    while len(recaps) > 2 and estimate_tokens(_with_note(head, True, recaps) + rest) > limit:
        del recaps[len(recaps) // 2]
    return _with_note(head, True, recaps) + rest


def _thinned(recaps: list[str], tokens: int) -> list[str]:
    """``recaps`` in about ``tokens``, the middle lines out first (the first answer, on
    which a long chat builds, and the newest stay)."""
    while len(recaps) > 2 and sum(len(line) for line in recaps) / 3.5 > tokens:
        del recaps[len(recaps) // 2]
    return recaps


def _recap_lines(head: list[JSONDict]) -> list[str]:
    """The recap's lines in the system message, from earlier cuts."""
    content = str(head[0].get("content", "")) if head else ""
    _, found, lines = content.partition(f"\n{RECAP}\n")
    return lines.split("\n") if found else []


def _unrecapped(head: list[JSONDict]) -> list[JSONDict]:
    """The system message without its recap's lines (the note that a cut was made stays)."""
    if not _recap_lines(head):
        return head
    content = str(head[0].get("content", ""))
    return [{**head[0], "content": content.partition(f"\n{RECAP}\n")[0]}]


def _recap(span: list[JSONDict]) -> str:
    """One line for a question left out: what was asked and the answer it got."""
    question = next((str(m.get("content")) for m in span if _is_question(m)), "")
    answers = [
        str(m.get("content"))
        for m in span
        if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls")
    ]
    if not question:
        return ""
    answer = " ".join((answers[-1] if answers else "(no answer)").split())
    asked = " ".join(question.split())
    return f"- Q: {_cut(asked, _RECAP_QUESTION)} A: {_cut(answer, _RECAP_ANSWER)}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _with_note(head: list[JSONDict], cut: bool, recaps: list[str] | None = None) -> list[JSONDict]:
    """The system message with the note that the history was cut, and the recap of the
    questions left out (``head`` holds none: ``_unrecapped``)."""
    if not cut or not head:
        return list(head)
    content = str(head[0].get("content", ""))
    if LEFT_OUT not in content:
        content = f"{content}\n\n{LEFT_OUT}"
    if recaps:
        content += f"\n{RECAP}\n" + "\n".join(recaps)
    return [{**head[0], "content": content}]
