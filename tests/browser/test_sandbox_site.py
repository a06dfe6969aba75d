"""The sandbox on a site of its own (`reckon serve --sandbox-origin auto`), attacked
through the real JS API in headless Chromium: what a cell stores there is gone at the
next boot, no service worker, no network, the page's origin and token out of reach,
and a heap bomb that kills the sandbox's renderer leaves the page running.

The browser here has a profile of its own on disk (as a person's Chromium does):
Playwright's default contexts are incognito-like and deny a third-party frame all
storage, which would make the storage tests pass without testing anything. The
relay's side (headers, 404s, the mode header) is tests/server/test_sandbox_site.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import CHROMIUM, CHROMIUM_ARGS, SITE, ServeProcess, reckon_serve, serve_folder

from .attack_kit import PRELUDE, SENTINEL, Attack, attack_fails_cleanly, fill
from .helpers import Canary, call, page_call, run
from .test_attacks_contexts import PAGE_ATTACKS
from .test_attacks_network import NETWORK_ATTACKS
from .test_widget_hosts import TWO_WIDGETS
from .widget_kit import wait_ready, widget_call

pytestmark = pytest.mark.browser

# The storage attacks are the point of test_what_a_cell_stores_is_gone_at_the_next_boot:
# on a site of its own a cell may write storage; what it may not do is keep it.
PAGE_WALLS = ("parent-top-opener", "document-create-iframe", "document-cookie")
PAGE_WALLS += ("sessionStorage-token", "serviceWorker-register", "relay-token-hunt")
ATTACKS = {
    **{k: a for k, a in NETWORK_ATTACKS.items() if not a.lean and "duckdb" not in k},
    **{k: PAGE_ATTACKS[k] for k in PAGE_WALLS},
}

WRITE_EVERYWHERE = """
import asyncio, js
from pyodide.ffi import to_js
async def done(req):
    fut = asyncio.get_event_loop().create_future()
    req.onsuccess = lambda e: fut.set_result(req.result)
    req.onerror = lambda e: fut.set_exception(RuntimeError(str(req.error)))
    req.onupgradeneeded = lambda e: req.result.createObjectStore("kept")
    return await fut
