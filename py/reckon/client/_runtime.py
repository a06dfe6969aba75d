"""What headless sessions run on: a relay and a headless Chromium (``Runtime``), and
the one way a session calls its page (``call_page``).

Several sessions share one runtime (``Session.on``), each in its own browser
context; a ``Session`` made on its own starts a runtime and closes it with itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reckon._exceptions import SessionError
from reckon.client._browser import HeadlessChromium, find_chromium
from reckon.client._thread_relay import ThreadRelay

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["_PRELUDE", "Runtime", "call_page"]


# Page-side helpers: a deadline for every call (a hung page fails the call with
# a message instead of hanging Python) and base64 for bytes, which JSON lacks.
_PRELUDE = """
const withDeadline = (promise, ms, what) => {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
};
const fromB64 = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const toB64 = (bytes) => {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
};
"""


class Runtime:
    """A relay and a headless Chromium, shared by the sessions opened on it."""

    def __init__(
        self,
        site: str | os.PathLike[str] = "dist/site",
        *,
        upstream: str | None = None,
        model: str | None = None,
        key_env: str | None = None,
        chromium: str | os.PathLike[str] | None = None,
        tools: str = "auto",
        context_window: int | None = None,
    ) -> None:
        site_dir = Path(site).resolve()
        if not (site_dir / "build-info.json").is_file():
            raise SessionError(
                f"the site at {site_dir} is not built: in the checkout, `scripts/run` builds "
                "it (or `.venv/bin/python build.py`, which writes dist/site), or pass "
                "site=PATH to a built site"
            )
        executable = find_chromium(chromium)
        self.relay = ThreadRelay(
            site_dir,
            upstream=upstream,
            model=model,
            key_env=key_env,
            tools=tools,
            context_window=context_window,
        )
        self.url = self.relay.start()
        try:
            self.chromium = HeadlessChromium(executable)
        except BaseException:
            self.relay.close()
            raise

    def close(self) -> None:
        try:
            self.chromium.close()
        finally:
            self.relay.close()


def call_page(runtime: Runtime, page: Page, body: str, arg: Any, deadline_s: float) -> Any:
    """Run ``body`` (statements of an async function of ``arg``, with the prelude's
    helpers in scope and ``deadlineMs`` set) in ``page``; what it returns, or
    ``SessionError`` with the page's message."""
    from playwright.sync_api import Error as PlaywrightError

    script = f"async ([arg, deadlineMs]) => {{ {_PRELUDE}\n{body} }}"
    try:
        return runtime.chromium.call(
            lambda: page.evaluate(script, [arg, int(deadline_s * 1000)]),
            timeout_s=deadline_s + 15,
        )
    except PlaywrightError as exc:
        # Keep the page's message, not Playwright's JS stack.
        message = str(exc.message).split("\n    at ", 1)[0].strip()
        raise SessionError(
            message.removeprefix("Page.evaluate: ").removeprefix("Error: ")
        ) from None
