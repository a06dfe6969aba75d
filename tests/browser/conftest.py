"""Browser tests: the built site, served on loopback, in Debian's headless Chromium.

The runtime is loaded once per test session (one page); each test gets a fresh
namespace through `reckon.reset()`.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reckon.client._browser import CHROMIUM_ARGS as _PRODUCT_CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RECKON_SITE", ROOT / "dist" / "site"))
TEST_DATA = ROOT / "tests" / "data"  # real uploads from public projects (see its README)
CHROMIUM = os.environ.get("RECKON_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
# One set of Chromium flags for the product's headless sessions and the tests.
CHROMIUM_ARGS = list(_PRODUCT_CHROMIUM_ARGS)

pytestmark = pytest.mark.browser


def an_unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, *, host: str = "127.0.0.1", timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {host}:{port}")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    """A static server that does not print a traceback when a page is closed while it
    still downloads (the sandbox fetches the rest of the stack after "ready")."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="session")
def a_built_site() -> Path:
    if not (SITE / "build-info.json").exists():
        pytest.fail(f"{SITE} is not built: run `python build.py` first (scripts/test does)")
    return SITE


@pytest.fixture(scope="session")
def a_static_server(a_built_site: Path) -> Iterator[str]:
    """The site on a plain static file server, as `python -m http.server` serves it."""
    port = an_unused_port()
    handler = functools.partial(QuietHandler, directory=str(a_built_site))
    server = QuietServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    wait_for_port(port)
    yield f"http://127.0.0.1:{port}"
    server.shutdown()


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


def run(page: Any, code: str, **options: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(
        "([code, options]) => window.reckon.run(code, options)", [code, options]
    )
    return result
