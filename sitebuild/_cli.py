"""`python build.py`: the options, the stages' run, and the last line that says what
had to be made."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from reckon._exceptions import BuildError

from ._context import Context, Paths
from ._stages import ALL, STAGES, describe, plan

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="build.py",
        description="Assemble Reckon's self-contained static site. Each stage is cached "
        "under .cache/build, so a second build downloads nothing.",
        epilog=describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=Paths().out, help="default: dist/site")
    parser.add_argument(
        "--source",
        choices=["mirror", "official"],
        default="mirror",
        help="where Pyodide package files come from (default: mirror)",
    )
    parser.add_argument("--stage", choices=[*(stage.name for stage in STAGES), ALL], default=ALL)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"[build {time.perf_counter() - start:5.1f}s] {msg}", flush=True)

    ctx = Context(paths=Paths(out=args.out), source=args.source, log=log)
    try:
        for stage in plan(args.stage):
            stage.run(ctx)
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    made = ctx.made
    log(f"done: made {', '.join(made)}" if made else "done: nothing was rebuilt or downloaded")
    return 0
