"""Schema privacy's value scan where no cell can reach it: a fresh worker.

In the browser the page answers ``scan`` by booting another worker in the sandbox's
frame, mounting the person's files in it, running one cell and ending it
(web/sandbox/fresh.js). No cell of the session ran in that interpreter, so nothing
a cell patched (pandas, ``json``, the kernel, ``builtins``) shapes what it finds, and
it trusts nothing the session's sandbox reported: it lists /data itself and reads
each table as the kernel's own ``inspect`` says to. What it reads are the uploads, the
person's files; a file a cell wrote holds no value of theirs that the scan of the
uploads did not find, unless the cell made it up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable

from reckon._exceptions import ProtocolError
from reckon.agent._privacy import _MAX_CHARS, _PAGE, _VALUES_MARKER, _sized
from reckon.agent._types import JSONDict

__all__ = ["fresh_values_cell", "read_fresh_values"]


def fresh_values_cell(allow: Iterable[str]) -> str:
    """A cell for the fresh worker: every table under /data, each column not allowed,
    its distinct values; printed as a ``size digest`` line, then the JSON in pages."""
    return f"""\
import hashlib
import json
import os

import pandas as pd
from reckon.kernel import read_table
from reckon.kernel._inspect import inspect

allow = set({json.dumps(sorted(allow))})
strings, numbers, found = set(), set(), {{}}
for folder, _, names in sorted(os.walk("/data")):
    for name in sorted(names):
        path = os.path.join(folder, name)
        info = inspect(path)
        if info.get("status") != "ok" or info.get("kind") != "table":
            continue
        read_with = info.get("read_with")
        if read_with:
            frame = eval(read_with, {{"pd": pd, "read_table": read_table}})
        else:
            frame = read_table(path)
        own = 0
        for column in frame.columns:
            if str(column) in allow:
                continue
            values = frame[column].dropna()
            if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
                seen = {{float(v) for v in values.unique()}}
                numbers.update(seen)
            else:
                seen = {{str(v) for v in values.astype(str).unique()}}
                strings.update(seen)
            own += len(seen)
        found[path] = own
text = json.dumps({{"strings": sorted(strings), "numbers": sorted(numbers), "found": found}})
print({_VALUES_MARKER!r} + f"{{len(text)}} {{hashlib.sha256(text.encode()).hexdigest()}}")
for start in range(0, len(text), {_PAGE}):
    print({_VALUES_MARKER!r} + text[start:start + {_PAGE}])
"""


async def read_fresh_values(
    scan: Callable[[str], Awaitable[JSONDict]], allow: Iterable[str]
) -> tuple[list[str], list[float]]:
    """The values to hide, from a fresh worker; raises when they cannot be read (then
    nothing may be sent: the caller fails closed)."""
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
    printed = [line[len(_VALUES_MARKER) :] for line in lines if line.startswith(_VALUES_MARKER)]
    if not printed:
        raise ProtocolError("the files' values could not be read: the scan printed nothing")
    size, digest = _sized(printed[0])
    if size > _MAX_CHARS:
        raise ProtocolError(
            f"the files hold too many distinct values to hide ({size} characters); "
            "allow the columns that need no hiding (allowColumns) or use privacy 'full'"
        )
    text = "".join(printed[1:])
    if len(text) != size or hashlib.sha256(text.encode()).hexdigest() != digest:
        raise ProtocolError("the files' values could not be read: the scan's output was cut")
    data = json.loads(text)
    return [str(s) for s in data["strings"]], [float(n) for n in data["numbers"]]
