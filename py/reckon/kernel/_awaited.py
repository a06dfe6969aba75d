"""Whether a tool call's result is awaited where it is made, read from the caller's
bytecode: ``await tools.get_orders(month=3)`` wants an awaitable, while ``rows =
tools.get_orders(month=3)`` wants the rows, and the call has no other way to tell.

Awaited means one of two things. The instruction right after the call is
``GET_AWAITABLE`` (``await f(...)``, as CPython 3.11 and 3.12 compile it). Or the call is
an argument of a call of asyncio's helpers that take awaitables (``asyncio.gather(
tools.a(), tools.b())``, ``wait_for(tools.a(), 5)``): the innermost call whose source
span holds this one is named as one of them. A plain function (not a coroutine) that
returns the call as it is (``lambda: tools.a()``) hands the question to its own
caller: ``await call()`` awaits it. Anything else is a plain call. The check
reads code objects only, never the caller's values, so a cell gains nothing by fooling
it: it only picks which of two honest ways the same call takes (_tools.py).
"""

from __future__ import annotations

import dis
import inspect
from bisect import bisect_right
from functools import lru_cache
from types import CodeType, FrameType

__all__ = ["awaited_here"]

# asyncio's helpers that take awaitables; a call handed to one of them is awaited there.
ASYNC_HELPERS = frozenset(
    {"gather", "wait_for", "shield", "ensure_future", "as_completed", "wait", "create_task"}
)
_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION_EX"})
_NAMES = frozenset(
    {"LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF"}
)

# Code whose `return` hands its value to whoever resumes it, not to its caller's await.
_SUSPENDING = (
    inspect.CO_COROUTINE
    | inspect.CO_GENERATOR
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_ITERABLE_COROUTINE
)
_HOPS = 8  # plain functions that return the call, followed up to this many callers

Span = tuple[int, int, int, int]  # (line, column, end line, end column)


@lru_cache(maxsize=64)
def _read(code: CodeType) -> tuple[tuple[dis.Instruction, ...], list[int]]:
    """The code's instructions (without cache entries) and their offsets, once a code."""
    instructions = tuple(dis.get_instructions(code))
    return instructions, [ins.offset for ins in instructions]


def _span(ins: dis.Instruction) -> Span | None:
    pos = ins.positions
    if pos is None or None in (pos.lineno, pos.col_offset, pos.end_lineno, pos.end_col_offset):
        return None
    return (pos.lineno or 0, pos.col_offset or 0, pos.end_lineno or 0, pos.end_col_offset or 0)


def _holds(outer: Span, inner: Span) -> bool:
    return outer[:2] <= inner[:2] and outer[2:] >= inner[2:] and outer != inner


def _callee(code: tuple[dis.Instruction, ...], call: Span) -> str | None:
    """The name the call at `call` calls: the longest name load that starts where the
    call starts (``asyncio.gather`` for ``asyncio.gather(...)``)."""
    best: tuple[tuple[int, int], str] | None = None
    for ins in code:
        span = _span(ins)
        if not (span and ins.opname in _NAMES and isinstance(ins.argval, str)):
            continue
        if span[:2] == call[:2] and (best is None or span[2:] > best[0]):
            best = (span[2:], ins.argval)
    return best[1] if best else None


def _handed_to_a_helper(code: tuple[dis.Instruction, ...], mine: Span) -> bool:
    enclosing = [
        s for ins in code if ins.opname in _CALLS and (s := _span(ins)) and _holds(s, mine)
    ]
    if not enclosing:
        return False
    innermost = max(enclosing, key=lambda s: (s[:2], (-s[2], -s[3])))
    return _callee(code, innermost) in ASYNC_HELPERS


def awaited_here(frame: FrameType | None, hops: int = _HOPS) -> bool:
    """Whether the call `frame` is making now has its result awaited (see above)."""
    if frame is None:
        return False
    code, offsets = _read(frame.f_code)
    # The instruction running: f_lasti names it, or (a caller of Python code) the last of
    # the cache entries after it, which dis leaves out.
    at = bisect_right(offsets, frame.f_lasti) - 1
    if at < 0 or code[at].opname not in _CALLS:
        return False  # called from C (map, a callback): nobody awaits it
    after = code[at + 1].opname if at + 1 < len(code) else ""
    if after == "GET_AWAITABLE":
        return True
    if after == "RETURN_VALUE" and not frame.f_code.co_flags & _SUSPENDING and hops > 0:
        return awaited_here(frame.f_back, hops - 1)
    mine = _span(code[at])
    return mine is not None and _handed_to_a_helper(code, mine)
