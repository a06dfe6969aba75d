"""The privacy setting: what of the user's files may reach the model.

``full`` sends observations as they are. ``schema`` keeps schemas, shapes, dtypes
and aggregates but hides every value of the user's table columns (except the
columns the person allows) wherever a cell's output shows it: printed rows,
``head()``, error messages, figure descriptions. The values to hide are read
from the files by a hidden cell at the start of each ask, and the filter replaces
each occurrence with ``[hidden]`` before the observation is formatted, so nothing
of the original reaches the message history. Text-file previews are left out of
the system prompt too.

What counts as an occurrence (case, spacing, base64, rounded and scaled numbers) is
the redactor's (``_redactor``). An aggregate that happens to equal a value in the file
is hidden too (privacy wins).

In the browser the scan runs in a fresh worker that no cell can reach (``_scan``).
This module's scan is the one for an executor without ``scan``: a hidden cell in the
sandbox, where the model's code runs too. It runs in a namespace
of its own, so a name a cell defined (``sorted``, ``print``, ``globals``) is not the
scan's, but a cell can still tamper with what it imports (patch pandas): the values
found stay hidden for the rest of the session (``HiddenValues``: a later scan adds,
never removes), and a scan that finds nothing in a table that has rows, or does not
name it, or whose result changed after it printed its digest, fails closed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from reckon._exceptions import ProtocolError
from reckon.agent._types import JSONDict
from reckon.agent.privacy._redactor import HIDDEN, Redactor
from reckon.agent.privacy._scan import MARKER, PAGE, Found, found_from, scan_expression, sized

__all__ = [
    "HIDDEN",
    "MODES",
    "Privacy",
    "Redactor",
    "Table",
    "read_values",
    "schema_environment",
    "tables",
    "values_cell",
]

MODES = ("full", "schema")
_STORE = "_reckon_hidden_json"  # the values' JSON, kept in the sandbox while paged out
_RESTART = ". Restart the sandbox (your files stay) and ask again"


@dataclass(frozen=True)
class Privacy:
    """A session's privacy setting: ``mode`` and the columns whose values may be sent."""

    mode: str = "full"
    allow_columns: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, mode: Any = None, allow_columns: Any = None) -> Privacy:
        """From settings (``privacy``, ``allowColumns``); bad input raises with what to do."""
        chosen = "full" if mode is None or mode == "" else mode
        if chosen not in MODES:
            raise ProtocolError(
                f"settings.privacy must be one of {', '.join(map(repr, MODES))}, got {mode!r}"
            )
        allowed = [] if allow_columns is None else allow_columns
        if not isinstance(allowed, list | tuple) or not all(isinstance(c, str) for c in allowed):
            raise ProtocolError("settings.allowColumns must be a list of column names (strings)")
        return cls(str(chosen), frozenset(allowed))

    @property
    def hides(self) -> bool:
        return self.mode == "schema"


@dataclass(frozen=True)
class Table:
    """A file of the environment that was read as a table: what the scan reads."""

    path: str
    read_with: str
    rows: object  # as the environment gives it: a count from the kernel
    columns: tuple[str, ...]
    sql_table: str

    @property
    def names(self) -> tuple[str, ...]:
        """Its column names and its SQL table name: schema, which schema mode sends."""
        return (*self.columns, self.sql_table) if self.sql_table else self.columns


def tables(environment: JSONDict) -> list[Table]:
    """The environment's tables that were read (``kind`` table, ``status`` ok)."""
    found = []
    for entry in environment.get("files") or []:
        if not isinstance(entry, dict) or entry.get("kind") != "table":
            continue
        if entry.get("status", "ok") != "ok":
            continue
        columns = entry.get("columns") or []
        names = tuple(str(c.get("name") if isinstance(c, dict) else c) for c in columns)
        found.append(
            Table(
                path=str(entry.get("path")),
                read_with=str(entry.get("read_with") or ""),
                rows=entry.get("rows"),
                columns=names,
                sql_table=str(entry.get("sql_table") or ""),
            )
        )
    return found


def schema_environment(environment: JSONDict) -> JSONDict:
    """The environment without file contents: text previews are dropped."""
    files = []
    for entry in environment.get("files") or []:
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k not in {"preview", "sample", "head"}}
        files.append(entry)
    return {**environment, "files": files}


