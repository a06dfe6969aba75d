"""Headless Chromium driven by Playwright's sync API, confined to one thread.

Playwright's sync API refuses to start in a thread where an asyncio loop is
running (Jupyter, an async app, a test session that already drives a browser),
and its objects must stay in the thread that made them. So every call goes
through one dedicated thread, whatever thread the caller is in.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from reckon._exceptions import SessionError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright

__all__ = ["CHROMIUM_ARGS", "HeadlessChromium", "find_chromium"]

T = TypeVar("T")

# Headless Chromium opens every page in a window of its own, and each window starts
# its location bar's pop-ups (WebUI pages, each a renderer: about 0.4 s of CPU on a
# 2-core machine while our page starts), though nothing can ever show them here.
_NO_BROWSER_UI = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
# Chromium keeps only the last --disable-features, and Playwright passes its own list
# before ours: ours repeats it (Playwright 1.65's chromiumSwitches.ts). With another
# Playwright some of its choices may be lost; tests/browser/test_client.py checks it.
_PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
)

# Also used by the browser tests: no OS sandbox (containers), no GPU, and none of
# Chromium's own background traffic (the machines here have no internet).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-features=" + ",".join(_PLAYWRIGHT_DISABLED_FEATURES + _NO_BROWSER_UI),
]


def find_chromium(path: str | os.PathLike[str] | None = None) -> Path:
    """``path``, else ``$RECKON_CHROMIUM``, else ``chromium`` on PATH, else /usr/bin/chromium."""
    chosen = path or os.environ.get("RECKON_CHROMIUM") or shutil.which("chromium")
    found = Path(chosen or "/usr/bin/chromium")
    if not found.is_file():
        raise SessionError(
            f"Chromium not found at {found}: install Debian's (`sudo apt-get install chromium`; "
            "the checkout's scripts/test does), or name one with $RECKON_CHROMIUM, "
            "chromium='/path/to/chromium' or `reckon eval --chromium PATH`"
        )
    return found


class HeadlessChromium:
    """One Chromium process; pages live in fresh contexts made by ``new_page``."""

    def __init__(self, executable: Path) -> None:
        try:
            import playwright.sync_api  # noqa: F401  (fail early, with a clear message)
        except ImportError:
            raise SessionError(
                "the headless API needs Playwright: in the checkout, `scripts/run` installs it "
                "into .venv with the CPython data stack that reproduce_notebook runs "
                "(requirements-eval.txt), or `.venv/bin/pip install -e '.[headless]'` adds "
                "Playwright alone"
            ) from None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reckon-chromium")
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        try:
            self.call(lambda: self._launch(executable), timeout_s=60)
        except BaseException:
            self.close()
            raise

    def _launch(self, executable: Path) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=str(executable), args=CHROMIUM_ARGS
        )

    def call(self, fn: Callable[[], T], *, timeout_s: float | None = None) -> T:
        """Run ``fn`` in the browser's thread and return its result (or raise its error)."""
        future = self._thread.submit(fn)
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            raise SessionError(f"the browser did not answer within {timeout_s:.0f} s") from None

    def new_page(self, url: str) -> tuple[BrowserContext, Page]:
        """A page at ``url`` in a fresh context: its own storage, workers and sandbox."""

        def open_page() -> tuple[BrowserContext, Page]:
            assert self._browser is not None
            context = self._browser.new_context(accept_downloads=True)
            page = context.new_page()
            page.goto(url)
            return context, page

        return self.call(open_page, timeout_s=120)

    def close_context(self, context: BrowserContext) -> None:
        self.call(context.close, timeout_s=30)

    def close(self) -> None:
        def stop() -> None:
            if self._browser is not None:
                self._browser.close()
                self._browser = None
            if self._playwright is not None:
                self._playwright.stop()
                self._playwright = None

        try:
            self.call(stop, timeout_s=30)
        finally:
            self._thread.shutdown(wait=False)
