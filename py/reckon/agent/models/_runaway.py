"""Noticing a reply that has stopped saying anything new.

A small local model sometimes falls into a loop (the same line, or the same few
characters, again and again) and would go on until the context window is full: at a
few tokens a second on a laptop CPU that is many minutes of nothing (one benchmark
question waited ten). The stream is cut once the loop is plain, and the reply is
kept up to where the repeating began.
"""

from __future__ import annotations

__all__ = ["RunawayGuard"]

_CHECK_EVERY = 200  # characters between checks: the checks stay cheap
_LINES = 24  # this many identical trailing lines is a loop
_TAIL = 480  # or the last this-many characters made of one short piece repeated
_PIECE = 40


class RunawayGuard:
    """Fed the reply's text as it streams; ``cut`` is where to end it, once looping."""

    def __init__(self) -> None:
        self._text = ""
        self._checked = 0
        self.cut: int | None = None

    def feed(self, text: str) -> bool:
        """Add streamed text; True once the reply is looping."""
        if self.cut is not None:
            return True
        self._text += text
        if len(self._text) - self._checked < _CHECK_EVERY:
            return False
        self._checked = len(self._text)
        self.cut = _repeated_lines(self._text)
        if self.cut is None:
            self.cut = _repeated_piece(self._text)
        return self.cut is not None


def _repeated_lines(text: str) -> int | None:
    lines = text.splitlines(keepends=True)
    if len(lines) < _LINES + 1:
        return None
    tail = [line.strip() for line in lines[-_LINES - 1 : -1]]  # the last line may be partial
    if not tail[0] or len(set(tail)) != 1:
        return None
    first = len(lines) - 1 - _LINES
    while first > 0 and lines[first - 1].strip() == tail[0]:
        first -= 1
    return sum(len(line) for line in lines[: first + 1])  # keep one copy


def _repeated_piece(text: str) -> int | None:
    if len(text) < _TAIL:
        return None
    tail = text[-_TAIL:]
    for size in range(1, _PIECE + 1):
        piece = tail[-size:]
        if piece.strip() and (piece * (_TAIL // size + 1))[-_TAIL:] == tail:
            # Where the repeating begins: walk back while the text still has the period.
            start = len(text) - _TAIL
            while start > 0 and text[start - 1] == text[start - 1 + size]:
                start -= 1
            return start + size  # keep one copy
    return None
