"""Runs of a text that encode other text, decoded: what the filter reads inside them.

- base64 (standard and URL-safe, padded or not), base32, base85 and Ascii85 (with or
  without ``<~ ~>``, also inside a printed ``b'...'``);
- hex, as one run (``436f72``) or bytes apart (``43 6f 72``, ``43:6f:72``);
- character codes: three or more numbers that are code points (``[67, 111, 114]``);
- characters: three or more one-character strings, as ``str(list(text))`` or a numpy
  array prints them (``['C', 'o', 'r']``, ``['C' 'o' 'r']``).

A run stands for text only when it decodes to printable UTF-8 (line breaks, tabs and
invisible characters allowed) with a letter or digit in it, so an ordinary word or
number is not taken for one by chance.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from collections.abc import Callable, Iterator

__all__ = ["encoded_runs"]

# Eight characters or more, or fewer with the padding only base64 and base32 end in
# (a number of four or five digits in base64 is ``NzM0MTI=``).
_RUN = re.compile(
    r"(?<![\w+/=-])(?:[A-Za-z0-9+/_-]{8,}={0,6}|[A-Za-z0-9+/_-]{4,7}={1,6})(?![\w+/=-])"
)
_HEX_RUN = re.compile(r"[0-9a-fA-F]+")
_BASE32 = re.compile(r"[A-Za-z2-7]+=*")
_BASE85 = re.compile(r"(?<!\S)\S{10,}(?!\S)")
_HEX_APART = re.compile(r"(?<![\w:.-])[0-9a-fA-F]{2}(?:([ :.-])[0-9a-fA-F]{2}){3,}(?![\w:.-])")
_CODES = re.compile(r"(?<![\w.])\d{2,7}(?:(?:\s*,\s*|\s+)\d{2,7}){2,}(?![\w.])")
_CHAR = r"""(?:'[^'\\\n]'|"[^"\\\n]")"""
_CHARS = re.compile(_CHAR + r"(?:\s*,?\s*" + _CHAR + "){2,}")
_INVISIBLE = re.compile(r"[\s\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
_WRAPPED = re.compile(r"^[\[(]*b?(['\"])(.*)\1[\])]*,?$", re.DOTALL)


def encoded_runs(text: str) -> Iterator[tuple[int, int, list[str]]]:
    """``(start, end, texts)`` for each run of ``text`` that decodes to text."""
    for pattern, decode in _FINDERS:
        for match in pattern.finditer(text):
            found = [t for t in decode(match) if _is_text(t)]
            if found:
                yield match.start(), match.end(), found


def _is_text(text: str) -> bool:
    # Line breaks, tabs and invisible characters (a value printed one character a line
    # or joined by zero-width spaces, then encoded) are text too.
    visible = _INVISIBLE.sub("", text)
    return bool(visible) and visible.isprintable() and any(c.isalnum() for c in visible)


def _texts(candidates: list[bytes]) -> list[str]:
    out = []
    for raw in candidates:
        with contextlib.suppress(UnicodeDecodeError):
            out.append(raw.decode("utf-8"))
    return out


def _tried(decode: Callable[[], bytes]) -> list[bytes]:
    try:
        return [decode()]
    except (binascii.Error, ValueError):
        return []


def _base64_or_hex(match: re.Match[str]) -> list[str]:
    run = match.group(0)
    candidates: list[bytes] = []
    if len(run) % 2 == 0 and _HEX_RUN.fullmatch(run):
        candidates.append(bytes.fromhex(run))
    padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
    candidates += _tried(lambda: base64.b64decode(padded, validate=True))
    candidates += _tried(lambda: base64.urlsafe_b64decode(padded))
    if _BASE32.fullmatch(run):
        bare = run.rstrip("=").upper()
        candidates += _tried(lambda: base64.b32decode(bare + "=" * (-len(bare) % 8)))
    return _texts(candidates)


def _base85(match: re.Match[str]) -> list[str]:
    run = match.group(0)
    wrapped = _WRAPPED.match(run)
    if wrapped:  # a printed bytes object or string: b'...'
        run = wrapped.group(2).replace("\\\\", "\\")
    candidates = _tried(lambda: base64.b85decode(run))
    if run.startswith("<~") and run.endswith("~>"):
        candidates += _tried(lambda: base64.a85decode(run, adobe=True))
    else:
        candidates += _tried(lambda: base64.a85decode(run))
    return _texts(candidates)


def _hex_apart(match: re.Match[str]) -> list[str]:
    return _texts([bytes.fromhex(re.sub(r"[ :.-]", "", match.group(0)))])


def _codes(match: re.Match[str]) -> list[str]:
    codes = [int(n) for n in re.findall(r"\d+", match.group(0))]
    if not all(32 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF for c in codes):
        return []
    return ["".join(map(chr, codes))]


def _chars(match: re.Match[str]) -> list[str]:
    return ["".join(re.findall(r"""['"](.)['"]""", match.group(0), re.DOTALL))]


_FINDERS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], list[str]]]] = [
    (_RUN, _base64_or_hex),
    (_BASE85, _base85),
    (_HEX_APART, _hex_apart),
    (_CODES, _codes),
    (_CHARS, _chars),
]
