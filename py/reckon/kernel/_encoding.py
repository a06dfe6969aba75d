"""Finding out how a text file is encoded, in one streaming pass over its bytes."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["HEAD_BYTES", "TextScan", "looks_binary", "read_head", "scan_text"]

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

    @property
    def pandas_encoding(self) -> str | None:
        """The ``encoding=`` argument pandas needs; ``None`` when its default works."""
        return None if self.encoding == "utf-8" else self.encoding


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
    """Pick the encoding (BOM, UTF-16, strict UTF-8, cp1252, latin-1) and count lines."""
    head = read_head(path)
    declared = _bom_or_nuls(head)
    if declared is not None and declared.startswith("utf-16"):
        return _scan_utf16(path, declared)
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8 = True
    cp1252 = True
    newlines = returns = size = 0
    last = b""
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
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
    elif cp1252:
        encoding, notes = "cp1252", ("not valid UTF-8; decoded as cp1252 (Windows Western)",)
    else:
        encoding = "latin-1"
        notes = (
            "not valid UTF-8 nor cp1252; decoded as latin-1, so some characters may be "
            "wrong (pass encoding=... if you know the right one)",
        )
    return TextScan(encoding=encoding, lines=lines, size=size, notes=notes)


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
