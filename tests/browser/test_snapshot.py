"""Fast starts (README "Fast starts"): a first visit restores the memory snapshot the
build ships (made under Node.js) and keeps it in the page's Cache Storage; later visits
restore the kept one. A restored sandbox must answer exactly like a cold boot
(`snapshot: false`), keep working after timeouts and restarts, and a damaged or missing
snapshot, shipped or kept, must end in a cold boot that answers the same.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import QuietHandler, QuietServer, an_address_off_loopback

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


@pytest.fixture(scope="module")
def a_server(a_built_site: Path) -> Iterator[str]:
    base, server = serve_site(a_built_site)
    yield base
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


def restores_the_kept_copy(context: Any, base: str, cold: dict[str, Any]) -> None:
    """The next visit restores the snapshot this browser kept and answers as a cold boot."""
    page, outcome = visit(context, base)
    assert outcome == {"status": "restored", "source": "kept"}
    assert results(page) == cold
    page.close()


@pytest.fixture(scope="module")
def cold(a_browser: Any, a_server: str) -> dict[str, Any]:
    """What a cold boot (no snapshot at all) answers: the reference for every restore."""
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_server, snapshot=False)
        assert outcome == {"status": "off"}
        return results(page)
    finally:
        context.close()


@pytest.fixture(scope="module")
def a_warm_context(a_browser: Any, a_server: str, cold: dict[str, Any]) -> Iterator[Any]:
    """A context whose first visit restored the build's snapshot and kept it."""
    context = a_browser.new_context()
    page, outcome = visit(context, a_server)
    assert outcome == {"status": "restored", "source": "build"}, outcome
    assert results(page) == cold
    page.close()
    yield context
    context.close()


def test_cold_results_are_what_the_cells_compute(cold: dict[str, Any]) -> None:
    assert cold["groupby"]["stdout"] == "{'east': 1, 'north': 7, 'south': 5}\n"
    assert cold["linalg"]["stdout"].startswith("10.0 ")
    assert cold["figure"]["figures"][0][2].find("Units per region") >= 0
    assert cold["error"]["status"] == "error"
    assert cold["error"]["error"][0] == "ZeroDivisionError"
    assert cold["sqlite"]["stdout"] == "(42,)\n"


def test_a_first_visit_starts_from_the_build_snapshot_and_counts_its_bytes(
    a_browser: Any, a_server: str, cold: dict[str, Any]
) -> None:
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.add_init_script(
            "window.__progress = []; addEventListener('DOMContentLoaded', () => {"
            " const poll = setInterval(() => { if (!window.reckon) return; clearInterval(poll);"
            " window.reckon.on('progress', (p) => window.__progress.push(p)); }, 1); });"
        )
        page.goto(f"{a_server}/snapshot-test.html")
        call(page, "ready", deadline_s=120)
        reply = page_call(page, "return await window.reckon.sandbox.ready();", deadline_s=60)
        assert reply["snapshot"] == {"restored": True, "error": None}
        marks = reply["marks"]
        assert "packages" not in marks  # nothing was installed or imported at start
        progress = page.evaluate("window.__progress")
        assert progress, "no progress event"
        last = progress[-1]
        # The shipped snapshot is most of what a first visit downloads, and is counted.
        assert last["loaded"] == last["total"] > 150_000_000, last
        assert all(p["loaded"] <= p["total"] for p in progress)
        assert results(page) == cold
    finally:
        context.close()


def test_over_a_network_the_snapshot_comes_gzipped_and_answers_the_same(
    a_browser: Any, a_built_site: Path, cold: dict[str, Any]
) -> None:
    from support import CHROMIUM, CHROMIUM_ARGS

    address = an_address_off_loopback()
    if address is None:
        pytest.skip("this machine has no network interface besides loopback")
    seen: list[str] = []
    base, server = serve_site(a_built_site, host=address, seen=seen)
    # Plain http off loopback is not a secure context (no Cache Storage, no digest):
    # a real site would be https; the flag makes this origin count as one.
    args = [*CHROMIUM_ARGS, f"--unsafely-treat-insecure-origin-as-secure={base}"]
    try:
        browser = a_browser.browser_type.launch(executable_path=CHROMIUM, args=args)
        try:
            page, outcome = visit(browser.new_context(), base)
            assert outcome == {"status": "restored", "source": "build"}, outcome
            assert results(page) == cold
        finally:
            browser.close()
    finally:
        server.shutdown()
    shipped = [p for p in seen if "/pyodide/snapshot-" in p]
    assert sorted(p.rsplit(".", 2)[-2:][-1] for p in shipped) == ["gz", "gz", "json"], shipped


