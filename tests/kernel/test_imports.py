"""The kernel must import before the sandbox's background packages are installed:
in the browser only the eager set (numpy, pandas, matplotlib, the spreadsheet
readers) is there when the worker first imports reckon.kernel."""

from __future__ import annotations

import subprocess
import sys

from support import PY

BLOCKER = """
import sys
BLOCKED = {"sqlite3", "_sqlite3", "scipy", "sklearn", "pyarrow", "sympy", "seaborn", "pypdf"}

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not installed yet")
        return None

sys.meta_path.insert(0, Blocker())
import reckon.kernel
import reckon.kernel._host
print("imported", sorted(m for m in BLOCKED if m in sys.modules))
"""


def test_the_kernel_imports_with_only_the_eager_packages() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKER],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PY), "PATH": ""},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "imported []"
