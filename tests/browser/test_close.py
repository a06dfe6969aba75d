"""`reckon.close()` through the page's JS API: everything ends, later calls say why."""

from __future__ import annotations

import time
from typing import Any

import pytest

from .helpers import call, page_call, run

pytestmark = pytest.mark.browser

FRAMES = "document.querySelectorAll('iframe[title=\"Reckon sandbox\"]').length"


def test_close_ends_the_sandbox_and_the_agent_and_later_calls_say_so(
    a_browser: Any, a_static_server: str
) -> None:
    context = a_browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{a_static_server}/index.html")
        both = "Promise.all([window.reckon.ready(), window.reckon.agent.ready()])"
        page_call(page, f"return await withDeadline({both}, deadlineMs, 'ready')", deadline_s=180)
        assert run(page, "x = 1")["status"] == "ok"
        assert len(page.workers) >= 2 and page.evaluate(FRAMES) == 1

        body = """
          // A cell still running when close() comes ends with the same error.
          const started = new Promise((resolve) => window.reckon.on("stream", resolve));
          const cell = "print('started', flush=True)\\nimport time\\ntime.sleep(30)";
          const running = window.reckon.run(cell);
          await withDeadline(started, deadlineMs, "the cell's first line");
          const closed = window.reckon.close();
          return { closed, running: await withDeadline(running, deadlineMs, "the cut cell") };
        """
        got = page_call(page, body, deadline_s=30)
        assert got["closed"] == {"status": "ok"}
        assert got["running"]["status"] == "error"
        assert got["running"]["error"]["type"] == "SandboxClosed"

        assert page.evaluate(FRAMES) == 0
        deadline = time.monotonic() + 10
        while page.workers and time.monotonic() < deadline:
            page.wait_for_timeout(50)  # Playwright drops a worker once it has ended
        assert page.workers == []

        later = run(page, "1 + 1")
        assert later["status"] == "error" and later["error"]["type"] == "SandboxClosed"
        assert "was closed" in later["error"]["message"]
        answer = call(page, "ask", "what is 2+2")
        assert answer["status"] == "error" and "was closed" in answer["message"]
        ready = "return await window.reckon.ready().then(() => 'ready', (e) => e.message);"
        assert "was closed" in page_call(page, ready)
        assert call(page, "close") == {"status": "ok"}  # twice is fine
    finally:
        context.close()
