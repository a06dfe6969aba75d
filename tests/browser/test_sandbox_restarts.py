"""Timeouts, interrupts and restarts of the sandbox in a real browser: a busy loop or a
sleep ends at its limit with the state kept; a cell that swallows the interrupt ends
with a restart; uploads outlive a restart; an interrupt stops a running cell (soft
where the frame is cross-origin isolated, by a new worker where not).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import (
    a_console,
    call,
    ok,
    page_call,
    run,
    upload_bytes,
)
from .site_kit import a_site_with_its_headers

pytestmark = pytest.mark.browser


# Timeouts, interrupts and restarts ---------------------------------------------------


@pytest.fixture(scope="module")
def an_isolated_page(a_browser: Any, a_built_site: Any) -> Iterator[Any]:
    """A second page, served with the build's headers (COOP/COEP, as `reckon serve`
    does), so the sandbox frame is cross-origin isolated and interrupts are soft."""
    with (
        a_site_with_its_headers(a_built_site) as url,
        a_console(a_browser, url, deadline_s=90) as (page, ready),
    ):
        assert ready["crossOriginIsolated"] is True, ready
        yield page


@pytest.fixture(params=["plain-server", "isolated"])
def either_page(request: pytest.FixtureRequest) -> Any:
    """The session's page (plain static server: hard interrupts) or the isolated one."""
    if request.param == "plain-server":
        return request.getfixturevalue("reckon")
    page = request.getfixturevalue("an_isolated_page")
    call(page, "reset")
    return page


def test_busy_loop_times_out_and_keeps_state(reckon: Any) -> None:
    ok(run(reckon, "before = 'kept'"))
    started = time.monotonic()
    result = run(reckon, "n = 0\nwhile True:\n    n += 1", timeout_ms=1500)
    assert time.monotonic() - started < 4
    assert result["status"] == "timeout", result
    assert result["restarted"] is False
    assert result["error"]["type"] == "KeyboardInterrupt"
    assert "timeoutMs" in result["error"]["message"]
    assert ok(run(reckon, "before, n > 0"))["result"]["text"] == "('kept', True)"


def test_sleep_times_out_and_keeps_state(reckon: Any) -> None:
    ok(run(reckon, "before = 'kept'"))
    started = time.monotonic()
    result = run(reckon, "import time\ntime.sleep(30)", timeout_ms=1500)
    assert time.monotonic() - started < 4
    assert result["status"] == "timeout", result
    assert result["restarted"] is False
    assert ok(run(reckon, "before"))["result"]["text"] == "'kept'"


def test_cell_that_swallows_the_interrupt_is_ended_by_a_restart(either_page: Any) -> None:
    page = either_page
    assert upload_bytes(page, "survives restart.csv", b"a,b\n1,2\n")["status"] == "ok"
    ok(run(page, "lost = 1"))
    swallow = (
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
    )
    started = time.monotonic()
    result = run(page, swallow, timeout_ms=1500, deadline_s=15)
    # 1.5 s limit + 3 s grace, then a new worker (a few seconds to boot).
    assert time.monotonic() - started < 15
    assert result["status"] == "timeout", result
    assert result["restarted"] is True
    # The next run works, with the uploaded file still there, and the variables
    # rebuilt by replaying the successful cells (persistence is on by default).
    after = run(page, "open('/data/survives restart.csv').read()", deadline_s=60)
    assert ok(after)["result"]["text"] == repr("a,b\n1,2\n")
    assert ok(run(page, "lost"))["result"]["text"] == "1"


def test_restart_forgets_variables_and_keeps_uploads(reckon: Any) -> None:
    assert upload_bytes(reckon, "kept over restart.csv", b"x\n1\n2\n")["status"] == "ok"
    ok(run(reckon, "gone = 1"))
    assert call(reckon, "restart", deadline_s=60)["status"] == "ok"
    result = run(reckon, "gone")
    assert result["status"] == "error"
    assert result["error"]["type"] == "NameError"
    assert (
        ok(run(reckon, "read_table('/data/kept over restart.csv').shape"))["result"]["text"]
        == "(2, 1)"
    )


def test_interrupt_stops_a_running_cell(either_page: Any) -> None:
    page = either_page
    assert upload_bytes(page, "kept over interrupt.csv", b"a\n1\n")["status"] == "ok"
    ok(run(page, "before = 'set'"))
    # As the console does it: the Interrupt button does not wait for interrupt(); the
    # next cell starts as soon as the interrupted one has its result.
    body = """
      const [code, next] = arg;
      let started;
      const startedP = new Promise((resolve) => (started = resolve));
      const onStream = (name, text) => { if (text.includes("started")) started(); };
      const running = window.reckon.run(code, { timeoutMs: 60000, onStream });
      await withDeadline(startedP, deadlineMs, "the cell's first print");
      const interrupting = window.reckon.interrupt();
      const result = await withDeadline(running, deadlineMs, "the interrupted run");
      const after = await withDeadline(window.reckon.run(next), deadlineMs, "the next run");
      const interrupt = await withDeadline(interrupting, deadlineMs, "interrupt");
      return { interrupt, result, after };
    """
    code = "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.05)"
    after = "open('/data/kept over interrupt.csv').read()"
    out = page_call(page, body, [code, after], deadline_s=30)
    assert out["interrupt"]["running"] is True, out["interrupt"]
    result = out["result"]
    assert result["status"] == "interrupted", result
    # Soft (KeyboardInterrupt, state kept) only when the frame is cross-origin isolated;
    # otherwise the worker is replaced.
    soft = out["interrupt"]["soft"]
    assert result["restarted"] is (not soft)
    # The next run works, and sees the uploads (re-mounted if the worker was replaced).
    assert ok(out["after"])["result"]["text"] == repr("a\n1\n")
    kept = run(page, "before")
    assert kept["status"] == ("ok" if soft else "error"), kept
    assert call(page, "interrupt") == {"status": "ok", "running": False}
