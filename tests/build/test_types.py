"""`tsc --strict` over web/ (issue 33): jsconfig.json turns strict on, so the type check
in the test command (scripts/test runs `tsc -p jsconfig.json`) is the strict one, and it
reports nothing. It was 536 errors when this check began as a ratchet."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TSC = ROOT / "node_modules" / ".bin" / "tsc"
_ERROR = re.compile(r"^(web/[^(]+)\(\d+,\d+\): error TS\d+")


def test_the_type_check_is_strict() -> None:
    options = json.loads((ROOT / "jsconfig.json").read_text())["compilerOptions"]
    assert options["strict"] is True and options["checkJs"] is True


def test_web_has_no_strict_error() -> None:
    assert TSC.exists() or shutil.which("tsc"), "tsc is needed (scripts/test installs it)"
    made = subprocess.run(
        [str(TSC), "-p", "jsconfig.json", "--pretty", "false"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in made.stdout.splitlines() if _ERROR.match(line)]
    assert made.returncode == 0 and not errors, made.stdout[-3000:] + made.stderr[-2000:]
