"""Fast starts (README "Fast starts"): a first visit restores the memory snapshot the
build ships (made under Node.js) and keeps it in the page's Cache Storage; later visits
restore the kept one. A restored sandbox must answer exactly like a cold boot
(`snapshot: false`, the `cold` fixture) and keep working after timeouts and restarts.
A damaged or missing snapshot: test_snapshot_damage.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import an_address_off_loopback

from .helpers import call, page_call, run
from .snapshot_kit import restores_the_kept_copy, results, serve_site, summary, visit

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def a_warm_context(a_browser: Any, a_snapshot_server: str, cold: dict[str, Any]) -> Iterator[Any]:
    """A context whose first visit restored the build's snapshot and kept it."""
    context = a_browser.new_context()
    page, outcome = visit(context, a_snapshot_server)
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
    a_browser: Any, a_snapshot_server: str, cold: dict[str, Any]
) -> None:
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.add_init_script(
            "window.__progress = []; addEventListener('DOMContentLoaded', () => {"
            " const poll = setInterval(() => { if (!window.reckon) return; clearInterval(poll);"
            " window.reckon.on('progress', (p) => window.__progress.push(p)); }, 1); });"
        )
        page.goto(f"{a_snapshot_server}/snapshot-test.html")
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


def test_a_first_visit_closed_3_s_after_ready_still_makes_the_next_one_warm(
    a_browser: Any, a_snapshot_server: str, cold: dict[str, Any]
) -> None:
    """The build's snapshot is kept at once after the restore, not once the page has
    been idle a while: a short first visit still leaves it."""
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{a_snapshot_server}/snapshot-test.html")
        call(page, "ready", deadline_s=120)
        page.wait_for_timeout(3000)
        page.close()
        restores_the_kept_copy(context, a_snapshot_server, cold)
    finally:
        context.close()


def test_a_second_visit_restores_the_kept_snapshot_and_answers_like_a_cold_boot(
    a_warm_context: Any, a_snapshot_server: str, cold: dict[str, Any]
) -> None:
    restores_the_kept_copy(a_warm_context, a_snapshot_server, cold)


def test_two_restores_draw_different_random_numbers(
    a_warm_context: Any, a_snapshot_server: str
) -> None:
    draws = []
    for _ in range(2):
        page, outcome = visit(a_warm_context, a_snapshot_server)
        assert outcome["status"] == "restored"
        code = "import random, numpy as np\nprint(random.random(), np.random.random())"
        draws.append(run(page, code)["stdout"])
        page.close()
    assert draws[0] != draws[1]


def test_after_a_restore_uploads_timeouts_and_restarts_still_work(
    a_warm_context: Any, a_snapshot_server: str, cold: dict[str, Any]
) -> None:
    page, outcome = visit(a_warm_context, a_snapshot_server)
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


def test_an_indirect_import_right_after_the_start_works_the_first_time(
    a_warm_context: Any, a_snapshot_server: str
) -> None:
    """pandas imports pyarrow itself: no import line tells the sandbox to install it
    first, and right after the start the rest of the stack is not installed yet."""
    page = a_warm_context.new_page()
    page.goto(f"{a_snapshot_server}/snapshot-test.html")
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
    assert first["status"] == "ok" and first["stdout"] == "3\n", first
    page.close()


def test_a_dynamic_import_right_after_the_start_works_the_first_time(
    a_warm_context: Any, a_snapshot_server: str
) -> None:
    """Imports no import line names (importlib, exec'd code, as DS-1000's solutions
    do) of packages still being installed in the background."""
    page = a_warm_context.new_page()
    page.goto(f"{a_snapshot_server}/snapshot-test.html")
    call(page, "ready", deadline_s=120)
    code = (
        "import importlib\n"
        "stats = importlib.import_module('scipy.stats')\n"
        "scope = {}\n"
        "exec('from sklearn.linear_model import LinearRegression as L', scope)\n"
        "fit = scope['L']().fit([[0], [1], [2]], [1, 3, 5])\n"
        "print(round(stats.norm.cdf(0), 3), round(float(fit.coef_[0]), 3))"
    )
    first = run(page, code, deadline_s=180)
    assert first["status"] == "ok" and first["stdout"] == "0.5 2.0\n", first
    page.close()
