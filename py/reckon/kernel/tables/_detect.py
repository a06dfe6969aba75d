"""Naming the encoding of text that is not UTF-8, with chardet.

Only lines holding non-ASCII bytes tell encodings apart, so the detector sees
those (a few KB), which keeps it fast in Pyodide. Its candidates are checked
against the bytes: a decoding that fails, or yields private-use, unassigned or
control characters, is wrong (Big5 read as GB18030 gives private-use ones).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["SAMPLE_BYTES", "Guess", "Sampler", "guess_encoding"]

SAMPLE_BYTES = 8192
# Below this the detector is guessing between Western code pages; cp1252 (what
# Excel on Western Windows writes) is then the better bet, as before.
_CONFIDENT = 0.5
_FLOOR = 0.1  # the detector lists every prober; ones this unsure are noise
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
# chardet's names -> the Python codec that reads them and their common supersets.
_SUPERSETS = {
    "big5": "cp950", "gb2312": "gb18030", "gbk": "gb18030", "gb18030": "gb18030",
    "shift_jis": "cp932", "cp932": "cp932", "euc-kr": "cp949", "cp949": "cp949",
    "iso-8859-1": "cp1252", "windows-1252": "cp1252", "ascii": "cp1252",
}  # fmt: skip
_MULTIBYTE = {"cp950", "gb18030", "cp932", "cp949", "euc_jp", "big5hkscs", "johab", "hz"}
_BAD_CATEGORIES = {"Co", "Cn", "Cs", "Cc"}


@dataclass(frozen=True)
class Guess:
    """An encoding the detector named and the sample confirmed."""

    codec: str  # a Python codec name, for pandas' encoding=
    detected: str  # what the detector called it
    language: str
    confidence: float

    @property
    def multibyte(self) -> bool:
        return self.codec in _MULTIBYTE


class Sampler:
    """Collects whole lines that hold non-ASCII bytes, from the chunks of one pass."""

    def __init__(self, limit: int = SAMPLE_BYTES) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0

    def feed(self, chunk: bytes, *, first: bool) -> None:
        # A chunk after the first may start inside a line (and a character).
        position = 0 if first else chunk.find(b"\n") + 1
        if not first and position == 0:
            return
        while self.size < self.limit:
            match = _HIGH_BYTE.search(chunk, position)
            if match is None:
                return
            start = chunk.rfind(b"\n", 0, match.start()) + 1
            end = chunk.find(b"\n", match.start())
            if end < 0:
                return  # cut by the chunk's end; the next chunk skips it too
            line = chunk[max(start, position) : end + 1]
            self.parts.append(line[: self.limit - self.size])
            self.size += len(self.parts[-1])
            position = end + 1

    @property
    def sample(self) -> bytes:
        return b"".join(self.parts)


def guess_encoding(sample: bytes, *, cp1252_fits: bool) -> Guess | None:
    """The detector's most likely encoding that reads ``sample`` cleanly, or ``None``.

    ``cp1252_fits`` says the whole file has no byte cp1252 leaves undefined; then a
    low-confidence guess, or one that reads the sample exactly as cp1252 does, is
    reported as cp1252.
    """
    try:
        import chardet
    except ImportError:  # not installed yet (a sandbox still installing): cp1252/latin-1
        return None
    if not sample:
        return None
    found = chardet.detect_all(sample, ignore_threshold=True)
    candidates = [c for c in found if float(c.get("confidence") or 0.0) >= _FLOOR]
    if cp1252_fits and (not candidates or float(candidates[0]["confidence"]) < _CONFIDENT):
        return None
    cp1252 = _decode(sample, "cp1252") if cp1252_fits else None
    for candidate in candidates:
        name = str(candidate.get("encoding") or "")
        codec = _codec(name)
        if codec is None:
            continue
        text = _decode(sample, codec)
        if text is None or not _plausible(text):
            continue
        if cp1252 is not None and codec not in _MULTIBYTE and text == cp1252:
            return None
        language = str(candidate.get("language") or "")
        return Guess(codec, name, language, float(candidate.get("confidence") or 0.0))
    return None


def _codec(name: str) -> str | None:
    lowered = name.lower()
    if lowered in _SUPERSETS:
        return _SUPERSETS[lowered]
    try:
        return codecs.lookup(lowered).name
    except LookupError:
        return None


def _decode(sample: bytes, codec: str) -> str | None:
    # Incremental, so a character cut at the sample's end is not an error.
    try:
        return codecs.getincrementaldecoder(codec)().decode(sample, final=False)
    except (UnicodeDecodeError, LookupError):
        return None


def _plausible(text: str) -> bool:
    return (
        not any(
            unicodedata.category(char) in _BAD_CATEGORIES and char not in "\t\r\n" for char in text
        )
        and "\ufffd" not in text
    )
