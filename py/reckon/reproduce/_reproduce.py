"""Does an exported notebook reproduce? Run it again and compare every output.

Two places to run it again:

- ``reproduce_in_sandbox(session, text, files)`` (what ``reckon eval`` does): in a
  fresh browser sandbox, a new headless ``Session`` with nothing in it but the input
  files, through the page's ``run`` (the same walls as any run: no network, no host
  files);
- ``reproduce_notebook(text, files)``: **on this machine**, in a plain CPython
  process, as you, with your network and your files. The code in an exported
  notebook was written by a model, which may have been steered by text in a file, and
  code can behave differently outside the browser (``sys.platform != "emscripten"``);
  call it only on notebooks you have read or trust (``reckon eval`` does so only with
  ``--reproduce-on-host``).

``reproduce_notebook`` copies the input files into ``data/`` of a scratch directory,
runs each code cell of the notebook there in a fresh CPython process (one namespace,
like a Jupyter kernel, with nothing pre-loaded: the notebook's own setup cell must
provide what it uses), captures outputs with the same kernel code the browser sandbox
uses; ``reproduce_in_sandbox`` runs the same cells from ``/``, so ``data/`` is the
sandbox's ``/data``. Both compare the outputs with the ones stored in the notebook:

- text (stdout, stderr, a value's text) must be equal after normalising trivia:
  memory addresses, trailing spaces, the scratch directory, ``/data/`` vs ``data/``;
- tables (a value with HTML) also match when their cell values are equal;
- figures cannot match byte for byte (font rasterisers differ): each must be
  there, with the same description and the same pixel size (within 3 pixels: a
  tight bounding box follows the text extents, which differ by a pixel).

A cell that called the page's host tools has its calls answered from the notebook
(``metadata.reckon.tools``: each call's result, or the error it was), in order,
with no page (``reckon.kernel.set_replay``); a call the record does not answer (its
result was not kept: schema privacy, too large) is a "not recorded" ``ToolError``.

The report says which cells differed and, where the code shows it, why
(randomness without a seed, the current time, the platform, an error, a host tool
result the notebook does not keep).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from reckon._exceptions import SessionError
from reckon.reproduce._compare import compare_cell

__all__ = [
    "RUNS_FILE",
    "SandboxSession",
    "execute_cells",
    "recorded_tools",
    "reproduce_in_sandbox",
    "reproduce_notebook",
]

RUNS_FILE = "reckon-runs.json"  # what the child process (``__main__``) writes


class SandboxSession(Protocol):
    """What ``reproduce_in_sandbox`` needs of a session: ``reckon.Session`` is one.
    Named by shape, not imported, so that ``reckon.client`` can re-export this
    package without a circle."""

    def upload(self, file: str | os.PathLike[str] | tuple[str, bytes]) -> dict[str, Any]: ...

    def run(self, code: str, *, timeout_ms: int | None = None) -> dict[str, Any]: ...


def reproduce_notebook(
    notebook: str | dict[str, Any],
    files: Iterable[str | os.PathLike[str]] = (),
    *,
    data_dir: str | os.PathLike[str] | None = None,
    timeout_s: float = 600.0,
) -> dict[str, Any]:
    """Run ``notebook`` (``.ipynb`` text or dict) on CPython with ``files`` (or every
    file in ``data_dir``) as its inputs and compare its outputs with the stored ones.

    **This runs the notebook's code on this machine, outside any sandbox**: in a
    CPython process started as you, which can use your network and read or change
    your files. An exported notebook holds code a model wrote; run it here only after
    reading it. ``reproduce_in_sandbox`` checks the same thing in a fresh browser
    sandbox, and is what ``reckon eval`` uses unless it is given ``--reproduce-on-host``.

    Returns ``{status: "ok", cells, matched, share, outputs, outputs_matched,
    differences: [{cell, execution_count, output, why, browser, cpython}]}``.
    """
    nb: dict[str, Any] = json.loads(notebook) if isinstance(notebook, str) else notebook
    code_cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    inputs = [Path(f) for f in files]
    if data_dir is not None:
        inputs += sorted(p for p in Path(data_dir).iterdir() if p.is_file())
    with tempfile.TemporaryDirectory(prefix="reckon-reproduce-") as scratch:
        work = Path(scratch)
        (work / "data").mkdir()
        for path in inputs:
            shutil.copyfile(path, work / "data" / path.name)
        sources = ["".join(c.get("source", "")) for c in code_cells]
        tools = [recorded_tools(c) for c in code_cells]
        runs = execute_cells(sources, work, timeout_s=timeout_s, tools=tools)
        return _compare(code_cells, runs, workdir=str(work), rerun="cpython")


# Run first, not compared: the exported cells read data/ and write output/ relative to
# the notebook, and in the sandbox those are /data and /output.
_SANDBOX_PREAMBLE = "import os as _reckon_os\n_reckon_os.chdir('/')\ndel _reckon_os\n"


def recorded_tools(cell: dict[str, Any]) -> list[Any] | None:
    """The host tool calls a notebook cell made in the browser, to replay; None if none."""
    calls = cell.get("metadata", {}).get("reckon", {}).get("tools")
    return calls if isinstance(calls, list) and calls else None


def _replay_code(calls: list[Any] | None) -> str:
    """A run, not compared, that sets the sandbox's replay of the next cell's calls.

    The records go in as one string literal that ``json.loads`` reads: whatever the
    notebook holds is data, never code. The run binds no name and shows nothing."""
    records = "None" if calls is None else f"__import__('json').loads({json.dumps(calls)!r})"
    return f"__import__('reckon.kernel', fromlist=['set_replay']).set_replay({records})"


def reproduce_in_sandbox(
    session: SandboxSession,
    notebook: str | dict[str, Any],
    files: Iterable[str | os.PathLike[str]] = (),
    *,
    timeout_ms: int | None = None,
) -> dict[str, Any]:
    """Run ``notebook``'s code cells again in ``session``'s browser sandbox, with
    ``files`` uploaded to ``/data``, and compare their outputs with the stored ones.

    ``session`` should be a fresh one (``Session.on(runtime)``: its own browser
    context, nothing defined, no other files); the code runs only inside its sandbox,
    through the page's ``run``, so it reaches neither the network nor this machine's
    files. ``timeout_ms`` limits each cell (default: the session's). Returns the shape
    of ``reproduce_notebook``, each difference holding the re-run's text under
    ``fresh``. Raises ``SessionError`` when the sandbox itself fails (a hung page);
    a cell that fails is a difference, not an error.
    """
    nb: dict[str, Any] = json.loads(notebook) if isinstance(notebook, str) else notebook
    code_cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    for path in files:
        reply = session.upload(path)
        if reply.get("status") == "error":
            raise SessionError(f"{Path(path).name} could not be uploaded: {reply.get('message')}")
    prepared = session.run(_SANDBOX_PREAMBLE, timeout_ms=timeout_ms)
    if prepared.get("status") != "ok":
        raise SessionError(f"the fresh sandbox could not be prepared: {prepared.get('error')}")
    runs = []
    replaying = False
    for cell in [*code_cells, None]:
        calls = None if cell is None else recorded_tools(cell)
        if calls is not None or replaying:  # set for this cell; cleared after it
            replayed = session.run(_replay_code(calls), timeout_ms=timeout_ms)
            if replayed.get("status") != "ok":
                why = replayed.get("error")
                raise SessionError(f"the fresh sandbox could not replay a cell's tool calls: {why}")
            replaying = calls is not None
        if cell is not None:
            runs.append(session.run("".join(cell.get("source", "")), timeout_ms=timeout_ms))
    return _compare(code_cells, runs, workdir="", rerun="fresh")


def _compare(
    code_cells: list[dict[str, Any]], runs: list[dict[str, Any]], *, workdir: str, rerun: str
) -> dict[str, Any]:
    differences: list[dict[str, Any]] = []
    outputs = outputs_matched = matched = compared_cells = 0
    for number, (cell, run) in enumerate(zip(code_cells, runs, strict=True)):
        setup = bool(cell.get("metadata", {}).get("reckon", {}).get("setup"))
        same, found = compare_cell(cell, run, workdir=workdir, rerun=rerun)
        for item in found:
            item["cell"] = number
            item["execution_count"] = cell.get("execution_count")
        differences += found
        if setup:
            continue  # the export's own preamble: must run, but is not the session's work
        compared_cells += 1
        outputs += len(cell.get("outputs", []))
        outputs_matched += same
        matched += not found
    return {
        "status": "ok",
        "cells": compared_cells,
        "matched": matched,
        "share": round(matched / compared_cells, 4) if compared_cells else 1.0,
        "outputs": outputs,
        "outputs_matched": outputs_matched,
        "differences": differences,
    }


def execute_cells(
    sources: list[str],
    workdir: Path,
    *,
    timeout_s: float,
    tools: list[list[Any] | None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``sources`` in order in one namespace, in a CPython process started in
    ``workdir``; returns one run result (PROTOCOL.md section 1) per cell.

    ``tools`` holds, per cell, the host tool calls to replay (``recorded_tools``) or
    None."""
    replays = tools if tools is not None else [None] * len(sources)
    cells = [{"source": s, "tools": t} for s, t in zip(sources, replays, strict=True)]
    (workdir / "cells.json").write_text(json.dumps(cells), encoding="utf-8")
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds reckon/
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    env["MPLBACKEND"] = "Agg"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reckon.reproduce", str(workdir)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SessionError(
            f"the notebook did not finish on CPython within {timeout_s:.0f} s"
        ) from None
    runs_file = workdir / RUNS_FILE
    if done.returncode != 0 or not runs_file.is_file():
        raise SessionError(f"the CPython run of the notebook crashed: {done.stderr[-2000:]}")
    runs: list[dict[str, Any]] = json.loads(runs_file.read_text(encoding="utf-8"))
    return runs
