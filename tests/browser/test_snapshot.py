"""Warm starts (README "Warm starts"): the first visit boots cold and keeps a memory
snapshot in the page's Cache Storage; a second visit in the same browser context
restores it. The restored sandbox must answer exactly like a cold one, keep working
after timeouts and restarts, and a damaged snapshot must fall back to a cold boot.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import QuietHandler, an_unused_port, wait_for_port
from .helpers import call, page_call, run, upload_bytes

pytestmark = pytest.mark.browser

# A page of our own: console.html would also persist the session, which replays cells
# on the second visit and so hides what the snapshot alone does.
TEST_PAGE = b"""<!doctype html><meta charset="utf-8"><title>snapshot test</title>
<script type="module">
import { createReckon } from "./reckon.js";
const snapshot = new URLSearchParams(location.search).get("snapshot") !== "off";
window.reckon = createReckon({ agent: false, persist: false, snapshot });
</script>"""

CSV = b"region,units\nnorth,3\nsouth,5\nnorth,4\neast,1\n"

CELLS = {
    "groupby": "import pandas as pd\n"
    "df = pd.read_csv('/data/sales.csv')\n"
    "print(df.groupby('region')['units'].sum().to_dict())",
    "linalg": "import numpy as np\n"
    "a = np.array([[4.0, 1.0], [2.0, 3.0]])\n"
    "print(np.linalg.det(a).round(9), np.linalg.solve(a, [1.0, 2.0]).round(9).tolist())",
    "figure": "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(4, 3))\n"
    "ax.bar(['a', 'b'], [3, 5]); ax.set_title('Units per region')",
    "error": "def f(x):\n    return 1 / x\nf(0)",
    "sqlite": "import sqlite3\n"
    "c = sqlite3.connect(':memory:')\n"
    "print(c.execute('select 6 * 7').fetchone())",
}


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What must be the same whether the sandbox booted cold or from a snapshot."""
    error = result.get("error") or {}
    return {
        "status": result["status"],
        "stdout": result["stdout"],
        "error": [error.get("type"), error.get("message"), error.get("traceback")],
        "figures": [
            [f["width"], f["height"], f["description"], len(f["png"])] for f in result["figures"]
        ],
    }


class SiteWithTestPage(QuietHandler):
    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/snapshot-test.html":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(TEST_PAGE)))
            self.end_headers()
            self.wfile.write(TEST_PAGE)
            return
        super().do_GET()


