"""Browser tests: the built site, served on loopback, in Debian's headless Chromium.

The runtime is loaded once per test session (one page); each test gets a fresh
namespace through `reckon.reset()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import CHROMIUM, CHROMIUM_ARGS, SITE, serve_folder

from .helpers import a_site_with_its_headers

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


@pytest.fixture(scope="module", params=["static", "headers"])
def server(request: pytest.FixtureRequest, a_built_site: Path) -> Iterator[tuple[str, str]]:
    """(kind, base URL): the plain static server, or the site with its headers."""
    if request.param == "static":
        yield "static", request.getfixturevalue("a_static_server")
    else:
        with a_site_with_its_headers(a_built_site) as url:
            yield "headers", url


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
