"""The agent worker holds the relay token, so it is held to its own CSP (connect-src
'self', no workers, no frames) wherever the site is served: on a plain static server,
which sends no headers, as much as behind `reckon serve` (SECURITY.md, F8).

The probes run inside the agent worker itself (Playwright evaluates in it), as code
that got there would: each must be refused, and the canary must hear nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import Canary, page_call

pytestmark = pytest.mark.browser

# Each probe, given the canary's URL `u`, resolves to "REACHED ..." or "BLOCKED ...".
# `now` runs a call that throws when refused; `later` waits for a load or an error.
HELPERS = """
const now = (f) => { try { return 'REACHED ' + f(); } catch (e) { return 'BLOCKED ' + e; } };
const later = (start) => new Promise((r) => {
  try { start(() => r('REACHED'), () => r('BLOCKED error')); } catch (e) { r('BLOCKED ' + e); }
  setTimeout(() => r('BLOCKED timeout'), 3000);
});
const fetched = (p) => p.then(() => 'REACHED', (e) => 'BLOCKED ' + e);
"""
PROBES = {
    "fetch": "fetched(fetch(u + '/fetch'))",
    "fetch-no-cors": "fetched(fetch(u + '/no-cors', {mode: 'no-cors'}))",
    "xhr-sync": "now(() => { const x = new XMLHttpRequest(); x.open('GET', u + '/xhr', false);"
    " x.send(); return x.status; })",
    "importScripts": "now(() => importScripts(u + '/script.js'))",
    "websocket": "later((ok, no) => { const w = new WebSocket(u.replace('http', 'ws') + '/ws');"
    " w.onopen = ok; w.onerror = no; })",
    "eventsource": "later((ok, no) => { const s = new EventSource(u + '/es');"
    " s.onopen = ok; s.onerror = () => { s.close(); no(); }; })",
    # Chromium lets a worker start a blob: worker whatever worker-src says; the new
    # worker inherits the policy, so what it may reach is what counts.
    "nested-worker": "new Promise((r) => { const source = `fetch('${u}/nested').then("
    "() => postMessage('REACHED'), (e) => postMessage('BLOCKED ' + e))`;"
    " const w = new Worker(URL.createObjectURL(new Blob([source])));"
    " w.onmessage = (ev) => r(ev.data); w.onerror = () => r('BLOCKED error'); })",
}


def agent_worker(page: Any) -> Any:
    for worker in page.workers:
        if worker.evaluate("self.name") == "reckon-agent":
            return worker
    raise AssertionError(f"no agent worker among {[w.url for w in page.workers]}")


def test_the_agent_worker_reaches_only_its_own_origin(
    a_browser: Any, server: tuple[str, str], canary: Canary
) -> None:
    kind, url = server
    context = a_browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{url}/index.html")
        page_call(
            page,
            "return await withDeadline(window.reckon.agent.ready(), deadlineMs, 'agent')",
            deadline_s=180,
        )
        worker = agent_worker(page)
        # The worker does work: its own origin answers (the relay lives there).
        own = worker.evaluate(
            "fetch(new URL('build-info.json', self.RECKON_BASE || new URL('../', location.href)))"
            ".then((r) => r.status, (e) => String(e))"
        )
        assert own == 200, (kind, own)
        verdicts = {
            name: worker.evaluate(f"(u) => {{ {HELPERS}\n return {probe}; }}", canary.url)
            for name, probe in PROBES.items()
        }
        page.wait_for_timeout(500)  # a nested worker's fetch would be on its way
        reached = {name: v for name, v in verdicts.items() if not v.startswith("BLOCKED")}
        assert reached == {}, (kind, reached)
        assert canary.hits == [], (kind, canary.hits)
        # And the page still answers through the worker after the probes.
        ask = page_call(page, "return await window.reckon.ask('hello')", deadline_s=120)
        assert ask["status"] == "ok", (kind, ask)
    finally:
        context.close()
