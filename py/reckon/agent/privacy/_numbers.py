"""Schema privacy's protected numbers, found in text in the forms a number is shown in:
by value (``73400`` is ``73,400.0``), rounded (down to the whole number either side),
scaled by a power of ten (``73.4`` for ``73400``) when it has three significant digits
or more, written backwards when it has four digits or more, with a suffix of up to
three letters (``73.4k``, ``73412USD``), and a whole number spaced out or in long
groupings (``7 3 4 1 2``, ``73-412``). ``_redactor`` reads each view of a text with it.

Integers from -9 to 9 are never protected: they are counts, indexes and shapes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from reckon.agent.privacy._lexicon import Squeezed

__all__ = ["ProtectedNumbers", "is_number"]

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w])")
# A number with a unit or a suffix of up to three letters right after it (73.4k, 73412USD).
_SUFFIXED = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?=[A-Za-z]{1,3}(?![\w]))")
_MAX_DECIMALS = 6
_BACKWARDS = 4  # numbers with this many digits or more are also found written backwards
_SCALED_DIGITS = 3  # significant digits a number needs to be found scaled


def is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip())) and text == text.strip()


class ProtectedNumbers:
    """The protected numbers (those given, and the strings that are numbers), and where
    text shows one of them."""

    def __init__(self, numbers: Iterable[float], strings: Iterable[str]) -> None:
        # NaN never prints as a match, and an infinity (inf, 1e999) says nothing of a row.
        self._numbers = {n for n in numbers if math.isfinite(n)}
        written = (float(s.replace(",", "")) for s in strings if is_number(s))
        self._numbers.update(n for n in written if math.isfinite(n))
        fractions = [n for n in self._numbers if n != round(n) and abs(n) < 1e15]
        # A value shown with fewer decimals, rounded, truncated or ceiled (88123.75 as
        # 88123.8, 88123.7, 88124 or 88123), is still that value.
        self._rounded = [
            {round(n, d) for n in fractions}
            | {f(n * 10**d) / 10**d for n in fractions for f in (math.floor, math.ceil)}
            for d in range(_MAX_DECIMALS + 1)
        ]
        self._mantissas = {
            m for m in map(_mantissa, self._numbers if len(self._numbers) < 10**6 else ())
            if len(m) >= _SCALED_DIGITS
        }  # fmt: skip
        # Whole numbers spaced out one digit apart (7 3 4 1 2) or in long groupings.
        whole = {str(int(abs(n))) for n in self._numbers if n == int(n) and abs(n) >= 1000}
        self.spaced = Squeezed(w for w in whole if abs(int(w)) < 10**18)
        # A number printed backwards (``21437`` for 73412, ``57.32188`` for 88123.75).
        self._reversed = {r for r in map(_reversed, self._numbers) if r is not None}

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The spans of ``text`` that are a protected number (spaced-out ones: ``spaced``)."""
        if not self._numbers:
            return []
        found = [*_NUMBER.finditer(text), *_SUFFIXED.finditer(text)]
        return [m.span() for m in found if self._protected(m.group(0))]

    def _protected(self, token: str) -> bool:
        value = float(token.replace(",", ""))
        if not math.isfinite(value):  # 10**400 or 1e999 printed: past any value's range
            return False
        if value == int(value) and -9 <= value <= 9:
            return False
        if value in self._numbers or value in self._reversed:
            return True
        if value == int(value) and value in self._rounded[0]:
            return True
        decimals = len(token.split(".", 1)[1]) if "." in token and "e" not in token.lower() else 0
        if 0 < decimals <= _MAX_DECIMALS and value in self._rounded[decimals]:
            return True
        return _mantissa(value) in self._mantissas


def _mantissa(value: float) -> str:
    """The significant digits of ``value``, without sign, point or power of ten."""
    try:
        digits = Decimal(format(abs(value), ".12g")).normalize().as_tuple().digits
    except InvalidOperation:
        return ""
    return "".join(map(str, digits)).strip("0")


def _reversed(value: float) -> float | None:
    """``value`` written backwards, when it has four digits or more and does not end in
    a zero (backwards, a leading zero would make it a shorter, common number)."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return None
    text = str(int(abs(value))) if value == int(value) else repr(abs(value))
    digits = text.replace(".", "")
    if len(digits) < _BACKWARDS or text.endswith("0") or "e" in text or not digits.isdigit():
        return None
    return float(text[::-1])
