"""Every wait in a browser benchmark gets a deadline: a step that hangs names itself.

Two layers: the page's own promise is raced against a timer in the page (so a rejected
or never-settling promise comes back as an error with its reason), and a watchdog thread
here ends the process if Playwright itself never answers (a renderer whose main thread
is stuck runs no timers, and a crashed one may never reply).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["BOUNDED", "PageLog", "watchdog"]

# `(arg) => ...` for page.evaluate: arg is {limit_ms, step}; STEP is the expression to
# await (a function of no arguments). Polls for `window.reckon || window.naiveReady`
# first, since the evaluate lands as soon as the navigation commits.
BOUNDED = """({limit_ms, step}) => new Promise((done, fail) => {
  const up = () => window.reckon || window.naiveReady;
  const timer = setTimeout(() => fail(new Error(
    `${step}: not done after ${limit_ms / 1000} s` +
    (up() ? "" : " (window.reckon / window.naiveReady never appeared)"))), limit_ms);
  const poll = () => {
    if (!up()) return void setTimeout(poll, 5);
    Promise.resolve().then(STEP).then(
      (value) => { clearTimeout(timer); done(value); },
      (error) => { clearTimeout(timer); fail(new Error(`${step}: ${error?.stack || error}`)); });
  };
  poll();
})"""


class PageLog:
    """The last lines a page printed (console, uncaught errors, failed requests, a
    crash), to say why a step failed."""

    def __init__(self, page: Any, *, keep: int = 25) -> None:
        self.lines: deque[str] = deque(maxlen=keep)
        page.on("console", lambda m: self.lines.append(f"console.{m.type}: {m.text[:300]}"))
        page.on("pageerror", lambda e: self.lines.append(f"uncaught: {e}"))
        page.on("crash", lambda _page: self.lines.append("the page's renderer crashed"))
        page.on(
            "requestfailed", lambda r: self.lines.append(f"request failed: {r.url} {r.failure}")
        )
        page.on(
            "response",
            lambda r: r.status >= 400 and self.lines.append(f"HTTP {r.status}: {r.url}"),
        )

    def tail(self) -> str:
        return "\n".join(f"  {line}" for line in self.lines) or "  (the page printed nothing)"


@contextmanager
def watchdog(step: str, seconds: float, log: PageLog | None = None) -> Iterator[None]:
    """Ends the process with a message naming `step` if the block outlives `seconds`:
    the sync Playwright API cannot be interrupted from another thread, and a benchmark
    that waits forever in silence is worse than one that stops and says where."""
    started = time.monotonic()

    def fire() -> None:
        tail = f"\nlast lines from the page:\n{log.tail()}" if log else ""
        print(
            f"\nstep {step!r} hung: no answer from the browser after "
            f"{time.monotonic() - started:.0f} s{tail}",
            file=sys.stderr,
            flush=True,
        )
        os._exit(3)  # the Playwright driver sees its pipe close and ends the browser

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
