"""The child process of ``execute_cells``: ``python -m reckon.reproduce WORKDIR``
runs ``WORKDIR/cells.json`` in one fresh namespace with the sandbox's kernel and
writes each cell's run result (figures without their bytes) to ``RUNS_FILE``.

A cell given the host tool calls it made in the browser (its
``metadata.reckon.tools``) has them replayed (``reckon.kernel.set_replay``): this
process plays the page's part, from the record, for that cell only."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from reckon.kernel import Kernel, ToolError, Tools, set_replay
from reckon.reproduce._reproduce import RUNS_FILE


def main(workdir: str) -> None:
    os.chdir(workdir)
    cells = json.loads(Path("cells.json").read_text(encoding="utf-8"))
    session = Kernel(data_dir="data", output_dir="output")
    session.namespace = {"__name__": "__main__"}  # as a fresh Jupyter kernel: nothing pre-loaded
    if any(cell.get("tools") is not None for cell in cells):
        # The browser's sandbox lends these to every cell; here only a notebook that
        # called host tools needs them, and its calls are answered from the record.
        session.namespace.update(tools=Tools(), ToolError=ToolError)
    runs = []
    for cell in cells:
        set_replay(cell.get("tools"))  # None: a call has no page to go to, and says so
        result = asyncio.run(session.run(cell["source"]))
        for figure in result.get("figures") or []:
            figure["png_chars"] = len(figure.pop("png", "") or "")
        runs.append(result)
    set_replay(None)
    Path(RUNS_FILE).write_text(json.dumps(runs, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