def values_cell(environment: JSONDict, allow: Iterable[str]) -> str:
    """A cell that scans the environment's data folder as the fresh worker does
    (``reckon.kernel._value_scan``: every sheet and archive member, the names that may
    be sent), keeps the result as JSON text in the sandbox and prints its length and
    SHA-256 (``read_values`` then pages it out, checks it and deletes it). It runs
    hidden: not logged, not shown.

    The scan runs in a namespace of its own, reached through ``__builtins__`` (which
    the kernel sets to the real ``builtins`` module at the start of every run): a
    name a cell defined (``sorted``, ``print``, ``globals``, ``read_table``) is not
    the scan's. What it imports (pandas, the kernel) a cell can still have patched;
    see the module's docstring.
    """
    root = str(environment.get("data_dir") or "/data")
    scan = f"""\
import hashlib
text = {scan_expression(root, allow)}
print({MARKER!r} + f"{{len(text)}} {{hashlib.sha256(text.encode()).hexdigest()}}")
namespace[{_STORE!r}] = text
"""
    return (
        f"__builtins__.exec({scan!r}, "
        "{'__builtins__': __builtins__, 'namespace': __builtins__.globals()})"
    )


# The builtins these cells use are taken from ``__builtins__``: a cell may have defined
# ``print`` or ``globals``. The JSON they read is checked against the scan's digest.
def _page_cell(offset: int) -> str:
    return f"__builtins__.print({MARKER!r} + {_STORE}[{offset}:{offset + PAGE}])"


_CLEANUP = f"__builtins__.globals().pop({_STORE!r}, None)"


async def read_values(
    run: Callable[[str], Awaitable[JSONDict]], environment: JSONDict, allow: Iterable[str]
) -> Found:
    """Collect the values to hide with hidden runs; raises when that is not possible
    (then nothing may be sent: the caller fails closed)."""
    try:
        size, digest = sized(_printed(await run(values_cell(environment, allow))))
        pages = [_printed(await run(_page_cell(offset))) for offset in range(0, size, PAGE)]
    finally:
        await run(_CLEANUP)
    text = "".join(pages)
    if len(text) != size:
        raise ProtocolError("the files' values could not be read: the hidden output was cut")
    if hashlib.sha256(text.encode()).hexdigest() != digest:
        raise ProtocolError(f"the files' values were altered after the scan read them{_RESTART}")
    found = found_from(text)
    _check_found(environment, allow, found.found)
    return found


def _check_found(environment: JSONDict, allow: Iterable[str], found: Any) -> None:
    """Fail closed when the scan found no value in a table that has rows and protected
    columns: the reader it used was altered (a cell patched pandas), or the scan was.
    The scan records every table it reads, so one it does not name counts as none found."""
    if not isinstance(found, dict):
        raise ProtocolError(f"the files' values could not be read: the scan was altered{_RESTART}")
    allowed = set(allow)
    for table in tables(environment):
        if not table.rows or all(c in allowed for c in table.columns):
            continue
        if found.get(table.path):
            continue
        raise ProtocolError(
            f"the scan for the values to hide found none in {table.path}, which has "
            f"{table.rows} rows, so something in the sandbox changed how tables are read "
            "(a cell may have replaced a pandas function). Nothing was sent. Restart the "
            "sandbox (your files stay) and ask again; if the file's columns are really "
            "empty, allow them (allowColumns)"
        )


def _printed(result: JSONDict) -> str:
    """What a hidden cell printed after the marker; raises when it failed."""
    if result.get("status") != "ok":
        error = result.get("error") or {}
        detail = error.get("message") if isinstance(error, dict) else None
        problem = detail or result.get("status")
        raise ProtocolError(f"the files' values could not be read: {problem}")
    lines = str(result.get("stdout") or "").splitlines()
    printed = [line[len(MARKER) :] for line in lines if line.startswith(MARKER)]
    if not printed:
        raise ProtocolError("the files' values could not be read: the hidden cell printed nothing")
    if len(printed) > 1:  # something besides the hidden cell printed in its run
        raise ProtocolError(f"the files' values could not be read: the scan was altered{_RESTART}")
    return printed[0]
