"""A scripted model that plays the replies a test queues, behind `reckon serve`, and the
console page in front of it: what the JS API tests of privacy, limits and control share."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Any

from support import Script, ScriptedModel, Seen, a_model_server, reckon_serve


class Playlist(ScriptedModel):
    """Plays queued replies in order (``("code", src)``, ``("text", answer)``, or
    ``("held", answer)``: the answer once a test sets ``release``), reports usage when
    asked to (``usage``), and records every payload with its size."""

    def __init__(self) -> None:
        super().__init__()
        self.queue: list[tuple[str, str]] = []
        self.usage: dict[str, int] | None = None
        self.release = threading.Event()

    def chat(self, seen: Seen) -> Script | Awaitable[Script]:
        self.requests.append({"payload": seen.json, "bytes": len(json.dumps(seen.json))})
        kind, text = self.queue.pop(0) if self.queue else ("text", "The script ran out.")
        if kind == "code":
            return self.tool_call(text, f"call_{len(self.requests)}")
        if kind == "held":
            return self._held(text)
        return self.text(text)

    async def _held(self, text: str) -> Script:
        # Polled, not awaited: the test sets a thread's event from outside this loop.
        deadline = time.monotonic() + 60
        while not self.release.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        self.release.clear()
        return self.text(text)

    def stream(self, chunks: list[dict[str, Any]]) -> Script:
        if self.usage is not None and self.requests[-1]["payload"].get("stream_options"):
            chunks = [*chunks, {"choices": [], "usage": self.usage}]
        return super().stream(chunks)


@contextmanager
def a_playlist_server() -> Iterator[tuple[Playlist, str]]:
    """A `Playlist` on a loopback model server; yields it and the server's OpenAI URL."""
    model = Playlist()
    with a_model_server(model, models=["scripted"]) as upstream:
        yield model, upstream


@contextmanager
def a_relay_of(upstream: str) -> Iterator[str]:
    """`reckon serve` in front of ``upstream``'s model "scripted"; yields its URL."""
    flags = ["--upstream", upstream, "--model", "scripted"]
    with reckon_serve(*flags, env={"RECKON_UPSTREAM_KEY": "sk-test"}) as served:
        yield served.url


@contextmanager
def a_console_page(browser: Any, site: str) -> Iterator[Any]:
    """``site``'s console page in a new browser context, ready."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{site}/console.html")
        page.evaluate("() => window.reckon.ready()")
        yield page
    finally:
        context.close()
