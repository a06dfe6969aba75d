"""Schema privacy's views of a text: the forms one line of code turns a value into,
undone, each with a map back to the characters of the text it came from.

- ``normalised``: compatibility forms folded (NFKD: fullwidth letters, ligatures,
  superscripts), accents and other combining marks, format characters (zero-width
  spaces and joiners, soft hyphens) and control characters dropped, tag characters
  read as the ASCII they copy, and escapes decoded: ``\\x43``, octal ``\\103\\157``,
  ``\\u0043``, ``\\U00000043``, ``\\N{LATIN CAPITAL LETTER C}``, URL ``%43``, HTML
  ``&#67;`` / ``&#x43;`` / ``&amp;``, and ``0x`` hex bytes (``0x436f``).
- ``numeric``: the normalised text with numbers written as numbers: ``0x11ec4``,
  ``0o217304`` and ``0b1...`` as decimals, number words (``seventy-three thousand four
  hundred and twelve``) as a number, digit words (``seven three four``) as digits,
  and thousands separated by spaces, ``'``, ``’`` or ``_`` (``73 400``, ``73'400``,
  ``73_400``; thin and no-break spaces fold to spaces) joined.
- ``rot13``: the normalised text with its letters rotated by 13.

A filter finds values in a view and hides the characters of the original text that the
match came from (``View.source``).
"""

from __future__ import annotations

import codecs
import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["View", "folded", "hex_bytes", "normalise", "normalised", "numeric", "rot13"]


@dataclass(frozen=True)
class View:
    """A text derived from an original: character ``i`` came from the original's
    characters ``starts[i]`` to ``ends[i]`` (exclusive)."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> View:
        positions = tuple(range(len(text)))
        return cls(text, positions, tuple(p + 1 for p in positions))

    def source(self, start: int, end: int) -> tuple[int, int]:
        """The original's span that ``text[start:end]`` came from."""
        return self.starts[start], self.ends[end - 1]


