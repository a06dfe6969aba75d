"""The child process of ``execute_cells``: ``python -m reckon.reproduce WORKDIR``
runs ``WORKDIR/cells.json`` in one fresh namespace with the sandbox's kernel and
writes each cell's run result (figures without their bytes) to ``RUNS_FILE``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from reckon.kernel import Kernel
from reckon.reproduce._reproduce import RUNS_FILE


def main(workdir: str) -> None:
    os.chdir(workdir)
    sources = json.loads(Path("cells.json").read_text(encoding="utf-8"))
    session = Kernel(data_dir="data", output_dir="output")
    session.namespace = {"__name__": "__main__"}  # as a fresh Jupyter kernel: nothing pre-loaded
    runs = []
    for source in sources:
        result = asyncio.run(session.run(source))
        for figure in result.get("figures") or []:
            figure["png_chars"] = len(figure.pop("png", "") or "")
        runs.append(result)
    Path(RUNS_FILE).write_text(json.dumps(runs, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
