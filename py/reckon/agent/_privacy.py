"""The privacy setting: what of the user's files may reach the model.

``full`` sends observations as they are. ``schema`` keeps schemas, shapes, dtypes
and aggregates but hides every value of the user's table columns (except the
columns the person allows) wherever a cell's output shows it: printed rows,
``head()``, error messages, figure descriptions. The values to hide are read
from the files by a hidden cell at the start of each ask, and the filter replaces
each occurrence with ``[hidden]`` before the observation is formatted, so nothing
of the original reaches the message history. Text-file previews are left out of
the system prompt too.

Numbers are compared by value (``73400`` hides ``73400.0`` and ``73,400``; a value
with decimals also hides its rounded forms, down to the whole number either side).
Integers from -9 to 9 are never hidden: they are indistinguishable from counts,
indexes and shapes. An aggregate
that happens to equal a value in the file is hidden too (privacy wins).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from reckon._exceptions import ProtocolError
from reckon.agent._types import JSONDict

__all__ = [
    "HIDDEN",
    "MODES",
    "Privacy",
    "Redactor",
    "read_values",
    "schema_environment",
    "values_cell",
]

MODES = ("full", "schema")
HIDDEN = "[hidden]"
_VALUES_MARKER = "RECKON-HIDDEN-VALUES:"
_STORE = "_reckon_hidden_json"  # the values' JSON, kept in the sandbox while paged out
_PAGE = 60_000  # characters per hidden run: under the sandbox's output cap
_MAX_CHARS = 8_000_000  # beyond this, schema privacy refuses rather than hide a part
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w])")
_MAX_DECIMALS = 6


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


def schema_environment(environment: JSONDict) -> JSONDict:
    """The environment without file contents: text previews are dropped."""
    files = []
    for entry in environment.get("files") or []:
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k not in {"preview", "sample", "head"}}
        files.append(entry)
    return {**environment, "files": files}


def values_cell(environment: JSONDict, allow: Iterable[str]) -> str:
    """A cell that collects the distinct values of every table column not allowed,
    keeps them as JSON text in the sandbox and prints its length (``read_values``
    then pages it out and deletes it). It runs hidden: not logged, not shown.
    """
    tables = [
        [str(f.get("path")), str(f.get("read_with") or "")]
        for f in environment.get("files") or []
        if isinstance(f, dict) and f.get("kind") == "table" and f.get("status", "ok") == "ok"
    ]
    return f"""\
def _reckon_hidden_values(tables, allow):
    import json
    import pandas as pd
    strings, numbers = set(), set()
    for path, read_with in tables:
        try:
            frame = eval(read_with, {{"pd": pd}}) if read_with else None
        except Exception:
            frame = None
        if frame is None:
            frame = globals()["read_table"](path)
        for name in frame.columns:
            if str(name) in allow:
                continue
            column = frame[name].dropna()
            if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
                numbers.update(float(v) for v in column.unique())
            else:
                strings.update(str(v) for v in column.astype(str).unique())
    found = {{"strings": sorted(strings), "numbers": sorted(numbers)}}
    globals()[{_STORE!r}] = json.dumps(found)
    print({_VALUES_MARKER!r} + str(len(globals()[{_STORE!r}])))
try:
    _reckon_hidden_values({json.dumps(tables)}, {json.dumps(sorted(allow))})
finally:
    del _reckon_hidden_values