db = await done(js.indexedDB.open("left-by-a-cell", 1))
tx = db.transaction("kept", "readwrite")
tx.objectStore("kept").put("secret", "k")
db.close()
cache = await js.caches.open("left-by-a-cell")
await cache.put(str(js.self.origin) + "/kept", js.Response.new("secret"))
root = await js.navigator.storage.getDirectory()
create = to_js({"create": True}, dict_converter=js.Object.fromEntries)
await root.getFileHandle("left-by-a-cell.txt", create)
"""
WHAT_IS_THERE = """
import js
dbs = [d.name for d in (await js.indexedDB.databases())]
keys = list(await js.caches.keys())
root = await js.navigator.storage.getDirectory()
files = [name async for name in root.keys()]
print(sorted(dbs), sorted(keys), sorted(files))
"""
LEFT = "['left-by-a-cell'] ['left-by-a-cell'] ['left-by-a-cell.txt']"
EMPTY = "[] [] []"

# Arrays grown by `push`: the worker's memory ceiling cannot count them, so the
# sandbox's renderer dies at V8's heap limit (SECURITY.md M3).
HEAP_BOMB = (
    "import js\njs.eval('(() => { const all = []; for (;;) { const a = [];"
    " for (let i = 0; i < 1e6; i++) a.push(i + 0.5); all.push(a); } })()')"
)


@pytest.fixture(scope="module")
def a_sandbox_site_relay() -> Iterator[ServeProcess]:
    if not (SITE / "build-info.json").exists():
        pytest.fail(f"{SITE} is not built: run `python build.py` first")
    with reckon_serve("--sandbox-origin", "auto") as served:
        yield served


@pytest.fixture(scope="module")
def a_profile_browser(a_browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    profile: Path = tmp_path_factory.mktemp("profile")
    # Third-party storage allowed, as in a person's browser by default (this Chromium
    # denies it to a headless profile's frames, which would prove nothing here).
    (profile / "Default").mkdir()
    prefs = {"profile": {"cookie_controls_mode": 0, "block_third_party_cookies": False}}
    (profile / "Default" / "Preferences").write_text(json.dumps(prefs))
    # On the session's Playwright: a second sync_playwright() in one process fails once
    # another browser test has started the first.
    context = a_browser.browser_type.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
    )
    yield context
    context.close()


def open_console(context: Any, url: str) -> tuple[Any, dict[str, Any]]:
    page = context.new_page()
    page.goto(f"{url}/console.html")
    ready = page_call(
        page,
        "return await withDeadline(window.reckon.ready(), deadlineMs, 'ready')",
        deadline_s=180,
    )
    return page, ready


@pytest.fixture(scope="module")
def a_site_page(a_profile_browser: Any, a_sandbox_site_relay: ServeProcess) -> Iterator[Any]:
    page, ready = open_console(a_profile_browser, a_sandbox_site_relay.url)
    assert ready["crossOriginIsolated"] is True, ready
    assert run(page, "1", deadline_s=180)["status"] == "ok"
    page_call(
        page, "sessionStorage.setItem('reckon-token', arg); window.relayToken = arg;", SENTINEL
    )
    yield page
    page.close()


@pytest.fixture
def site_sandbox(a_site_page: Any, canary: Canary) -> Any:
    try:
        call(a_site_page, "reset", deadline_s=30)
    except Exception:
        call(a_site_page, "restart", deadline_s=120)
    canary.hits.clear()
    return a_site_page


def test_the_sandbox_runs_on_a_site_of_its_own(
    site_sandbox: Any, a_sandbox_site_relay: ServeProcess
) -> None:
    frame = site_sandbox.evaluate(
        "() => { const f = document.querySelector('iframe[title=\"Reckon sandbox\"]');"
        " return { src: f.src, sandbox: f.getAttribute('sandbox') }; }"
    )
    origin = run(site_sandbox, "import js\nstr(js.self.origin)")["result"]["text"]
    site = f"http://sandbox.localhost:{a_sandbox_site_relay.port}"
    assert frame == {"src": f"{site}/sandbox.html", "sandbox": None}
    assert origin == repr(site)


def test_a_widget_on_another_site_keeps_the_opaque_frame(
    a_profile_browser: Any, tmp_path: Path
) -> None:
    """The relay's mode header is not exposed to another origin: a widget there frames
    the sandbox as before (opaque), and it runs."""
    with (
        serve_folder(tmp_path) as host,
        reckon_serve("--sandbox-origin", "auto", "--allow-origin", host) as served,
    ):
        page_html = TWO_WIDGETS.format(site=served.url)
        (tmp_path / "one.html").write_text(page_html.split('<reckon-chat id="two"')[0])
        page = a_profile_browser.new_page()
        try:
            page.goto(f"{host}/one.html")
            wait_ready(page, "one")
            ran = widget_call(page, "one", "return await chat.reckon.run('1+1');")
            cdp = a_profile_browser.new_cdp_session(page)
            targets = cdp.send("Target.getTargets")["targetInfos"]
            cdp.detach()
        finally:
            page.close()
    frames = [t["url"] for t in targets if t["type"] == "iframe"]
    assert ran["result"]["text"] == "2", ran
    assert f"{served.url}/sandbox.html" in frames, frames
    # (The browser's other pages, of other relays, are listed too.)
    assert not [url for url in frames if f"sandbox.localhost:{served.port}" in url], frames


def test_what_a_cell_stores_is_gone_at_the_next_boot(
    site_sandbox: Any, a_profile_browser: Any, a_sandbox_site_relay: ServeProcess
) -> None:
    def there(page: Any) -> str:
        result = run(page, WHAT_IS_THERE, deadline_s=60)
        assert result["status"] == "ok", result
        return str(result["stdout"]).strip()

    written = run(site_sandbox, WRITE_EVERYWHERE, deadline_s=60)
    assert written["status"] == "ok", written
    assert there(site_sandbox) == LEFT  # the writes happened: the test can fail
    call(site_sandbox, "restart", deadline_s=120)
    assert there(site_sandbox) == EMPTY

    # Left again, then a new page in the same browser: a new frame, a new boot.
    assert run(site_sandbox, WRITE_EVERYWHERE, deadline_s=60)["status"] == "ok"
    assert there(site_sandbox) == LEFT
    other, _ = open_console(a_profile_browser, a_sandbox_site_relay.url)
    try:
        assert there(other) == EMPTY
    finally:
        other.close()


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_attack_fails_cleanly_on_the_sandbox_site(
    site_sandbox: Any, canary: Canary, a_sandbox_site_relay: ServeProcess, attack: Attack
) -> None:
    attack_fails_cleanly(site_sandbox, canary, a_sandbox_site_relay.url, attack)


def test_a_cell_cannot_register_a_service_worker_anywhere(
    site_sandbox: Any, canary: Canary, a_sandbox_site_relay: ServeProcess
) -> None:
    """Not from the worker (no `navigator.serviceWorker` there), not by a worker script
    on the sandbox site (worker-src blob: only), and none is left registered."""
    code = fill(
        PRELUDE
        + "print('worker:', getattr(js.navigator, 'serviceWorker', None))\n"
        + "print(await settle_call(lambda: js.fetch('SITE/sandbox.html')))\n",
        canary,
        a_sandbox_site_relay.url,
    )
    result = run(site_sandbox, code)
    assert result["status"] == "ok", result
    assert "worker: None" in result["stdout"], result["stdout"]
    assert "REACHED" not in result["stdout"], result["stdout"]
    regs = site_sandbox.evaluate(
        "async () => (await navigator.serviceWorker.getRegistrations()).length"
    )
    assert regs == 0


def test_a_heap_bomb_ends_only_the_sandbox(
    a_profile_browser: Any, a_sandbox_site_relay: ServeProcess, canary: Canary
) -> None:
    """Driven over a CDP session of its own: Playwright takes the crash of any frame's
    renderer for the page's and stops driving the page, which lives on. (The opaque
    frame passes this too in this Chromium: it isolates sandboxed frames in a process
    of their own; see SECURITY.md M3.)"""
    page, _ = open_console(a_profile_browser, a_sandbox_site_relay.url)
    cdp = a_profile_browser.new_cdp_session(page)

    def evaluate(expression: str) -> Any:
        reply = cdp.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        assert "exceptionDetails" not in reply, reply
        return reply["result"].get("value")

    started = time.monotonic()
    evaluate(
        "window.bomb = null; window.reckon.run(" + json.dumps(HEAP_BOMB) + ", {timeoutMs: 120000})"
        ".then((r) => { window.bomb = r; }); true"
    )
    result = None
    while result is None and time.monotonic() - started < 240:
        time.sleep(1)
        # The page answers at once all along: its renderer is not the one dying.
        asked = time.monotonic()
        assert evaluate("document.title") and time.monotonic() - asked < 5
        result = evaluate("window.bomb")
    took = time.monotonic() - started
    assert result is not None, "the bomb's run never ended"
    assert result["status"] == "error", {k: result.get(k) for k in ("status", "error")}
    after = evaluate("window.reckon.run('1+1').then((r) => r.result && r.result.text)")
    assert after == "2"
    assert canary.hits == []
    print(f"heap bomb ended in {took:.1f} s: {result['error']}")
    cdp.detach()
    page.close()


def test_a_sandbox_site_that_does_not_answer_is_a_clear_error(a_profile_browser: Any) -> None:
    """A configured origin this browser cannot reach (`.invalid` never resolves): ready()
    fails naming it and what to check, instead of waiting for ever."""
    with reckon_serve("--sandbox-origin", "http://sandbox.invalid") as served:
        page = a_profile_browser.new_page()
        try:
            page.goto(f"{served.url}/console.html")
            started = time.monotonic()
            wait = "await withDeadline(window.reckon.ready(), deadlineMs, 'ready'); return null;"
            message = page_call(
                page, f"try {{ {wait} }} catch (err) {{ return String(err.message || err); }}",
                deadline_s=90,
            )  # fmt: skip
            took = time.monotonic() - started
        finally:
            page.close()
    assert message is not None and "sandbox site http://sandbox.invalid" in message, message
    assert "did not answer" in message and took < 60, (message, took)
