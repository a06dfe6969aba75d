"""What the schema-privacy tests of this layer share: the real kernel behind an executor
that also answers ``scan`` as the page does (a fresh kernel with only the uploads),
the people they upload, and what a request body holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from reckon.kernel import Kernel
from support import ScriptedModel

from .helpers import KernelExecutor

# The values the tests look for in what was sent; none may be there.
NAMES = ["Alice Zimmermann", "Bob Quist", "Cornelius Ashdown", "Dmitri Volkov"]
SECRETS = [*NAMES, "Vladivostok", "555-01-2345", "73412.5", "88123.75"]


class FreshScanExecutor(KernelExecutor):
    """The real kernel; ``scan`` runs in a new kernel that sees the uploads alone, as
    the page runs it in a fresh worker with only the person's files mounted (``upload``
    puts a file there; what a cell writes under the data folder is not one, and is
    set aside while the scan runs)."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.uploads: list[Path] = []
        self.aside = tmp_path / "aside"
        self.scans = 0

    def upload(self, name: str, data: bytes | str) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        self.uploads.append(path)
        return str(path)

    async def scan(self, code: str) -> dict[str, Any]:
        self.scans += 1
        others = [p for p in self.data_dir.iterdir() if p not in self.uploads]
        self.aside.mkdir(exist_ok=True)
        for path in others:
            shutil.move(path, self.aside / path.name)
        try:
            fresh = Kernel(data_dir=str(self.data_dir), output_dir=str(self.aside / "out"),
                           output_limit=9_000_000)  # fmt: skip
            # The page mounts the uploads under /data; here they are in the data folder.
            return await fresh.run(code.replace("'/data'", repr(str(self.data_dir))))
        finally:
            for path in others:
                shutil.move(self.aside / path.name, path)


def sent(model: ScriptedModel) -> str:
    """Every request the model was sent, as one text (each message's every field)."""
    return json.dumps([r.messages for r in model.requests], ensure_ascii=False)


def leaked(model: ScriptedModel, values: list[str] = SECRETS) -> list[str]:
    text = sent(model)
    return [value for value in values if value in text]
