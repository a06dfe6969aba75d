"""DuckDB on every core: under `reckon serve` the sandbox frame is cross-origin isolated,
so run_sql takes DuckDB-wasm's build with threads (sitebuild/_duckdb.py, sql.js); on a
plain static server it keeps the single-threaded build. The same upload and the same
queries give the same answers in both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support import reckon_serve

from .helpers import ok, page_call, run, upload_file_object

pytestmark = pytest.mark.browser

# Enough rows that DuckDB splits the scan between its threads (a CSV of about 2 MB).
ROWS = "".join(
    f"{i},{('East', 'West', 'North', 'South')[i % 4]},{(i * 37) % 1000 / 4},{i % 23}\n"
    for i in range(60_000)
)
CSV = ("id,region,price,qty\n" + ROWS).encode()
QUERY = (
    "SELECT region, COUNT(*) AS n, SUM(price) AS total, MAX(qty) AS top FROM threads_sales "
    "WHERE qty >= 10 AND price < 200 GROUP BY region ORDER BY region"
)
CHECK = (
    "from reckon.kernel import _sql\n"
    "engine = _sql._database().engine\n"
    "threads = engine.query(\"SELECT current_setting('threads') AS t\")['t'][0]\n"
    f"frame = run_sql({QUERY!r})\n"
    "print(int(threads))\n"
    "print(frame.to_json(orient='records'))\n"
)


def _answer(page: Any) -> tuple[int, str]:
    reply = upload_file_object(page, "threads sales.csv", CSV)
    assert reply["status"] == "ok", reply
    out = ok(run(page, CHECK, deadline_s=120))["stdout"].strip().splitlines()
    return int(out[0]), out[1]


@pytest.fixture(scope="module")
def a_served_page(a_browser: Any) -> Iterator[Any]:
    """The console page of `reckon serve` (it sends COOP and COEP), its sandbox ready."""
    flags = ["--upstream", "http://127.0.0.1:9/v1", "--model", "unused"]
    with reckon_serve(*flags, env={"RECKON_UPSTREAM_KEY": "sk-test"}) as served:
        context = a_browser.new_context()
        page = context.new_page()
        page.goto(f"{served.url}/console.html")
        page.evaluate("() => window.reckon.ready()")
        yield page
        context.close()


def test_duckdb_runs_on_every_core_under_reckon_serve_and_answers_as_one_thread(
    a_served_page: Any, reckon: Any
) -> None:
    isolated = page_call(a_served_page, "return self.crossOriginIsolated;")
    assert isolated is True
    cores = page_call(a_served_page, "return navigator.hardwareConcurrency;")
    threads, answer = _answer(a_served_page)
    assert threads == min(cores, 8) and threads > 1, (threads, cores)
    # The plain static server: not isolated, so the single-threaded build, same answer.
    single, expected = _answer(reckon)
    assert single == 1
    assert answer == expected
    # A query stopped by its deadline stops every thread, and the session goes on.
    body = "return await withDeadline(window.reckon.run(arg, {timeoutMs: 2000}), deadlineMs, 'run')"
    cell = "run_sql('SELECT SUM(i % 7) AS s FROM range(5000000000) t(i)')"
    stopped = page_call(a_served_page, body, cell, deadline_s=60)
    assert stopped["status"] == "timeout" and stopped["restarted"] is False, stopped
    again = ok(run(a_served_page, f"print(run_sql({QUERY!r}).to_json(orient='records'))"))
    assert again["stdout"].strip() == expected
