"""Turning an exception from a cell into the ``error`` dict a model can act on.

Only the user's cells are shown (``Cell line N``). Reckon's own frames never
are; of the library frames only the innermost one stays, because that is where
e.g. pandas raised the ``KeyError`` and its source line explains why.
"""

from __future__ import annotations

import functools
import linecache
import os
import traceback
from types import TracebackType
from typing import Any

import reckon
from reckon.kernel._hints import error_hint, syntax_hint

__all__ = ["cell_filename", "format_error", "format_syntax_error"]

_CELL_PREFIX = "<cell-"
_RECKON_DIR = os.path.dirname(os.path.abspath(reckon.__file__)) + os.sep


def cell_filename(number: int) -> str:
    return f"{_CELL_PREFIX}{number}>"


def _cell_number(filename: str) -> int | None:
    if filename.startswith(_CELL_PREFIX) and filename.endswith(">"):
        try:
            return int(filename[len(_CELL_PREFIX) : -1])
        except ValueError:
            return None
    return None


@functools.lru_cache(maxsize=256)  # deep recursion: a million frames, a few file names
def _is_reckon(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_RECKON_DIR)


def _walk(tb: TracebackType | None) -> list[tuple[str, int, str]]:
    frames: list[tuple[str, int, str]] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return frames


def _source_line(filename: str, lineno: int) -> str:
    return linecache.getline(filename, lineno).strip()


def format_error(exc: BaseException, *, cell: str) -> dict[str, Any]:
    """The ``error`` dict for an exception raised while running ``cell``."""
    frames = [f for f in _walk(exc.__traceback__) if not _is_reckon(f[0])]
    innermost_library = len(frames) - 1
    if frames and _cell_number(frames[-1][0]) is not None:
        innermost_library = -1

    lines = ["Traceback (most recent call last):"]
    hidden = 0
    # Consecutive identical frames (recursion) are counted, not repeated, as CPython
    # does: a RecursionError after sys.setrecursionlimit(10**6) stays one short text.
    repeated = 0
    last: tuple[str, int, str] | None = None
    line: int | None = None
    for index, frame in enumerate(frames):
        filename, lineno, name = frame
        number = _cell_number(filename)
        if number is None and index != innermost_library:
            hidden += 1
            continue
        if frame == last and not hidden:
            repeated += 1
            continue
        if repeated:
            lines.append(_repeated(repeated))
            repeated = 0
        last = frame
        if hidden:
            lines.append(f"  ... {hidden} library frame{'s' if hidden > 1 else ''} hidden ...")
            hidden = 0
        if filename == cell:
            lines.append(f"  Cell line {lineno}, in {name}")
            line = lineno
        elif number is not None:
            lines.append(f"  Earlier cell #{number}, line {lineno}, in {name}")
        else:
            lines.append(f'  File "{filename}", line {lineno}, in {name}')
        source = _source_line(filename, lineno)
        if source:
            lines.append(f"    {source}")
    if repeated:
        lines.append(_repeated(repeated))
    if hidden:
        lines.append(f"  ... {hidden} library frame{'s' if hidden > 1 else ''} hidden ...")
    lines.extend(part.rstrip("\n") for part in traceback.format_exception_only(type(exc), exc))
    return _error(exc, _message(exc), lines, line, error_hint(exc))


def _error(
    exc: BaseException, message: str, lines: list[str], line: int | None, hint: str | None
) -> dict[str, Any]:
    """The ``error`` dict of a run result (PROTOCOL.md §1); ``hint`` only when there is one."""
    error: dict[str, Any] = {
        "type": type(exc).__name__,
        "message": message,
        "traceback": "\n".join(lines),
        "line": line,
    }
    if hint:
        error["hint"] = hint
    return error


def _repeated(count: int) -> str:
    return f"  [Previous line repeated {count} more time{'s' if count > 1 else ''}]"


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "Execution interrupted"
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}) was raised; the session keeps running"
    return str(exc)


# Notebook habits (`!pip install x`, `%pip`, `!ls`): a plain SyntaxError says nothing
# of why, and a model tries the next spelling of the same install.
_SHELL_HINT = (
    " (a cell is Python only: `!` shell commands and `%` magics do not run here, except "
    "`%pip install`, and the sandbox has no network, so pip can install only a wheel file "
    "added like any upload: `%pip install /data/<file>.whl`. The packages the sandbox "
    "ships import directly, e.g. `import scipy`; remove the line and import what you need)"
)


def format_syntax_error(exc: SyntaxError) -> dict[str, Any]:
    """The ``error`` dict for a cell that does not compile: line, source and caret."""
    lines = ["Traceback (most recent call last):"]
    lineno = exc.lineno
    lines.append(f"  Cell line {lineno}" if lineno else "  Cell")
    text = (exc.text or "").rstrip("\r\n")
    if text:
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        lines.append(f"    {stripped}")
        if exc.offset:
            start = max(exc.offset - 1 - indent, 0)
            end = exc.end_offset if exc.end_lineno in (None, lineno) else None
            width = max((end or 0) - exc.offset, 1)
            lines.append("    " + " " * start + "^" * width)
    message = exc.msg or str(exc)
    if text.lstrip().startswith(("!", "%")):
        message += _SHELL_HINT
    lines.append(f"{type(exc).__name__}: {message}")
    return _error(exc, message, lines, lineno, syntax_hint(text))