def test_plain_http_off_this_machine_still_restores_the_build_snapshot(
    a_browser: Any, a_built_site: Path, cold: dict[str, Any]
) -> None:
    """No secure context (a laptop's demo opened from another machine over http): no
    Cache Storage to keep it in, but each visit restores the build's snapshot."""
    address = an_address_off_loopback()
    if address is None:
        pytest.skip("this machine has no network interface besides loopback")
    base, server = serve_site(a_built_site, host=address)
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, base)
        assert page.evaluate("window.isSecureContext") is False
        assert (outcome["status"], outcome["source"]) == ("restored", "build"), outcome
        assert "Cache Storage" in outcome["message"]
        assert results(page) == cold
    finally:
        context.close()
        server.shutdown()


def test_a_second_visit_restores_the_kept_snapshot_and_answers_like_a_cold_boot(
    a_warm_context: Any, a_server: str, cold: dict[str, Any]
) -> None:
    restores_the_kept_copy(a_warm_context, a_server, cold)


def test_two_restores_draw_different_random_numbers(a_warm_context: Any, a_server: str) -> None:
    draws = []
    for _ in range(2):
        page, outcome = visit(a_warm_context, a_server)
        assert outcome["status"] == "restored"
        code = "import random, numpy as np\nprint(random.random(), np.random.random())"
        draws.append(run(page, code)["stdout"])
        page.close()
    assert draws[0] != draws[1]


def test_after_a_restore_uploads_timeouts_and_restarts_still_work(
    a_warm_context: Any, a_server: str, cold: dict[str, Any]
) -> None:
    page, outcome = visit(a_warm_context, a_server)
    assert outcome == {"status": "restored", "source": "kept"}
    assert summary(run(page, "x = 41"))["status"] == "ok"
    timed_out = run(page, "while True:\n    pass", timeout_ms=1500, deadline_s=60)
    assert timed_out["status"] == "timeout", timed_out
    assert run(page, "print(x + 1)")["stdout"] == "42\n"  # a soft timeout keeps variables
    assert call(page, "restart", deadline_s=120) == {"status": "ok"}
    after = run(page, "print('x' in globals())")
    assert after["stdout"] == "False\n"
    assert results(page) == cold  # the upload is mounted again after the restart
    # Packages outside the snapshot still install on import (scipy: fetched after ready).
    scipy = run(
        page, "import scipy.stats\nprint(round(scipy.stats.norm.cdf(0), 3))", deadline_s=120
    )
    assert scipy["stdout"] == "0.5\n", scipy
    page.close()


def test_an_indirect_import_right_after_the_start_works_or_says_run_again(
    a_warm_context: Any, a_server: str
) -> None:
    """pandas imports pyarrow itself: no import line tells the sandbox to install it
    first, and right after the start the rest of the stack is not installed yet."""
    page = a_warm_context.new_page()
    page.goto(f"{a_server}/snapshot-test.html")
    call(page, "ready", deadline_s=120)
    # A module nobody ships gets its plain error, not a promise that a re-run helps.
    unknown = run(page, "import nosuchmodule_anywhere", deadline_s=60)
    assert unknown["error"]["type"] == "ModuleNotFoundError", unknown
    assert "run the cell again" not in unknown["error"]["message"]
    code = (
        "import pandas as pd\n"
        "pd.DataFrame({'a': [1, 2]}).to_parquet('/tmp/x.parquet')\n"
        "print(pd.read_parquet('/tmp/x.parquet')['a'].sum())"
    )
    first = run(page, code, deadline_s=120)
    if first["status"] != "ok":
        assert first["error"]["type"] == "ImportError", first
        assert "installed now: run the cell again" in first["error"]["message"]
    again = run(page, code, deadline_s=120)
    assert again["status"] == "ok" and again["stdout"] == "3\n", again
    page.close()


@pytest.mark.parametrize("damage", ["cut", "missing"])
def test_a_damaged_or_missing_build_snapshot_boots_cold_and_answers_the_same(
    a_browser: Any, a_built_site: Path, cold: dict[str, Any], damage: str
) -> None:
    base, server = serve_site(a_built_site, damage)
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, base)
        reply = page_call(page, "return await window.reckon.sandbox.ready();")
        assert reply["snapshot"]["restored"] is False
        # The package files held back for the snapshot were sent when the worker asked.
        assert "packages" in reply["marks"]
        assert outcome["status"] == "saved", outcome  # made in this browser instead
        assert results(page) == cold
        page.close()
        restores_the_kept_copy(context, base, cold)
    finally:
        context.close()
        server.shutdown()