@pytest.fixture(scope="module")
def a_server(a_built_site: Path) -> Iterator[str]:
    port = an_unused_port()
    handler = functools.partial(SiteWithTestPage, directory=str(a_built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    wait_for_port(port)
    yield f"http://127.0.0.1:{port}"
    server.shutdown()


def visit(context: Any, base: str, *, snapshot: bool = True) -> tuple[Any, dict[str, Any]]:
    """Open the page, wait until ready and until its snapshot work is done."""
    page = context.new_page()
    page.goto(f"{base}/snapshot-test.html" + ("" if snapshot else "?snapshot=off"))
    call(page, "ready", deadline_s=120)
    outcome = page_call(page, "return await window.reckon.sandbox.snapshotDone;", deadline_s=180)
    return page, outcome


def results(page: Any) -> dict[str, Any]:
    upload_bytes(page, "sales.csv", CSV)
    return {name: summary(run(page, code)) for name, code in CELLS.items()}


@pytest.fixture(scope="module")
def a_warm_context(a_browser: Any, a_server: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A context whose first visit made the snapshot; yields it and the cold results."""
    context = a_browser.new_context()
    page, outcome = visit(context, a_server)
    assert outcome["status"] == "saved", outcome
    cold = results(page)
    page.close()
    yield context, cold
    context.close()


def test_cold_results_are_what_the_cells_compute(
    a_warm_context: tuple[Any, dict[str, Any]],
) -> None:
    _context, cold = a_warm_context
    assert cold["groupby"]["stdout"] == "{'east': 1, 'north': 7, 'south': 5}\n"
    assert cold["linalg"]["stdout"].startswith("10.0 ")
    assert cold["figure"]["figures"][0][2].find("Units per region") >= 0
    assert cold["error"]["status"] == "error"
    assert cold["error"]["error"][0] == "ZeroDivisionError"
    assert cold["sqlite"]["stdout"] == "(42,)\n"


def test_a_second_visit_restores_and_answers_like_a_cold_boot(
    a_warm_context: tuple[Any, dict[str, Any]], a_server: str
) -> None:
    context, cold = a_warm_context
    page, outcome = visit(context, a_server)
    assert outcome == {"status": "restored"}
    assert results(page) == cold
    page.close()


def test_two_restores_draw_different_random_numbers(
    a_warm_context: tuple[Any, dict[str, Any]], a_server: str
) -> None:
    context, _cold = a_warm_context
    draws = []
    for _ in range(2):
        page, outcome = visit(context, a_server)
        assert outcome == {"status": "restored"}
        code = "import random, numpy as np\nprint(random.random(), np.random.random())"
        draws.append(run(page, code)["stdout"])
        page.close()
    assert draws[0] != draws[1]


def test_after_a_restore_uploads_timeouts_and_restarts_still_work(
    a_warm_context: tuple[Any, dict[str, Any]], a_server: str
) -> None:
    context, cold = a_warm_context
    page, outcome = visit(context, a_server)
    assert outcome == {"status": "restored"}
    assert summary(run(page, "x = 41"))["status"] == "ok"
    timed_out = run(page, "while True:\n    pass", timeout_ms=1500, deadline_s=60)
    assert timed_out["status"] == "timeout", timed_out
    assert run(page, "print(x + 1)")["stdout"] == "42\n"  # a soft timeout keeps variables
    assert call(page, "restart", deadline_s=120) == {"status": "ok"}
    after = run(page, "print('x' in globals())")
    assert after["stdout"] == "False\n"
    assert results(page) == cold  # the upload is mounted again after the restart
    page.close()


def test_a_damaged_snapshot_falls_back_to_a_cold_boot(
    a_browser: Any, a_server: str, a_warm_context: tuple[Any, dict[str, Any]]
) -> None:
    _context, cold = a_warm_context
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_server)
        assert outcome["status"] == "saved"
        # Cut the end off the file image, as an interrupted write would.
        page_call(
            page,
            """
            const cache = await caches.open("reckon-snapshot");
            for (const request of await cache.keys()) {
              if (!request.url.endsWith("/fs")) continue;
              const bytes = await (await cache.match(request)).arrayBuffer();
              await cache.put(request, new Response(bytes.slice(0, bytes.byteLength - 4096)));
            }
            """,
        )
        page.close()
        page, outcome = visit(context, a_server)
        assert outcome["status"] == "rejected", outcome
        assert results(page) == cold
        page.close()
        # A snapshot of another build (another recipe) is never used.
        page, outcome = visit(context, a_server)
        page_call(
            page,
            """
            const cache = await caches.open("reckon-snapshot");
            for (const request of await cache.keys()) {
              if (!request.url.endsWith("/meta")) continue;
              const meta = await (await cache.match(request)).json();
              meta.recipe = -1;
              await cache.put(request, new Response(JSON.stringify(meta)));
            }
            """,
        )
        page.close()
        page, outcome = visit(context, a_server)
        assert outcome["status"] == "rejected", outcome
        assert "recipe" in outcome["message"]
        assert results(page) == cold
        page.close()
    finally:
        context.close()


def test_snapshot_false_boots_cold_and_stores_nothing(a_browser: Any, a_server: str) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_server, snapshot=False)
        assert outcome == {"status": "off"}
        stored = page_call(page, "return (await caches.keys()).includes('reckon-snapshot');")
        assert stored is False
        page.close()
    finally:
        context.close()
