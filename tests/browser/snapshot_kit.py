"""What the fast-start tests (test_snapshot*.py) share: a test page of their own, the
site served with it (its shipped snapshot spoiled on request), a visit that waits for
the snapshot's work, and the cells whose answers must not depend on how the sandbox
started.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Any

from support import QuietHandler, QuietServer

from .helpers import call, page_call, run, upload_bytes

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
    """The built site plus the test page; `damage` spoils the shipped snapshot's file
    image: "cut" serves it without its last 4 KiB, "missing" answers 404."""

    damage: str | None = None
    seen: list[str] = []  # noqa: RUF012 (each server gets its own list, see serve_site)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.seen.append(path)
        if path == "/snapshot-test.html":
            self.reply(200, TEST_PAGE, "text/html; charset=utf-8")
            return
        if self.damage and path.startswith("/pyodide/snapshot-") and path.endswith(".fs"):
            if self.damage == "missing":
                self.reply(404, b"not here", "text/plain")
                return
            data = (Path(self.directory) / path.lstrip("/")).read_bytes()
            self.reply(200, data[:-4096], "application/octet-stream")
            return
        super().do_GET()

    def reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve_site(
    site: Path, damage: str | None = None, *, host: str = "127.0.0.1", seen: list[str] | None = None
) -> tuple[str, http.server.ThreadingHTTPServer]:
    extra = {"damage": damage, "seen": [] if seen is None else seen}
    handler_class = type("Handler", (SiteWithTestPage,), extra)
    handler = functools.partial(handler_class, directory=str(site))
    server = QuietServer((host, 0), handler)  # bound here: the port is its own
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://{host}:{server.server_address[1]}", server


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


def restores_the_kept_copy(context: Any, base: str, cold: dict[str, Any]) -> None:
    """The next visit restores the snapshot this browser kept and answers as a cold boot."""
    page, outcome = visit(context, base)
    assert outcome == {"status": "restored", "source": "kept"}
    assert results(page) == cold
    page.close()
