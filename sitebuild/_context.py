"""Where a build reads and writes, and what one run of it carries from stage to stage."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ROOT", "Context", "Fetched", "Log", "Paths"]

ROOT = Path(__file__).resolve().parents[1]
Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class Paths:
    """The checkout, the download cache (shared between checkouts by
    RECKON_BUILD_CACHE) and the site being built."""

    root: Path = ROOT
    cache: Path = field(
        default_factory=lambda: Path(
            os.environ.get("RECKON_BUILD_CACHE", ROOT / ".cache" / "build")
        )
    )
    out: Path = ROOT / "dist" / "site"

    @property
    def web(self) -> Path:
        return self.root / "web"

    @property
    def wheels(self) -> Path:
        return self.root / "wheels"


@dataclass(frozen=True)
class Fetched:
    """What the fetch stage leaves for the assemble stage."""

    core: Path  # the extracted npm package: runtime files and the official lock
    packages: Path  # the official package files, each checked against that lock
    scientific: list[str]  # SANDBOX_PACKAGES closed over the lock, dependencies first
    pure: dict[str, Path]  # pure-Python wheel by package name
    duckdb: Path | None = None  # the extracted @duckdb/duckdb-wasm npm package


@dataclass
class Context:
    """One run: its paths and options, its log, and what its stages made."""

    paths: Paths = field(default_factory=Paths)
    source: str = "mirror"  # where Pyodide package files come from: "mirror" | "official"
    log: Log = _quiet
    # What this run had to make or download (the build's last line lists it).
    made: list[str] = field(default_factory=list)
    fetched: Fetched | None = None
    wheel: Path | None = None
