"""Does an exported notebook reproduce on CPython? Run it and compare every output.

``reproduce_notebook(text, files)`` copies the input files into ``data/`` of a
scratch directory, runs each code cell of the notebook there in a fresh CPython
process (one namespace, like a Jupyter kernel, with nothing pre-loaded: the
notebook's own setup cell must provide what it uses), captures outputs with
the same kernel code the browser sandbox uses, and compares them with the
outputs stored in the notebook:

- text (stdout, stderr, a value's text) must be equal after normalising trivia:
  memory addresses, trailing spaces, the scratch directory, ``/data/`` vs ``data/``;
- tables (a value with HTML) also match when their cell values are equal;
- figures cannot match byte for byte (font rasterisers differ): each must be
  there, with the same description and the same pixel size (within 3 pixels: a
  tight bounding box follows the text extents, which differ by a pixel).

The report says which cells differed and, where the code shows it, why
(randomness without a seed, the current time, the platform, an error).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reckon._exceptions import SessionError
from reckon.client._compare import compare_cell

__all__ = ["execute_cells", "reproduce_notebook"]

_RUNS_FILE = "reckon-runs.json"


def reproduce_notebook(
    notebook: str | dict[str, Any],
    files: Iterable[str | os.PathLike[str]] = (),
    *,
    data_dir: str | os.PathLike[str] | None = None,
    timeout_s: float = 600.0,
) -> dict[str, Any]:
    """Run ``notebook`` (``.ipynb`` text or dict) on CPython with ``files`` (or every
    file in ``data_dir``) as its inputs and compare its outputs with the stored ones.

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
        runs = execute_cells(sources, work, timeout_s=timeout_s)
        differences: list[dict[str, Any]] = []
        outputs = outputs_matched = matched = compared_cells = 0
        for number, (cell, run) in enumerate(zip(code_cells, runs, strict=True)):
            setup = bool(cell.get("metadata", {}).get("reckon", {}).get("setup"))
            same, found = compare_cell(cell, run, workdir=str(work))
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


def execute_cells(sources: list[str], workdir: Path, *, timeout_s: float) -> list[dict[str, Any]]:
    """Run ``sources`` in order in one namespace, in a CPython process started in
    ``workdir``; returns one run result (PROTOCOL.md section 1) per cell."""
    (workdir / "cells.json").write_text(json.dumps(sources), encoding="utf-8")
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds reckon/
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    env["MPLBACKEND"] = "Agg"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reckon.client._reproduce", str(workdir)],
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
    runs_file = workdir / _RUNS_FILE
    if done.returncode != 0 or not runs_file.is_file():
        raise SessionError(f"the CPython run of the notebook crashed: {done.stderr[-2000:]}")
    runs: list[dict[str, Any]] = json.loads(runs_file.read_text(encoding="utf-8"))
    return runs


def _main(workdir: str) -> None:
    """In the child process: run the cells, write their results (figures without bytes)."""
    from reckon.kernel import Session

    os.chdir(workdir)
    sources = json.loads(Path("cells.json").read_text(encoding="utf-8"))
    session = Session(data_dir="data", output_dir="output")
    session.namespace = {"__name__": "__main__"}  # as a fresh Jupyter kernel: nothing pre-loaded
    runs = []
    for source in sources:
        result = asyncio.run(session.run(source))
        for figure in result.get("figures") or []:
            figure["png_chars"] = len(figure.pop("png", "") or "")
        runs.append(result)
    Path(_RUNS_FILE).write_text(json.dumps(runs, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    _main(sys.argv[1])
