"""What the relay benchmarks share: a child process that names its port, a text table."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["a_process", "environment", "text_table"]


def environment() -> dict[str, str]:
    """This environment with our `py/` first and no proxy: every call stays on loopback."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "py"), env.get("PYTHONPATH")]))
    return env


@contextmanager
def a_process(argv: list[str], pattern: re.Pattern[str], log: Path) -> Iterator[tuple[int, int]]:
    """Starts `argv`, waits for the line naming its port; yields (pid, port)."""
    with log.open("wb") as errors:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=errors, env=environment(), cwd=log.parent
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        match = pattern.search(line)
        if match is None:
            process.kill()
            raise SystemExit(f"{argv[1:4]} did not start: {line!r}\n{log.read_text()[-2000:]}")
        yield process.pid, int(match.group(1))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def text_table(rows: list[list[str]]) -> str:
    """Rows as aligned columns (the first left, the rest right), a rule under the head."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for number, row in enumerate(rows):
        cells = [
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
