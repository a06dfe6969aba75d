"""A persistent Python session: run cells, capture what they print, draw and write."""

from __future__ import annotations

import builtins
import os
import re
import time
import warnings
from collections.abc import Callable
from typing import Any

from reckon._exceptions import ReckonError
from reckon.kernel._capture import STREAM_LIMIT, OutputCapture
from reckon.kernel._cells import CompiledCell, compile_cell, execute
from reckon.kernel._display import describe_value
from reckon.kernel._figures import FigureCollector, prepare_matplotlib
from reckon.kernel._files import diff_snapshots, snapshot
from reckon.kernel._formulas import flag_formulas
from reckon.kernel._notes import cell_notes, shown_note
from reckon.kernel._packages import (
    PIP_NAME,
    InstallError,
    pip_command,
    pip_install,
    rewrite_pip_lines,
)
from reckon.kernel._read import read_table
from reckon.kernel._sql import run_sql, take_sql_notes
from reckon.kernel._tools import ToolError, Tools
from reckon.kernel._traceback import cell_filename, format_error, format_syntax_error

__all__ = ["Kernel"]


_ASSIGNED_SHOWN = 4
# What a cell that may wait on the event loop contains: a top-level ``await``, ``async
# for``/``async with``, or a ``%pip``/``!pip`` line (rewritten into an awaited install).
# A false match only costs the way through the loop.
_MAY_AWAIT = re.compile(r"await|async|pip")


