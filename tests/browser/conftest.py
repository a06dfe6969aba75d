"""Browser tests: the built site, served on loopback, in Debian's headless Chromium.

The runtime is loaded once per test session (one page); each test gets a fresh
namespace through `reckon.reset()`. One browser serves the whole session; what
costs is each page that boots a sandbox, so the fixtures shared by several modules
say how long they live:

- the attack battery (test_attacks_*.py) shares one attack page per server for the
  package (`attack_page`), as it did as one module: splitting it cost no new boot;
- the snapshot modules share the cold boot they compare against (`cold`);
- the chat page (`a_chat`), the widget's `reckon serve` (`a_widget_site`) and fresh
  contexts (`a_context`) are per module or per test, as before the split: each of
  these modules drives its own page through a sequence of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SITE,
    ScriptedModel,
    a_model_server,
    reckon_serve,
    serve_folder,
)

from .attack_kit import LEAN_SANDBOX, SENTINEL, lean_call, recover, settle_in
from .helpers import (
    CSP_RECORDER,
    Canary,
    a_canary,
    a_console,
    page_call,
)
from .playlist_kit import Playlist, a_playlist_server, a_relay_of
from .playlist_kit import a_console_page as playlist_console
from .site_kit import a_site_with_its_headers
from .snapshot_kit import results, serve_site, visit

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def a_built_site() -> Path:
    if not (SITE / "build-info.json").exists():
        pytest.fail(f"{SITE} is not built: run `python build.py` first (scripts/test does)")
    return SITE


@pytest.fixture(scope="session")
def a_static_server(a_built_site: Path) -> Iterator[str]:
    """The site on a plain static file server, as `python -m http.server` serves it."""
    with serve_folder(a_built_site) as url:
        yield url


def _served(request: pytest.FixtureRequest, site: Path) -> Iterator[tuple[str, str]]:
    if request.param == "static":
        yield "static", request.getfixturevalue("a_static_server")
    else:
        with a_site_with_its_headers(site) as url:
            yield "headers", url


@pytest.fixture(scope="module", params=["static", "headers"])
def server(request: pytest.FixtureRequest, a_built_site: Path) -> Iterator[tuple[str, str]]:
    """(kind, base URL): the plain static server, or the site with its headers."""
    yield from _served(request, a_built_site)


@pytest.fixture(scope="session")
def a_browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: `apt-get install chromium` (scripts/test does)"
        )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def a_console_page(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    """One page with a booted sandbox, shared by the tests of this session."""
    context = a_browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto(f"{a_static_server}/console.html")
    page.evaluate("() => window.reckon.ready()")
    yield page
    context.close()


@pytest.fixture
def reckon(a_console_page: Any) -> Any:
    """The page, with a fresh Python namespace for this test."""
    a_console_page.evaluate("() => window.reckon.reset()")
    return a_console_page


# --- the canary and the attack battery -----------------------------------------------


@pytest.fixture(scope="package")
def a_running_canary() -> Iterator[Canary]:
    with a_canary() as server:
        yield server


@pytest.fixture
def canary(a_running_canary: Canary) -> Canary:
    """The canary HTTP server, with no request recorded from another test."""
    a_running_canary.hits.clear()
    return a_running_canary


@pytest.fixture(scope="package", params=["static", "headers"])
def attack_server(request: pytest.FixtureRequest, a_built_site: Path) -> Iterator[tuple[str, str]]:
    """`server` for the attack battery: package-scoped, so that its modules share one
    attack page per server (pytest runs them server by server)."""
    yield from _served(request, a_built_site)


@pytest.fixture(scope="package")
def attack_page(a_browser: Any, attack_server: tuple[str, str]) -> Iterator[Any]:
    """One console page per server for the whole battery, with a planted fake token."""
    kind, url = attack_server
    with a_console(a_browser, url) as (page, ready):
        assert ready["crossOriginIsolated"] is (kind == "headers"), ready
        settle_in(page)
        page_call(page, LEAN_SANDBOX, deadline_s=120)
        page_call(
            page,
            "sessionStorage.setItem('reckon-token', arg); window.reckon.agent.token = arg;"
            " window.relayToken = arg;",
            SENTINEL,
        )
        yield page


@pytest.fixture
def sandbox(attack_page: Any, canary: Canary) -> Any:
    """The attack page, both its sandboxes reset (or restarted if they do not answer)."""
    recover(attack_page)
    try:
        lean_call(attack_page, "reset", deadline_s=20)
    except Exception:
        lean_call(attack_page, "restart", deadline_s=60)
    canary.hits.clear()
    return attack_page


# --- fast starts (test_snapshot*.py) ---------------------------------------------------


@pytest.fixture(scope="package")
def a_snapshot_server(a_built_site: Path) -> Iterator[str]:
    """The site plus the snapshot test page (snapshot_kit.py)."""
    base, server = serve_site(a_built_site)
    yield base
    server.shutdown()


@pytest.fixture(scope="package")
def cold(a_browser: Any, a_snapshot_server: str) -> dict[str, Any]:
    """What a cold boot (no snapshot at all) answers: the reference for every restore."""
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_snapshot_server, snapshot=False)
        assert outcome == {"status": "off"}
        return results(page)
    finally:
        context.close()


# --- the chat page (test_chat_page*.py) ------------------------------------------------


@pytest.fixture(scope="module")
def a_chat(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    """The page at 1280x900, ready, recording CSP violations in `window.__csp`; one per
    module, whose tests go on from where the last one left it."""
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=a_static_server)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.add_init_script(CSP_RECORDER)
    page.goto(f"{a_static_server}/index.html")
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    yield page
    context.close()


# --- the widget in host pages (test_widget*.py) -----------------------------------------


@pytest.fixture(scope="module")
def a_scripted_upstream() -> Iterator[tuple[ScriptedModel, str]]:
    model = ScriptedModel()
    with a_model_server(model, models=["scripted"]) as upstream:
        yield model, upstream


@pytest.fixture(scope="module")
def a_host_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("host")


@pytest.fixture(scope="module")
def a_host_server(a_host_folder: Path) -> Iterator[str]:
    """Another origin's page server (its port is another origin than the relay's)."""
    with serve_folder(a_host_folder) as url:
        yield url


@pytest.fixture(scope="module")
def a_widget_site(
    a_scripted_upstream: tuple[ScriptedModel, str], a_host_server: str
) -> Iterator[str]:
    """`reckon serve` with the site, accepting pages of the host server's 127.0.0.1 origin."""
    _, upstream = a_scripted_upstream
    flags = ["--upstream", upstream, "--model", "scripted", "--allow-origin", a_host_server]
    with reckon_serve(*flags, env={"RECKON_UPSTREAM_KEY": "sk-test-secret"}) as served:
        yield served.url


# --- persistence (test_persistence*.py) --------------------------------------------------


@pytest.fixture
def a_context(a_browser: Any) -> Iterator[Any]:
    """A fresh browser context: its own, empty IndexedDB."""
    context = a_browser.new_context()
    yield context
    context.close()


# A scripted model behind `reckon serve`, for the modules that play the model's part
# (playlist_kit): one of each per module, so one module's queue never leaks into another.
@pytest.fixture(scope="module")
def a_playlist() -> Iterator[tuple[Playlist, str]]:
    with a_playlist_server() as pair:
        yield pair


@pytest.fixture(scope="module")
def a_playlist_site(a_playlist: tuple[Playlist, str]) -> Iterator[str]:
    with a_relay_of(a_playlist[1]) as site:
        yield site


@pytest.fixture(scope="module")
def a_page(a_browser: Any, a_playlist_site: str) -> Iterator[Any]:
    """The console page on that site."""
    with playlist_console(a_browser, a_playlist_site) as page:
        yield page
