"""Where things are, for every test layer: the repository, its data and the built site."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / "py"  # what subprocesses put on PYTHONPATH, so they run this checkout's reckon
TEST_DATA = ROOT / "tests" / "data"  # real uploads from public projects (see its README)
QUESTION_SETS = ROOT / "benchmarks" / "questions"  # the shipped question sets and their files
# The built site the browser tests load (`python build.py` writes it; RECKON_SITE moves it).
SITE = Path(os.environ.get("RECKON_SITE", ROOT / "dist" / "site"))
CHROMIUM = os.environ.get("RECKON_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
