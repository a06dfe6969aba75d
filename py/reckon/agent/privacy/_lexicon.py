"""Finding many values in a text at once, by hashing instead of one regular expression.

A regular expression of 30,000 alternatives took 18 s over a 6,000-character output;
these look each candidate up in a set, which takes milliseconds whatever the number of
values. Both find a value only where it stands alone: not inside a longer word.

- ``Lexicon``: values as written, or in any case (``fold``).
- ``Squeezed``: values with their separators collapsed (letters and digits only, any
  case): ``CorneliusAshdown``, ``Cornelius_Ashdown``, ``C-o-r-n-e-l-i-u-s`` and
  ``555 01 2345`` are ``Cornelius Ashdown`` and ``555-01-2345``. A candidate is a run of
  letter-and-digit groups (a case change inside a word, ``AshDown``, and a change between
  letters and digits start a new group) with at most ``_GAP`` characters between two
  groups; a value of digits only is found spaced one digit apart (``7 3 4 1 2``) or,
  when it has six digits or more, in any grouping, and from four digits when a hyphen
  or dash joins its groups (``73-412``, ``7341 - 2``). One line break may be crossed
  where a value was printed in parts (``Cornelius`` on one line, ``Ashdown`` on the next; a
  character or a digit a line; two, where a space was printed as a line of its own),
  not between groups of several digits (two numbers on two lines are two numbers). A
  decimal point or comma between digits is part of a number, never a separator, except
  that a value of six digits or more is found with two points or more between its
  groups (``555.01.2345``: no number has two decimal points).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

__all__ = ["Lexicon", "Squeezed", "squeeze"]

_GAP = 8  # separator characters between two groups of a squeezed value
_MIN_SQUEEZED = 4
_MIN_DIGITS_GROUPED = 6


def squeeze(text: str) -> str:
    return "".join(c for c in text if c.isalnum()).lower()


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class Lexicon:
    """Values found where they stand alone (no letter, digit or ``_`` on either side)."""

    def __init__(self, values: Iterable[str], *, fold: bool = False) -> None:
        self.fold = fold
        self._by_length: dict[int, set[str]] = {}
        for value in values:
            key = _lower(value) if fold else value
            if key:
                self._by_length.setdefault(len(key), set()).add(key)
        self._lengths = sorted(self._by_length)

    def __bool__(self) -> bool:
        return bool(self._lengths)

    def find(self, text: str) -> list[tuple[int, int]]:
        if not self._lengths or not text:
            return []
        key = _lower(text) if self.fold else text
        word = [c.isalnum() or c == "_" for c in key]
        size = len(key)
        ends = [e for e in range(size + 1) if e == size or not word[e]]
        shortest, longest = self._lengths[0], self._lengths[-1]
        found = []
        count = len(ends)
        for start in range(size - shortest + 1):
            if start and word[start - 1]:
                continue
            at = bisect.bisect_left(ends, start + shortest)
            while at < count:
                end = ends[at]
                length = end - start
                if length > longest:
                    break
                values = self._by_length.get(length)
                if values is not None and key[start:end] in values:
                    found.append((start, end))
                at += 1
        return found


class Squeezed:
    """Values found with their separators collapsed (see the module's docstring)."""

    def __init__(self, values: Iterable[str]) -> None:
        self._words: dict[int, set[str]] = {}
        self._digits: dict[int, set[str]] = {}
        for value in values:
            key = squeeze(value)
            if len(key) < _MIN_SQUEEZED:
                continue
            table = self._digits if key.isdigit() else self._words
            table.setdefault(len(key), set()).add(key)
        self._lengths = sorted(set(self._words) | set(self._digits))

    def __bool__(self) -> bool:
        return bool(self._lengths)

    def find(self, text: str) -> list[tuple[int, int]]:
        """Spans of ``text`` (its own positions) that squeeze to a value."""
        if not self._lengths:
            return []
        groups = _groups(text)
        found = []
        for first in range(len(groups)):
            length, single, lines, dashed, points = 0, True, False, True, 0
            for last in range(first, len(groups)):
                start, end, gap = groups[last]
                if last > first and gap == _WALL:
                    break
                points += last > first and gap == _POINT
                lines = lines or (last > first and gap == _LINE)
                dashed = dashed and (last == first or gap == _DASH)
                length += end - start
                single = single and end - start == 1
                if length > self._lengths[-1]:
                    break
                squeezed = None
                if points == 1:  # a decimal point: one number, not a value's parts
                    continue
                if length in self._words and not points:
                    squeezed = _squeezed(text, groups, first, last)
                    if squeezed in self._words[length]:
                        found.append((groups[first][0], end))
                        continue
                digits = self._digits.get(length)
                grouped = length >= _MIN_DIGITS_GROUPED and not lines
                if points and not (grouped and all_digits(text, groups, first, last)):
                    continue
                if digits and (single or grouped or (dashed and last > first)):
                    squeezed = squeezed or _squeezed(text, groups, first, last)
                    if squeezed in digits:
                        found.append((groups[first][0], end))
        return found


def _squeezed(text: str, groups: list[tuple[int, int, int]], first: int, last: int) -> str:
    return "".join(text[a:b] for a, b, _ in groups[first : last + 1]).lower()


def all_digits(text: str, groups: list[tuple[int, int, int]], first: int, last: int) -> bool:
    return all(text[a:b].isdigit() for a, b, _ in groups[first : last + 1])


# The gap before a group: crossed, a line break, not crossed, one hyphen or dash, a
# point between digits (crossed only twice or more: ``555.01.2345`` is no one number).
_OPEN, _LINE, _WALL, _DASH, _POINT = 0, 1, 2, 3, 4
_DASHES = {"-", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212"}


def _groups(text: str) -> list[tuple[int, int, int]]:
    """``(start, end, gap)`` for each group of letters or digits; ``gap``: whether the
    gap before it is crossed (``_OPEN``), is a line break or two (``_LINE``), or is not
    (``_WALL``: too long, more lines, a decimal point)."""
    groups: list[tuple[int, int, int]] = []
    start = None
    previous_end = 0
    for index, char in enumerate(text + "\0"):
        if start is not None:
            before = text[index - 1]
            if char.isalnum() and not _new_group(before, char):
                continue
            gap = text[previous_end:start]
            kind = _WALL if not groups else _gap(gap, text, previous_end, start)
            groups.append((start, index, kind))
            previous_end, start = index, None
        if char.isalnum():
            start = index
    return groups


def _new_group(before: str, char: str) -> bool:
    if before.isdigit() != char.isdigit():
        return True
    return before.islower() and char.isupper()


def _gap(gap: str, text: str, gap_start: int, gap_end: int) -> int:
    if len(gap) > _GAP:
        return _WALL
    if "\n" in gap or "\r" in gap:
        # A space printed on a line of its own makes two breaks (``s``, `` ``, ``A``).
        breaks = gap.replace("\r\n", "\n").count("\n") + gap.count("\r") - gap.count("\r\n")
        return _LINE if breaks <= 2 else _WALL
    if gap.strip(" ") in _DASHES:
        return _DASH
    if gap in (".", ",") and gap_start > 0 and gap_end < len(text):
        if not (text[gap_start - 1].isdigit() and text[gap_end].isdigit()):
            return _OPEN
        return _POINT if gap == "." else _WALL
    return _OPEN