def rewrite(view: View, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> View:
    """``view`` with each match of ``pattern`` replaced; a replacement's characters all
    come from the whole match's source."""
    text: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    done = 0
    for match in pattern.finditer(view.text):
        a, b = match.span()
        new = replace(match)
        if new == match.group(0):
            continue
        text.append(view.text[done:a])
        starts.extend(view.starts[done:a])
        ends.extend(view.ends[done:a])
        start, end = view.source(a, b)
        if new:
            text.append(new)
            starts.extend([start] * len(new))
            ends.extend([end] * len(new))
        elif ends:  # dropped (a mark, an invisible character): part of what precedes it
            ends[-1] = max(ends[-1], end)
        done = b
    if not done:
        return view
    text.append(view.text[done:])
    starts.extend(view.starts[done:])
    ends.extend(view.ends[done:])
    return View("".join(text), tuple(starts), tuple(ends))


# Everything that is not plain printable ASCII, one character at a time.
_NOT_ASCII = re.compile(r"[^\t\n\r\x20-\x7e]")
_DROPPED = {"Mn", "Me", "Mc", "Cf", "Cc", "Cs", "Co", "Cn"}


def _fold(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xE0020 <= code < 0xE007F:  # a tag character: an invisible copy of an ASCII one
        return chr(code - 0xE0000)
    decomposed = unicodedata.normalize("NFKD", match.group(0))
    return "".join(c for c in decomposed if unicodedata.category(c) not in _DROPPED)


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_X_ESCAPES = re.compile(r"(?:\\+x[0-9a-fA-F]{2})+")
_O_ESCAPES = re.compile(r"(?:\\+[0-3][0-7]{2}){2,}")  # octal, as C and printf write bytes
_U_ESCAPES = re.compile(r"(?:\\+(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}))+")
_N_ESCAPE = re.compile(r"\\+N\{([A-Za-z0-9 -]{2,80})\}")
_PERCENT = re.compile(r"(?:%[0-9a-fA-F]{2})+")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_HEX_BYTES = re.compile(r"0[xX]((?:[0-9a-fA-F]{2})+)(?![0-9a-fA-F])")


def _x_escapes(match: re.Match[str]) -> str:
    hexes = re.findall(r"x([0-9a-fA-F]{2})", match.group(0))
    return _utf8(bytes(int(h, 16) for h in hexes))


def _o_escapes(match: re.Match[str]) -> str:
    return _utf8(bytes(int(o, 8) for o in re.findall(r"[0-3][0-7]{2}", match.group(0))))


def _u_escapes(match: re.Match[str]) -> str:
    units = []
    for code in re.findall(r"[uU]([0-9a-fA-F]+)", match.group(0)):
        value = int(code, 16)
        if value > 0xFFFF:
            units += [0xD800 + ((value - 0x10000) >> 10), 0xDC00 + ((value - 0x10000) & 0x3FF)]
        else:
            units.append(value)
    data = b"".join(u.to_bytes(2, "big") for u in units)
    return data.decode("utf-16-be", errors="replace")


def _n_escape(match: re.Match[str]) -> str:
    try:
        return unicodedata.lookup(match.group(1))
    except KeyError:
        return match.group(0)


def _hex_bytes(match: re.Match[str]) -> str:
    decoded = _utf8(bytes.fromhex(match.group(1)))
    return decoded if decoded.isprintable() else match.group(0)


def normalise(text: str) -> str:
    """``text`` as the filter compares it (a value is normalised the same way)."""
    return normalised(text).text


def normalised(text: str) -> View:
    """The text folded, with its escapes and ``0x`` bytes decoded (the docstring)."""
    return hex_bytes(folded(text))


def folded(text: str) -> View:
    """The text folded and with its escapes decoded, ``0x`` numbers left as they are
    (``numeric`` reads them as numbers, ``hex_bytes`` as bytes)."""
    view = View.of(text)
    if text.isascii() and not any(c in text for c in "\\%&") and not _CONTROL.search(text):
        return view  # nothing to undo: the common case, kept quick
    view = rewrite(view, _NOT_ASCII, _fold)
    view = rewrite(view, _CONTROL, lambda _: "")
    if "\\" in text:
        view = rewrite(view, _X_ESCAPES, _x_escapes)
        view = rewrite(view, _O_ESCAPES, _o_escapes)
        view = rewrite(view, _U_ESCAPES, _u_escapes)
        view = rewrite(view, _N_ESCAPE, _n_escape)
    if "%" in text:
        view = rewrite(view, _PERCENT, lambda m: _utf8(bytes.fromhex(m.group(0).replace("%", ""))))
    if "&" in text:
        view = rewrite(view, _ENTITY, lambda m: html.unescape(m.group(0)))
    if not view.text.isascii():  # escapes may decode to what the first pass folds
        view = rewrite(view, _NOT_ASCII, _fold)
    return view


def hex_bytes(view: View) -> View:
    """``view`` with ``0x`` hex that spells printable text (``0x436f72``) decoded."""
    return rewrite(view, _HEX_BYTES, _hex_bytes) if "0" in view.text else view


_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_DIGIT_WORDS = {w: str(d) for d, w in enumerate(_WORDS)}
_DIGIT_WORD = re.compile(r"(?<![^\W\d_])(?:" + "|".join(_DIGIT_WORDS) + r")(?![^\W\d_])", re.I)
_RADIX = re.compile(r"(?<![\w.])0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)(?![\w.])")
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:[ '’_]\d{3})+(?:\.\d+)?(?!\d)")


_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"]
_TEENS += ["seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SMALL = {w: n for n, w in enumerate(_WORDS + _TEENS)} | {
    w: 20 + 10 * n for n, w in enumerate(_TENS)
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_NUMBER_WORD = "(?:" + "|".join([*_SMALL, "hundred", *_SCALES]) + ")"
_NUMBER_WORDS = re.compile(
    rf"(?<![^\W\d_]){_NUMBER_WORD}(?:(?:-|,?\s+(?:and\s+)?){_NUMBER_WORD})*(?![^\W\d_])", re.I
)


def _cardinal(match: re.Match[str]) -> str:
    """The numbers that number words say (``seventy-three thousand four hundred and
    twelve``; a word that cannot go on a number starts the next one), or the words as
    they are: digit words alone are read one digit each."""
    words = re.findall(r"[a-z]+", match.group(0).lower())
    words = [w for w in words if w != "and"]
    if all(w in _DIGIT_WORDS for w in words):
        return match.group(0)
    out: list[str] = []
    state = _Cardinal()
    for word in words:
        if not state.add(word):
            out += state.said()
            state = _Cardinal()
            if not state.add(word):
                out.append(word)
    return " ".join(out + state.said())


class _Cardinal:
    """One number being read from its words."""

    def __init__(self) -> None:
        self.total, self.group, self.last_scale, self.previous = 0, 0, 10**15, ""

    def add(self, word: str) -> bool:
        """Whether ``word`` goes on this number (then it is added)."""
        if word in _SMALL:
            value = _SMALL[word]
            if self.previous in _SMALL and not (self.previous in _TENS and value < 10):
                return False
            self.group += value
        elif word == "hundred":
            if not 0 < self.group < 100 or self.previous not in _SMALL:
                return False
            self.group *= 100
        else:
            scale = _SCALES[word]
            if self.group <= 0 or scale >= self.last_scale:
                return False
            self.total, self.group, self.last_scale = self.total + self.group * scale, 0, scale
        self.previous = word
        return True

    def said(self) -> list[str]:
        return [str(self.total + self.group)] if self.previous else []


def _radix(match: re.Match[str]) -> str:
    # No value is longer than a float's 309 digits: a longer run (a printed hash, bytes
    # as one 0x number) is left as written, and never made a decimal of thousands of
    # digits, which Python refuses to print.
    text = match.group(0)
    return str(int(text, 0)) if len(text) <= 1100 else text


def numeric(view: View) -> View:
    """``view`` (``folded``) with numbers written as numbers (the module's docstring)."""
    view = rewrite(view, _RADIX, _radix)
    view = rewrite(view, _NUMBER_WORDS, _cardinal)
    view = rewrite(view, _DIGIT_WORD, lambda m: _DIGIT_WORDS[m.group(0).lower()])
    return rewrite(view, _GROUPED, lambda m: re.sub(r"[ '’_]", "", m.group(0)))


def rot13(view: View) -> View:
    """``view`` with its letters rotated by 13 (the same map: one letter for one)."""
    return View(codecs.encode(view.text, "rot13"), view.starts, view.ends)
