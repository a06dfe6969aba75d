"""Shared helpers for the kernel tests (a module name unique across test folders)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from reckon.kernel import Kernel as Session


class Runner:
    """A session plus the stream events it sent, run synchronously for tests."""

    def __init__(self, tmp_path: Path, **options: Any) -> None:
        self.events: list[tuple[str, str]] = []
        self.output_dir = tmp_path / "output"
        self.session = Session(
            data_dir=str(tmp_path / "data"),
            output_dir=str(self.output_dir),
            on_stream=lambda name, text: self.events.append((name, text)),
            **options,
        )

    def __call__(self, code: str) -> dict[str, Any]:
        # As the sandbox worker does: at once when the cell awaits nothing, else on a loop.
        now = self.session.run_now(code)
        return now if now is not None else asyncio.run(self.session.run(code))

    def notes_after(self, setup: str, cell: str) -> list[str]:
        """The kernel's notes on ``cell``, run after ``setup``; both must run."""
        assert self(setup)["status"] == "ok"
        result = self(cell)
        assert result["status"] == "ok", result["error"]
        notes = result.get("notes", [])
        assert isinstance(notes, list)
        return notes