def test_a_damaged_kept_snapshot_falls_back_to_a_cold_boot(
    a_browser: Any, a_server: str, cold: dict[str, Any]
) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_server)
        assert outcome == {"status": "restored", "source": "build"}
        # Cut the end off the kept file image, as an interrupted write would.
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
        # The rejected one is dropped: the next visit starts from the build's again.
        page, outcome = visit(context, a_server)
        assert outcome == {"status": "restored", "source": "build"}
        # A snapshot of another recipe is never used.
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


PYODIDE_FILES = {
    "/pyodide/pyodide.js",
    "/pyodide/pyodide.asm.js",
    "/pyodide/pyodide.asm.wasm",
    "/pyodide/python_stdlib.zip",
    "/pyodide/pyodide-lock.json",
}


def spoil_kept_runtime(page: Any, name: str, how: str) -> None:
    """Replace the kept copy of one of Pyodide's files: "cut" (4 KiB short) or "zeros"
    (its full size, every byte 0)."""
    page_call(
        page,
        """
        const cache = await caches.open("reckon-snapshot");
        let found = 0;
        for (const request of await cache.keys()) {
          if (!request.url.endsWith(`/runtime/${arg.name}`)) continue;
          const bytes = await (await cache.match(request)).arrayBuffer();
          const size = bytes.byteLength;
          const spoiled = arg.how === "cut" ? bytes.slice(0, size - 4096) : new ArrayBuffer(size);
          await cache.put(request, new Response(spoiled));
          found += 1;
        }
        if (found !== 1) throw new Error(`kept copies of ${arg.name}: ${found}`);
        """,
        {"name": name, "how": how},
    )


def test_a_warm_start_takes_pyodide_from_the_kept_copy_and_survives_a_spoiled_one(
    a_browser: Any, a_built_site: Path, cold: dict[str, Any]
) -> None:
    seen: list[str] = []
    base, server = serve_site(a_built_site, seen=seen)
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "build"}
        page.close()
        # Pyodide's own files were kept beside the snapshot: none is fetched again.
        seen.clear()
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "kept"}
        assert not PYODIDE_FILES & set(seen), seen
        assert page.evaluate("window.reckon.sandbox.runtimeKept") is True
        assert results(page) == cold
        # A kept copy of the wrong size is not used: fetched from the site (the kept
        # snapshot still restores), and kept again.
        spoil_kept_runtime(page, "pyodide.asm.js", "cut")
        page.close()
        seen.clear()
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "kept"}
        assert page.evaluate("window.reckon.sandbox.runtimeKept") is False
        assert results(page) == cold
        page.close()
        seen.clear()
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "kept"}
        assert page.evaluate("window.reckon.sandbox.runtimeKept") is True
        assert not PYODIDE_FILES & set(seen), seen
        # One spoiled at its full size cannot start at all: the page starts again from
        # the site's files, cold, answers the same, and keeps a new snapshot.
        spoil_kept_runtime(page, "pyodide.asm.wasm", "zeros")
        page.close()
        page, outcome = visit(context, base)
        assert outcome["status"] == "saved", outcome
        assert results(page) == cold
        page.close()
        restores_the_kept_copy(context, base, cold)
    finally:
        context.close()
        server.shutdown()


def test_a_kept_native_module_that_does_not_compile_means_a_cold_boot(
    a_browser: Any, a_server: str, cold: dict[str, Any]
) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_server)
        assert outcome == {"status": "restored", "source": "build"}
        # Zero one native module inside the kept file image, keeping every size.
        spoiled = page_call(
            page,
            """
            const cache = await caches.open("reckon-snapshot");
            for (const request of await cache.keys()) {
              if (!request.url.endsWith("/fs")) continue;
              const bytes = new Uint8Array(await (await cache.match(request)).arrayBuffer());
              const hlen = new DataView(bytes.buffer).getUint32(0, true);
              const entries = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + hlen)));
              let offset = 4 + hlen;
              for (const [path, size] of entries) {
                if (path.endsWith(".so")) {
                  bytes.fill(0, offset, offset + size);
                  await cache.put(request, new Response(bytes));
                  return path;
                }
                offset += size;
              }
            }
            return null;
            """,
        )
        assert spoiled
        page.close()
        page, outcome = visit(context, a_server)
        assert outcome["status"] == "rejected", outcome
        assert "does not compile" in outcome["message"], outcome
        assert results(page) == cold
        page.close()
    finally:
        context.close()


def test_snapshot_false_boots_cold_and_stores_nothing(a_browser: Any, a_server: str) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_server, snapshot=False)
        assert outcome == {"status": "off"}
        reply = page_call(page, "return await window.reckon.sandbox.ready();")
        assert reply["snapshot"] == {"restored": False, "error": None}
        stored = page_call(page, "return (await caches.keys()).includes('reckon-snapshot');")
        assert stored is False
        page.close()
    finally:
        context.close()
