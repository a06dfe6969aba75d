"""What one run may leave behind (SECURITY.md, A1): figures beyond 8 MB are not
accepted, even from a cell that lifts the kernel's own limit; and work a cell leaves
running between runs (a JS timer that never lets go, an asyncio task that spins) is
found within seconds: the worker is replaced, the next cell runs in the new one, and
its result says so (`restarted: true`)."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest

from .helpers import call, ok, run, upload_bytes

pytestmark = pytest.mark.browser

# The kernel's limits lifted, then 25 figures of noise (about 3.5 MB of PNG each).
NOISE_FIGURES = """
import numpy as np, matplotlib.pyplot as plt
import reckon.kernel._figures as figures
figures.MAX_FIGURE_BYTES = 10**12
figures.MAX_FIGURES = 1000
rng = np.random.default_rng(1)
for _ in range(25):
    fig = plt.figure(figsize=(10, 10))
    fig.figimage(rng.integers(0, 255, (1000, 1000, 3), dtype=np.uint8))
"""


def test_a_runs_figures_are_held_to_the_pages_limit(reckon: Any) -> None:
    result = ok(run(reckon, NOISE_FIGURES, deadline_s=180, timeout_ms=150_000))
    sizes = [len(base64.b64decode(f["png"])) for f in result["figures"]]
    assert 1 <= len(sizes) <= 3 and sum(sizes) <= 8 << 20, sizes
    assert "figures not shown: a run shows at most 20 figures and 8 MB" in result["stderr"]
    assert ok(run(reckon, "1+1"))["result"]["text"] == "2"


LEFT_RUNNING = {
    "set-timeout": 'import js\njs.eval("setTimeout(() => { for (;;) {} }, 100); 0")',
    "set-interval": 'import js\njs.eval("setInterval(() => { for (;;) {} }, 200); 0")',
    "asyncio-task": "import asyncio\nasync def spin():\n    await asyncio.sleep(0.2)\n"
    "    while True:\n        pass\nasyncio.ensure_future(spin())",
}


@pytest.mark.parametrize("code", LEFT_RUNNING.values(), ids=LEFT_RUNNING.keys())
def test_work_left_running_between_runs_is_found_within_seconds(reckon: Any, code: str) -> None:
    upload_bytes(reckon, "kept.txt", b"still here")
    ok(run(reckon, "x = 1\n" + code))
    time.sleep(1)  # the work has started: the worker no longer answers anything
    started = time.monotonic()
    after = run(reckon, "open('/data/kept.txt').read()", deadline_s=60)
    took = time.monotonic() - started
    assert after["status"] == "ok" and after["result"]["text"] == "'still here'", after
    assert after["restarted"] is True, after
    assert "busy with work an earlier cell left running" in after["stderr"], after["stderr"]
    assert took < 20, took  # 4 s to notice, a restart, the cell: not the 120 s it took
    # A new interpreter: the variables are gone, as the note says; the next run is quick.
    assert run(reckon, "x")["error"]["type"] == "NameError"
    call(reckon, "deleteFile", "kept.txt")
