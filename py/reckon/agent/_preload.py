"""Loading the user's tables before the model writes its first cell.

Small models write ``df[...]`` before anything loads ``df``: with Qwen2.5-Coder-1.5B,
the first (forced) tool call was a NameError in most questions of the benchmark, and
a wasted step of prompt reading each time. So the agent runs each new table's read
line itself, as a step of its own that the page shows and the notebook keeps, and the
prompt says which variable holds which file. One table is ``df``; with several, each
is ``df_<name>`` after its file. A file is loaded once per conversation (again only
when it changes), so what the model did to ``df`` in an earlier answer is kept.
"""

from __future__ import annotations

import keyword
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from reckon._exceptions import ReckonError
from reckon.agent._types import JSONDict

__all__ = ["MAX_PRELOAD_BYTES", "TOO_BIG_TO_LOAD", "Load", "TableLoads"]

# Larger tables are left for the model to load (or query with SQL) when it needs them:
# reading one it never uses would cost the person seconds and memory on every upload.
MAX_PRELOAD_BYTES = 100 * 1024 * 1024
# Above this a table is not loaded whole at all: in pandas a CSV takes several times its
# size, and the sandbox's memory ceiling is 2 GB. Models are told to query it instead
# (run_sql, or read_table with columns= and where=), which scans the file in place.
TOO_BIG_TO_LOAD = 256 * 1024 * 1024


@dataclass(frozen=True)
class Load:
    """One table to load: ``name = read_with``."""

    path: str
    name: str
    read_with: str
    key: tuple[str, str]

    @property
    def code(self) -> str:
        return f"{self.name} = {self.read_with}"


class TableLoads:
    """Which variable holds which table, for one conversation."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # path -> variable, once loaded
        self._keys: dict[str, tuple[str, str]] = {}

    def clear(self) -> None:
        self.names.clear()
        self._keys.clear()

    def plan(self, files: list[JSONDict]) -> list[Load]:
        """The tables of ``files`` that are new or changed since they were loaded."""
        tables = [f for f in files if _loadable(f)]
        loads: list[Load] = []
        taken = set(self.names.values())
        alone = not self.names and len(tables) == 1
        for entry in tables:
            path = str(entry["path"])
            key = (str(entry["read_with"]), str(entry.get("size")))
            if self._keys.get(path) == key:
                continue
            name = self.names.get(path) or ("df" if alone else _variable(path, taken))
            taken.add(name)
            loads.append(Load(path, name, str(entry["read_with"]), key))
        return loads

    def step(self, load: Load, result: JSONDict) -> JSONDict:
        """Record how ``load`` went (``result``: the cell's); the step that shows it."""
        if result.get("status") == "ok":
            self.names[load.path] = load.name
            self._keys[load.path] = load.key
            text = f"Loaded {load.path} as {load.name}."
        else:  # the prompt then says how to load it
            self.names.pop(load.path, None)
            self._keys.pop(load.path, None)
            text = f"{load.path} could not be loaded as {load.name}; the model loads it."
        return {"kind": "code", "text": text, "code": load.code, "result": result,
                "origin": "reckon"}  # fmt: skip

    async def load(
        self,
        files: list[JSONDict],
        run: Callable[[str], Awaitable[JSONDict]],
        add: Callable[[JSONDict, float], object],
    ) -> None:
        """Load the new tables of ``files`` as variables, each cell ``run`` and shown as
        a step of its own (``add``: the step and when it started)."""
        for load in self.plan(files):
            started = time.monotonic()
            try:
                result = await run(load.code)
            except ReckonError as exc:
                result = {"status": "error", "error": {"type": "SandboxError", "message": str(exc)}}
            add(self.step(load, result), started)


def _loadable(entry: JSONDict) -> bool:
    if entry.get("status") == "error" or entry.get("kind") != "table":
        return False
    if not entry.get("read_with") or not entry.get("path"):
        return False
    size = entry.get("size")
    return not (isinstance(size, int) and size > MAX_PRELOAD_BYTES)


def _variable(path: str, taken: set[str]) -> str:
    stem = re.sub(r"\W+", "_", PurePosixPath(path).stem.lower()).strip("_") or "table"
    base = f"df_{stem}"
    name, n = base, 2
    while name in taken or keyword.iskeyword(name) or not name.isidentifier():
        name, n = f"{base}_{n}", n + 1
    return name