class Kernel:
    """One namespace that lives across runs, like a notebook kernel.

    User errors come back as data (``status: "error"``); ``run`` never raises
    for anything the cell does.
    """

    def __init__(
        self,
        *,
        data_dir: str = "/data",
        output_dir: str = "/output",
        output_limit: int = 100_000,
        stream_limit: int = STREAM_LIMIT,
        on_stream: Callable[[str, str], None] | None = None,
        stream_interval: float = 0.05,
    ) -> None:
        self.data_dir = data_dir
        self.output_dir = output_dir
        self.output_limit = output_limit
        self.stream_limit = stream_limit
        self.on_stream = on_stream
        self.stream_interval = stream_interval
        os.makedirs(data_dir, exist_ok=True)
        os.makedirs(output_dir, exist_ok=True)
        prepare_matplotlib()
        # If someone switches to plain Agg anyway, plt.show() must stay quiet.
        warnings.filterwarnings("ignore", message=".*non-interactive.*cannot be shown")
        self._runs = 0
        self.namespace: dict[str, Any] = {}
        self.reset()

    def reset(self) -> None:
        """Forget every variable and import; files on disk stay."""
        data_dir = self.data_dir

        def sql(query: str, *, limit: int | None = None) -> Any:
            return run_sql(query, data_dir=data_dir, limit=limit)

        sql.__doc__ = run_sql.__doc__
        sql.__name__ = "run_sql"

        async def install(*targets: str) -> dict[str, Any]:
            return await pip_install(*targets, data_dir=data_dir)

        install.__doc__ = pip_install.__doc__
        install.__name__ = "pip_install"
        # pd, np and plt are there as in most notebooks: small models use them without
        # importing them (two of three first cells failed on it), and the modules are
        # loaded already, so binding them costs nothing.
        import matplotlib.pyplot as plt
        import numpy as np
        import pandas as pd

        self.namespace = {
            "__name__": "__main__",
            "read_table": read_table,
            "run_sql": sql,
            "pip_install": install,
            "pd": pd,
            "np": np,
            "plt": plt,
            # The page's tools (await tools.<name>(...)); calls go to the page, which
            # decides what runs (reckon/kernel/_tools.py).
            "tools": Tools(),
            "ToolError": ToolError,
        }

    async def run(self, code: str) -> dict[str, Any]:
        """Run ``code`` in the session and return the run result (PROTOCOL.md §1)."""
        self._runs += 1
        filename = cell_filename(self._runs)
        take_sql_notes()  # an earlier cell's, left when it failed before its notes
        started = time.perf_counter()
        before = snapshot(self.output_dir)
        status = "ok"
        error: dict[str, Any] | None = None
        result: dict[str, Any] | None = None
        assigned: list[dict[str, Any]] = []
        capture = OutputCapture(
            limit=self.output_limit,
            stream_limit=self.stream_limit,
            on_stream=self.on_stream,
            interval=self.stream_interval,
            overflow_hint=f"write the full output to a file under {self.output_dir}",
        )
        figures = FigureCollector()
        with capture, figures:
            try:
                cell = self._compile(code, filename)
            except SyntaxError as exc:
                status, error = "error", format_syntax_error(exc)
            else:
                # Every run starts with the real builtins as ``__builtins__``: a cell cannot
                # hand the next one (Reckon's hidden privacy scan among them) builtins of its
                # own. What it had put there is held until the run ends, so that no
                # finalizer of it runs before the cell does.
                replaced = self.namespace.get("__builtins__")
                self.namespace["__builtins__"] = builtins
                try:
                    value = await execute(cell, self.namespace)
                    result = describe_value(value)
                    assigned = _assigned_values(cell.assigned, self.namespace)
                except KeyboardInterrupt as exc:
                    status, error = "interrupted", format_error(exc, cell=filename)
                except BaseException as exc:
                    # SystemExit, MemoryError, CancelledError included: the cell
                    # failed, the session goes on.
                    status, error = "error", format_error(exc, cell=filename)
                del replaced
            try:
                figures.collect()
            except KeyboardInterrupt as exc:
                status, error = "interrupted", error or format_error(exc, cell=filename)
            for problem in figures.problems:
                capture.stderr.write(problem + "\n")
            if figures.skipped:
                capture.stderr.write(
                    f"[{figures.skipped} more figures not shown; draw at most "
                    "20 per run, or save them to files]\n"
                )
        stdout = capture.stdout.getvalue()
        notes = cell_notes(code, stdout, self.namespace) if status == "ok" else []
        for note in notes:
            capture.stderr.write(shown_note(note) + "\n")
        extra: dict[str, Any] = {"notes": notes} if notes else {}
        if assigned and not stdout and status == "ok":
            extra["assigned"] = assigned
        files = diff_snapshots(before, snapshot(self.output_dir))
        return {
            "status": status,
            "stdout": stdout,
            # Spreadsheet cells of the run's files that would run as formulas (_formulas).
            "stderr": capture.stderr.getvalue() + flag_formulas(files),
            "truncated": capture.truncated,
            "result": result,
            "figures": figures.figures,
            "files": files,
            "error": error,
            "duration_ms": (time.perf_counter() - started) * 1000.0,
            "restarted": False,
            **extra,
        }

    def run_now(self, code: str) -> dict[str, Any] | None:
        """``run`` done without the event loop, for a cell that awaits nothing (nearly
        every cell): the worker then answers without a turn of Pyodide's loop. None for
        a cell that may await: run it with ``run``."""
        if _MAY_AWAIT.search(code):
            return None
        running = self.run(code)
        try:
            running.send(None)
        except StopIteration as done:
            result: dict[str, Any] = done.value
            return result
        running.close()
        raise ReckonError("a cell without await waited on the event loop")

    def _compile(self, code: str, filename: str) -> CompiledCell:
        """The cell compiled; a `%pip`/`!pip` line (not Python) becomes a call that
        installs offline and prints what it did, or stops the cell with why not."""
        try:
            return compile_cell(code, filename=filename)
        except SyntaxError:
            rewritten = rewrite_pip_lines(code)
            if rewritten is None:
                raise
        data_dir = self.data_dir

        async def pip(args: str) -> None:
            outcome = await pip_command(args, data_dir=data_dir)
            if outcome["status"] != "ok":
                raise InstallError(outcome["message"])
            if outcome["message"]:
                print(outcome["message"])

        self.namespace[PIP_NAME] = pip
        return compile_cell(rewritten, filename=filename, shown=code)


def _assigned_values(names: tuple[str, ...], namespace: dict[str, Any]) -> list[dict[str, Any]]:
    """What a cell that ends with ``x = …`` assigned: small models compute a value into
    a name and never print it, then answer with a guess (seen with Qwen2.5-Coder-1.5B:
    `mean_temperature = df['temperature'].mean().round(2)`, then "20.5")."""
    shown: list[dict[str, Any]] = []
    for name in names[:_ASSIGNED_SHOWN]:
        described = describe_value(namespace.get(name))
        if described is not None:
            shown.append({"name": name, "type": described["type"], "text": described["text"]})
    return shown
