"""Finding out how a text file is encoded, in one streaming pass over its bytes."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from reckon.kernel.tables._detect import Sampler, guess_encoding

__all__ = ["HEAD_BYTES", "TextScan", "head_encoding", "looks_binary", "read_head", "scan_text"]

HEAD_BYTES = 65_536
_CHUNK = 1 << 20
# Bytes cp1252 leaves undefined: a file holding them is not cp1252.
_CP1252_HOLES = tuple(bytes([b]) for b in (0x81, 0x8D, 0x8F, 0x90, 0x9D))


@dataclass(frozen=True)
class TextScan:
    """What one pass over a text file found."""

    encoding: str
    lines: int
    size: int
    notes: tuple[str, ...] = ()
    errors: str = "strict"  # "replace" when some bytes do not fit the encoding

    @property
    def pandas_encoding(self) -> str | None:
        """The ``encoding=`` argument pandas needs; ``None`` when its default works."""
        return None if self.encoding == "utf-8" else self.encoding

    def pandas_options(self) -> dict[str, str]:
        """``encoding=`` (and ``encoding_errors=``) for ``pandas.read_csv``, if needed."""
        options: dict[str, str] = {}
        if self.pandas_encoding:
            options["encoding"] = self.pandas_encoding
        if self.errors != "strict":
            options["encoding_errors"] = self.errors
        return options


def read_head(path: str, size: int = HEAD_BYTES) -> bytes:
    with open(path, "rb") as file:
        return file.read(size)


def _bom_or_nuls(head: bytes) -> str | None:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = head[:4096]
    half = len(sample) // 2
    if half >= 2:
        # ASCII text in UTF-16 has a NUL beside nearly every character, on one
        # side only; which side tells the byte order.
        odd = sample[1::2].count(0)
        even = sample[0::2].count(0)
        if odd >= 0.7 * half and even <= 0.1 * half:
            return "utf-16-le"
        if even >= 0.7 * half and odd <= 0.1 * half:
            return "utf-16-be"
    return None


def looks_binary(head: bytes) -> bool:
    """True for bytes no text table would contain (NULs that are not UTF-16)."""
    return b"\x00" in head[:8192] and _bom_or_nuls(head) is None


def scan_text(path: str) -> TextScan:
    """Pick the encoding and count lines.

    BOM, UTF-16 and strict UTF-8 are checked first, in one pass; only a file
    that is not UTF-8 goes to the detector (``_detect``), then cp1252, then
    latin-1.
    """
    head = read_head(path)
    declared = _bom_or_nuls(head)
    if declared is not None and declared.startswith("utf-16"):
        return _scan_utf16(path, declared)
    decoder = codecs.getincrementaldecoder("utf-8")()
    sampler = Sampler()
    utf8 = True
    cp1252 = True
    newlines = returns = size = 0
    last = b""
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            sampler.feed(chunk, first=size == 0)
            size += len(chunk)
            newlines += chunk.count(b"\n")
            returns += chunk.count(b"\r")
            last = chunk[-1:]
            if utf8:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    utf8 = False
            if cp1252 and any(hole in chunk for hole in _CP1252_HOLES):
                cp1252 = False
    if utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    lines = (newlines or returns) + (1 if size and last not in (b"\n", b"\r") else 0)
    if utf8:
        encoding = declared or "utf-8"
        notes = ("decoded as UTF-8 (with a byte order mark)",) if declared else ()
        return TextScan(encoding=encoding, lines=lines, size=size, notes=notes)
    encoding, note, errors = _not_utf8(path, sampler.sample, cp1252_fits=cp1252)
    return TextScan(encoding=encoding, lines=lines, size=size, notes=(note,), errors=errors)


def _not_utf8(path: str, sample: bytes, *, cp1252_fits: bool) -> tuple[str, str, str]:
    """(encoding, note, errors) for a file that is not valid UTF-8."""
    guess = guess_encoding(sample, cp1252_fits=cp1252_fits)
    if guess is None and cp1252_fits:
        return "cp1252", "not valid UTF-8; decoded as cp1252 (Windows Western)", "strict"
    if guess is None:
        return (
            "latin-1",
            "not valid UTF-8 nor cp1252; decoded as latin-1, so some characters may be "
            "wrong (pass encoding=... if you know the right one)",
            "strict",
        )
    # The sample had the detector's pick decode cleanly; the rest of the file may not.
    errors = "strict" if _decodes(path, guess.codec) else "replace"
    language = f" ({guess.language})" if guess.multibyte and guess.language else ""
    note = (
        f"not valid UTF-8; detected {guess.detected}{language}, decoded as {guess.codec} "
        "(pass encoding=... if the text looks wrong)"
    )
    if errors == "replace":
        note += f"; bytes that are not valid {guess.codec} were replaced by \ufffd"
    return guess.codec, note, errors


def head_encoding(head: bytes) -> str:
    """The encoding of a text's first bytes when they are not UTF-8 (for previews)."""
    sampler = Sampler()
    sampler.feed(head, first=True)
    cp1252_fits = not any(hole in head for hole in _CP1252_HOLES)
    guess = guess_encoding(sampler.sample, cp1252_fits=cp1252_fits)
    return guess.codec if guess else ("cp1252" if cp1252_fits else "latin-1")


def _decodes(path: str, encoding: str) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        with open(path, "rb") as file:
            while chunk := file.read(_CHUNK):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _scan_utf16(path: str, encoding: str) -> TextScan:
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    newlines = returns = size = 0
    last = ""
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            size += len(chunk)
            text = decoder.decode(chunk)
            newlines += text.count("\n")
            returns += text.count("\r")
            last = text[-1:] or last
    lines = (newlines or returns) + (1 if last and last not in "\r\n" else 0)
    note = "decoded as UTF-16" + (" (no byte order mark)" if encoding != "utf-16" else "")
    return TextScan(encoding=encoding, lines=lines, size=size, notes=(note,))
