"""Schema privacy's filter: every protected value in text becomes ``[hidden]``, also in
the forms a cell turns a value into with one line of code.

A value is found as written and:
- in any letter case, and reversed (values of four characters or more: shorter ones
  would hide common words);
- with its characters spaced or separated (``A l i c e``, ``7-3-4-1-2``);
- inside base64 (standard or URL-safe) or hex text;
- as a number: by value (``73400`` is ``73,400.0``), rounded (down to the whole number
  either side), and scaled by a power of ten (``73.4`` for ``73400``) when it has three
  significant digits or more.
Integers from -9 to 9 are never hidden: they are indistinguishable from counts, indexes
and shapes. Anything else a cell computes from a value (an arithmetic mix, a cipher)
passes: SECURITY.md says what schema mode does and does not promise.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import math
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from reckon.agent._types import JSONDict

__all__ = ["HIDDEN", "Redactor", "is_number"]

HIDDEN = "[hidden]"
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w])")
_MAX_DECIMALS = 6
_FOLDED = 4  # values this long or longer are also found in any case and reversed
_SCALED_DIGITS = 3  # significant digits a number needs to be found scaled
_ENCODED = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{8,}={0,2}(?![\w+/=-])")
_SPACED = re.compile(r"(?<!\w)\w(?:[ .,_|/*:~-]{1,3}\w){3,}(?!\w)")
_SQUEEZE_LIMIT = 400  # characters of a spaced run that are searched


def is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip())) and text == text.strip()


def _mantissa(value: float) -> str:
    """The significant digits of ``value``, without sign, point or power of ten."""
    try:
        digits = Decimal(format(abs(value), ".12g")).normalize().as_tuple().digits
    except InvalidOperation:
        return ""
    return "".join(map(str, digits)).strip("0")


def _squeezed(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def _alternation(words: Iterable[str]) -> str:
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(rf"(?<!\w){re.escape(w)}(?!\w)" for w in ordered)


class Redactor:
    """Replaces every protected value in text with ``[hidden]`` and counts them."""

    def __init__(
        self, strings: Iterable[str], numbers: Iterable[float], *, keep: Iterable[str] = ()
    ) -> None:
        kept = set(keep)
        words = {s for s in strings if s.strip() and s not in kept and not is_number(s)}
        # A value that a kept name (a column, a file, a table) differs from only in case
        # is found as written: "Sales" must not hide the table `sales`.
        names = {k.casefold() for k in kept}
        long = {w for w in words if len(w) >= _FOLDED and w.casefold() not in names}
        exact = _alternation(words - long)
        folded = _alternation(long | {w[::-1] for w in long})
        self._exact = re.compile(exact) if exact else None
        self._folded = re.compile(folded, re.IGNORECASE) if folded else None
        squeezed = {_squeezed(w) for w in long}
        self._squeezed = {w for w in squeezed | {w[::-1] for w in squeezed} if len(w) >= _FOLDED}
        self._numbers = {n for n in numbers if n == n}  # NaN never prints as a match
        self._numbers.update(float(s.replace(",", "")) for s in strings if is_number(s))
        fractions = [n for n in self._numbers if n != round(n) and abs(n) < 1e15]
        self._rounded = [{round(n, d) for n in fractions} for d in range(_MAX_DECIMALS + 1)]
        # A value shown as a whole number (rounded, truncated or ceiled) is still that value.
        self._rounded[0] = {float(f(n)) for n in fractions for f in (math.floor, math.ceil)}
        self._mantissas = {
            m for m in map(_mantissa, self._numbers if len(self._numbers) < 10**6 else ())
            if len(m) >= _SCALED_DIGITS
        }  # fmt: skip

    def redact(self, text: str) -> tuple[str, int]:
        if not text:
            return text, 0
        text, count = self._plain(text)
        total = count

        def encoded(match: re.Match[str]) -> str:
            nonlocal total
            run = match.group(0)
            if any(self._plain(decoded)[1] for decoded in _decodings(run)):
                total += 1
                return HIDDEN
            return run

        def spaced(match: re.Match[str]) -> str:
            nonlocal total
            run = match.group(0)
            joined = re.sub(r"[\W_]+", "", run)
            if self._plain(joined)[1] or self._holds_squeezed(joined.casefold()):
                total += 1
                return HIDDEN
            return run

        text = _ENCODED.sub(encoded, text)
        return _SPACED.sub(spaced, text), total

    def _holds_squeezed(self, joined: str) -> bool:
        """Whether a value, its spaces and punctuation taken out, is part of ``joined``."""
        joined = joined[:_SQUEEZE_LIMIT]
        return any(
            joined[i:j] in self._squeezed
            for i in range(len(joined))
            for j in range(i + _FOLDED, len(joined) + 1)
        )

    def _plain(self, text: str) -> tuple[str, int]:
        """``text`` with the values hidden as written, in case and reversed, and numbers."""
        count = 0

        def hide(_: re.Match[str]) -> str:
            nonlocal count
            count += 1
            return HIDDEN

        for pattern in (self._folded, self._exact):
            if pattern is not None:
                text = pattern.sub(hide, text)

        def number(match: re.Match[str]) -> str:
            return hide(match) if self._protected(match.group(0)) else match.group(0)

        return _NUMBER.sub(number, text), count

    def _protected(self, token: str) -> bool:
        value = float(token.replace(",", ""))
        if value == int(value) and -9 <= value <= 9:
            return False
        if value in self._numbers:
            return True
        if value == int(value) and value in self._rounded[0]:
            return True
        decimals = len(token.split(".", 1)[1]) if "." in token and "e" not in token.lower() else 0
        if 0 < decimals <= _MAX_DECIMALS and value in self._rounded[decimals]:
            return True
        return _mantissa(value) in self._mantissas

    def filter_result(self, result: JSONDict) -> tuple[JSONDict, int]:
        """A copy of a run result with every protected value hidden (the model's view)."""
        total = 0

        def clean(value: Any) -> Any:
            nonlocal total
            if not isinstance(value, str):
                return value
            text, count = self.redact(value)
            total += count
            return text

        filtered = {k: clean(v) for k, v in result.items() if k in {"stdout", "stderr"}}
        filtered.update({k: v for k, v in result.items() if k not in filtered})
        value = result.get("result")
        if isinstance(value, dict):
            filtered["result"] = {"type": value.get("type"), "text": clean(value.get("text"))}
        error = result.get("error")
        if isinstance(error, dict):
            filtered["error"] = {k: clean(v) for k, v in error.items()}
        if result.get("assigned") is not None:
            filtered["assigned"] = [
                {"name": a.get("name"), "type": a.get("type"), "text": clean(a.get("text"))}
                for a in result.get("assigned") or []
                if isinstance(a, dict)
            ]
        filtered["figures"] = [
            {"description": clean(f.get("description"))}
            for f in result.get("figures") or []
            if isinstance(f, dict)
        ]
        files = [f for f in result.get("files") or [] if isinstance(f, dict)]
        filtered["files"] = [{**f, "path": clean(f.get("path"))} for f in files]
        return filtered, total


def _decodings(run: str) -> list[str]:
    """The text ``run`` stands for as base64 or hex, where it is text."""
    out: list[str] = []
    candidates: list[bytes] = []
    if len(run) % 2 == 0 and re.fullmatch(r"[0-9a-fA-F]+", run):
        candidates.append(bytes.fromhex(run))
    padded = run + "=" * (-len(run) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        with contextlib.suppress(binascii.Error, ValueError):
            candidates.append(decode(padded))
    for raw in candidates:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text.isprintable() and any(c.isalnum() for c in text):  # not chance bytes
            out.append(text)
    return out
