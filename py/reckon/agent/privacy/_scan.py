"""Schema privacy's value scan where no cell can reach it: a fresh worker.

In the browser the page answers ``scan`` by booting another worker in the sandbox's
frame, mounting the person's uploads in it (and nothing a cell wrote), running one
cell and ending it (web/sandbox/fresh.js). No cell of the session ran in that
interpreter, so nothing a cell patched (pandas, ``json``, the kernel, ``builtins``)
shapes what it finds. It trusts nothing the session's sandbox reported: the kernel's
``scan_uploads`` lists /data itself, describes each file (the model's file list comes
from here, not from the session's ``inspect``), and reads every sheet and archive
member for the values to hide and the names that may be sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from reckon._exceptions import ProtocolError
from reckon.agent._types import JSONDict

__all__ = ["MARKER", "MAX_CHARS", "PAGE", "Found", "found_from", "fresh_values_cell",
           "read_fresh_values", "sized"]  # fmt: skip

MARKER = "RECKON-HIDDEN-VALUES:"
PAGE = 60_000  # characters per printed line: under the sandbox's output cap
MAX_CHARS = 8_000_000  # beyond this, schema privacy refuses rather than hide a part
_RESTART = ". Restart the sandbox (your files stay) and ask again"


@dataclass(frozen=True)
class Found:
    """What a scan found: the values to hide, the names that may be sent, the files as
    it described them, how many values each file gave, and the parts it could not read."""

    strings: list[str]
    numbers: list[float]
    names: list[str] = field(default_factory=list)
    files: list[JSONDict] = field(default_factory=list)
    found: Any = None  # {path: count} as the scan printed it (checked by ``_privacy``)
    problems: list[str] = field(default_factory=list)


def scan_expression(root: str, allow: Iterable[str]) -> str:
    """The Python expression that scans ``root``, as JSON text."""
    return (
        "__import__('json').dumps(__import__('reckon.kernel._value_scan', fromlist=['x'])"
        f".scan_uploads({root!r}, allow={sorted(allow)!r}))"
    )


def fresh_values_cell(allow: Iterable[str]) -> str:
    """A cell for the fresh worker: the scan of /data printed as a ``size digest`` line,
    then the JSON in pages."""
    return f"""\
import hashlib
text = {scan_expression("/data", allow)}
print({MARKER!r} + f"{{len(text)}} {{hashlib.sha256(text.encode()).hexdigest()}}")
for start in range(0, len(text), {PAGE}):
    print({MARKER!r} + text[start:start + {PAGE}])
"""


async def read_fresh_values(
    scan: Callable[[str], Awaitable[JSONDict]], allow: Iterable[str]
) -> Found:
    """What the fresh worker's scan found; raises when it cannot be read (then nothing
    may be sent: the caller fails closed)."""
    result = await scan(fresh_values_cell(allow))
    if result.get("status") != "ok":
        error = result.get("error") or {}
        detail = error.get("message") if isinstance(error, dict) else None
        problem = detail or result.get("message") or result.get("status")
        if isinstance(error, dict) and error.get("type") == "MemoryError":
            # The scan reads every table whole: a file of a GB does not fit. Say what the
            # person can do, not what a cell's author could.
            raise ProtocolError(
                "the files are too big for the scan that finds the values to hide, which "
                "reads every table whole in the browser's memory; use privacy 'full' or "
                f"upload a smaller extract ({str(problem).split('. ', 1)[0]})"
            )
        raise ProtocolError(f"the files' values could not be read: {problem}")
    lines = str(result.get("stdout") or "").splitlines()
    printed = [line[len(MARKER) :] for line in lines if line.startswith(MARKER)]
    if not printed:
        raise ProtocolError("the files' values could not be read: the scan printed nothing")
    size, digest = sized(printed[0])
    text = "".join(printed[1:])
    if len(text) != size or hashlib.sha256(text.encode()).hexdigest() != digest:
        raise ProtocolError("the files' values could not be read: the scan's output was cut")
    return found_from(text)


def sized(printed: str) -> tuple[int, str]:
    """The scan's ``size digest`` line (too big a size is refused)."""
    size, _, digest = printed.partition(" ")
    if not size.isdigit() or len(digest) != 64:
        raise ProtocolError(f"the files' values could not be read: the scan was altered{_RESTART}")
    if int(size) > MAX_CHARS:
        raise ProtocolError(
            f"the files hold too many distinct values to hide ({size} characters); "
            "allow the columns that need no hiding (allowColumns) or use privacy 'full'"
        )
    return int(size), digest


def found_from(text: str) -> Found:
    """The scan's JSON as ``Found``."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ProtocolError(f"the files' values could not be read: the scan was altered{_RESTART}")
    files = [f for f in data.get("files") or [] if isinstance(f, dict)]
    return Found(
        strings=[str(s) for s in data.get("strings") or []],
        numbers=[float(n) for n in data.get("numbers") or []],
        names=[str(n) for n in data.get("names") or []],
        files=files,
        found=data.get("found"),
        problems=[str(p) for p in data.get("problems") or []],
    )
