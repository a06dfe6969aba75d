"""Host tools in a cell: functions the embedding page lends to the sandbox.

A cell calls ``await tools.get_orders(month=3)``; the call leaves the sandbox as
``{name, args}`` (JSON) and comes back as JSON data or an error message. The page
holds the function, its schema, its policy and its limits (web/tools.js): nothing
here decides what may run, so nothing here can be talked into running more.

The transport is one coroutine function ``(name, args_json) -> reply_json`` that the
worker gives the kernel (a JS bridge in the browser; a plain function on CPython). A
reproduced notebook sets a replay source over the cell's recorded calls instead
(``set_replay``, ``_replay.py``): while it is set, no call reaches the transport.

A call not awaited where it is made (``rows = tools.get_orders(month=3)``: _awaited.py
reads that from the caller's bytecode) is answered at once, by a blocking transport of
the same shape that returns the reply itself: the worker gives one only when the
sandbox frame is cross-origin isolated (it waits on memory it shares with the frame,
sandbox/worker/tools.js); a replay answers at once anyway. Without either, the call
stays an awaitable that says to await it, and why.
"""

from __future__ import annotations

import json
import keyword
import sys
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from reckon.kernel._awaited import awaited_here
from reckon.kernel._replay import Replay

__all__ = [
    "Tool",
    "ToolCall",
    "ToolError",
    "Tools",
    "answers_at_once",
    "call_now",
    "call_tool",
    "set_replay",
    "set_transport",
]

Transport = Callable[[str, str], Awaitable[Any] | str]
Blocking = Callable[[str, str], str]

_transport: Transport | None = None
_blocking: Blocking | None = None
_replay: Replay | None = None

_NO_TOOLS = (
    "no tools are available in this session: the page that embeds Reckon lends them "
    "(reckon.registerTool in JavaScript)"
)


class ToolError(Exception):
    """A tool call that did not give a result: refused, denied, failed or too big.

    It is the cell's error, not Reckon's: the message says why and what to do."""


# A traceback's last line then reads "ToolError: ..." (as the cell spells it), not the
# private module's path, which the person and the model would only have to read past.
ToolError.__module__ = "builtins"


def set_transport(transport: Transport | None, blocking: Blocking | None = None) -> None:
    """Where calls go (the worker sets it once; tests set their own): ``transport`` for
    awaited calls, ``blocking`` (if any) for calls not awaited, answered at once."""
    global _transport, _blocking
    _transport, _blocking = transport, blocking


def set_replay(records: list[Any] | None) -> None:
    """Answer calls from ``records`` (a notebook cell's ``metadata.reckon.tools``), in
    order, instead of the transport; ``None`` gives calls back to the transport."""
    global _replay
    _replay = None if records is None else Replay(records)


def _frame(value: Any) -> Any:
    import pandas as pd

    if isinstance(value, list) and all(isinstance(row, dict) for row in value):
        return pd.DataFrame.from_records(value)
    if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
        return pd.DataFrame(value)
    raise ToolError(
        "as_frame=True needs a list of records (objects) or an object of columns; "
        f"this tool returned {type(value).__name__}: use the result as it is"
    )


def _payload(name: str, args: dict[str, Any]) -> str:
    try:
        return json.dumps(args, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolError(
            f"{name}: arguments must be JSON data (str, int, float, bool, None, list, dict): {exc}"
        ) from None


def _value(name: str, raw: str, as_frame: bool) -> Any:
    """The call's result from the reply's JSON text, or the error it says."""
    reply = json.loads(raw)
    if reply.get("interrupted") is True:
        # The cell was interrupted (or hit its time limit) while it waited: it ends as
        # any interrupted cell does, not with an error a `except ToolError` would hide.
        raise KeyboardInterrupt(str(reply.get("message") or "interrupted"))
    if reply.get("status") != "ok":
        raise ToolError(str(reply.get("message") or f"the tool {name} failed"))
    value = json.loads(reply["text"]) if isinstance(reply.get("text"), str) else None
    return _frame(value) if as_frame else value


async def call_tool(name: str, args: dict[str, Any], *, as_frame: bool = False) -> Any:
    """Call the page's tool ``name`` with ``args``; its result, as JSON data."""
    source = _replay if _replay is not None else _transport
    if source is None:
        raise ToolError(_NO_TOOLS)
    raw = source(name, _payload(name, args))
    # A refusal the worker makes itself comes back at once, as text: no turn of the
    # event loop per call, so a loop of refused calls ends quickly.
    return _value(name, raw if isinstance(raw, str) else str(await raw), as_frame)


def call_now(name: str, args: dict[str, Any], *, as_frame: bool = False) -> Any:
    """The same call, answered before it returns (a replay, or the blocking transport)."""
    source = _replay if _replay is not None else _blocking
    if source is None:
        raise ToolError(_NO_TOOLS)
    return _value(name, str(source(name, _payload(name, args))), as_frame)


def answers_at_once() -> bool:
    """Whether a call not awaited can have its result now (see the module's doc)."""
    return _replay is not None or _blocking is not None


class ToolCall:
    """One call on its way: await it for the result.

    Used without ``await`` it says so, instead of a puzzling error about a coroutine."""

    __slots__ = ("_call", "_name")

    def __init__(self, name: str, args: dict[str, Any], as_frame: bool) -> None:
        self._name = name
        self._call = (args, as_frame)

    def __await__(self) -> Generator[Any, None, Any]:
        args, as_frame = self._call
        return call_tool(self._name, args, as_frame=as_frame).__await__()

    def _not_awaited(self, *_args: Any, **_kwargs: Any) -> Any:
        raise ToolError(
            f"tools.{self._name}(...) must be awaited here: result = await "
            f"tools.{self._name}(...) (a call without await can wait for the page only "
            "when the page is cross-origin isolated, and this one is not)"
        )

    __iter__ = __len__ = __getitem__ = __bool__ = _not_awaited

    def __getattr__(self, _name: str) -> Any:
        self._not_awaited()

    def __repr__(self) -> str:
        return f"<call of tool {self._name}: not awaited; write await tools.{self._name}(...)>"


class Tool:
    """A page tool as a Python function: keyword arguments; awaited, or not (the
    result then comes at once where it can, see the module's doc)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, *args: Any, as_frame: bool = False, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
            kwargs = dict(args[0])
        elif args:
            raise ToolError(
                f"call tools.{self.__name__} with keyword arguments, as its schema names "
                f"them: await tools.{self.__name__}(month=3)"
            )
        if answers_at_once() and not awaited_here(sys._getframe(1)):
            return call_now(self.__name__, kwargs, as_frame=as_frame)
        return ToolCall(self.__name__, kwargs, as_frame)

    def __repr__(self) -> str:
        return f"<page tool {self.__name__}: await tools.{self.__name__}(...)>"


def _tool(name: str) -> Tool:
    if name.startswith("__") or not name.isidentifier() or keyword.iskeyword(name):
        raise AttributeError(name)
    return Tool(name)


class Tools:
    """The ``tools`` namespace of a cell: ``await tools.<name>(**args)``."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Tool:
        return _tool(name)

    def __repr__(self) -> str:
        return (
            "<tools the page lends: await tools.<name>(arg=value, ...); as_frame=True "
            "makes a list of records a DataFrame>"
        )