"""


def _page_cell(offset: int) -> str:
    return f"print({_VALUES_MARKER!r} + {_STORE}[{offset}:{offset + _PAGE}])"


_CLEANUP = f"globals().pop({_STORE!r}, None)"


async def read_values(
    run: Callable[[str], Awaitable[JSONDict]], environment: JSONDict, allow: Iterable[str]
) -> tuple[list[str], list[float]]:
    """Collect the values to hide with hidden runs; raises when that is not possible
    (then nothing may be sent: the caller fails closed)."""
    try:
        size = int(_printed(await run(values_cell(environment, allow))))
        if size > _MAX_CHARS:
            raise ProtocolError(
                f"the files hold too many distinct values to hide ({size} characters); "
                "allow the columns that need no hiding (allowColumns) or use privacy 'full'"
            )
        pages = [_printed(await run(_page_cell(offset))) for offset in range(0, size, _PAGE)]
    finally:
        await run(_CLEANUP)
    text = "".join(pages)
    if len(text) != size:
        raise ProtocolError("the files' values could not be read: the hidden output was cut")
    data = json.loads(text)
    return [str(s) for s in data["strings"]], [float(n) for n in data["numbers"]]


def _printed(result: JSONDict) -> str:
    """What a hidden cell printed after the marker; raises when it failed."""
    if result.get("status") != "ok":
        error = result.get("error") or {}
        detail = error.get("message") if isinstance(error, dict) else None
        problem = detail or result.get("status")
        raise ProtocolError(f"the files' values could not be read: {problem}")
    for line in str(result.get("stdout") or "").splitlines():
        if line.startswith(_VALUES_MARKER):
            return line[len(_VALUES_MARKER) :]
    raise ProtocolError("the files' values could not be read: the hidden cell printed nothing")


class Redactor:
    """Replaces every protected value in text with ``[hidden]`` and counts them."""

    def __init__(
        self, strings: Iterable[str], numbers: Iterable[float], *, keep: Iterable[str] = ()
    ) -> None:
        kept = set(keep)
        words = sorted(
            {s for s in strings if s.strip() and s not in kept and not _is_number(s)},
            key=len,
            reverse=True,
        )
        self._words = (
            re.compile("|".join(rf"(?<!\w){re.escape(w)}(?!\w)" for w in words)) if words else None
        )
        self._numbers = {n for n in numbers if n == n}  # NaN never prints as a match
        numeric_strings = [float(s.replace(",", "")) for s in strings if _is_number(s)]
        self._numbers.update(numeric_strings)
        fractions = [n for n in self._numbers if n != round(n) and abs(n) < 1e15]
        self._rounded = [{round(n, d) for n in fractions} for d in range(_MAX_DECIMALS + 1)]
        # A value shown as a whole number (rounded, truncated or ceiled) is still that value.
        self._rounded[0] = {float(f(n)) for n in fractions for f in (math.floor, math.ceil)}

    def redact(self, text: str) -> tuple[str, int]:
        if not text:
            return text, 0
        count = 0

        def hide(_: re.Match[str]) -> str:
            nonlocal count
            count += 1
            return HIDDEN

        if self._words is not None:
            text = self._words.sub(hide, text)

        def number(match: re.Match[str]) -> str:
            return hide(match) if self._protected(match.group(0)) else match.group(0)

        return _NUMBER.sub(number, text), count

    def _protected(self, token: str) -> bool:
        value = float(token.replace(",", ""))
        if value == int(value) and -9 <= value <= 9:
            return False
        if value in self._numbers:
            return True
        if value == int(value) and value in self._rounded[0]:
            return True
        decimals = len(token.split(".", 1)[1]) if "." in token and "e" not in token.lower() else 0
        return 0 < decimals <= _MAX_DECIMALS and value in self._rounded[decimals]

    def filter_result(self, result: JSONDict) -> tuple[JSONDict, int]:
        """A copy of a run result with every protected value hidden (the model's view)."""
        total = 0

        def clean(value: Any) -> Any:
            nonlocal total
            if not isinstance(value, str):
                return value
            text, count = self.redact(value)
            total += count
            return text

        filtered = {k: clean(v) for k, v in result.items() if k in {"stdout", "stderr"}}
        filtered.update({k: v for k, v in result.items() if k not in filtered})
        value = result.get("result")
        if isinstance(value, dict):
            filtered["result"] = {"type": value.get("type"), "text": clean(value.get("text"))}
        error = result.get("error")
        if isinstance(error, dict):
            filtered["error"] = {k: clean(v) for k, v in error.items()}
        if result.get("assigned") is not None:
            filtered["assigned"] = [
                {"name": a.get("name"), "type": a.get("type"), "text": clean(a.get("text"))}
                for a in result.get("assigned") or []
                if isinstance(a, dict)
            ]
        filtered["figures"] = [
            {"description": clean(f.get("description"))}
            for f in result.get("figures") or []
            if isinstance(f, dict)
        ]
        files = [f for f in result.get("files") or [] if isinstance(f, dict)]
        filtered["files"] = [{**f, "path": clean(f.get("path"))} for f in files]
        return filtered, total


def _is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip())) and text == text.strip()
