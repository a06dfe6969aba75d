"""The built site on loopback with the headers its build wrote (`_headers.json`), as
`reckon serve` sends them: COOP/COEP included, so its pages are cross-origin isolated.
"""

from __future__ import annotations

import functools
import http.server
import json
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, ClassVar

from support import QuietServer, serving


class _HeadersHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site with the headers of its `_headers.json`, as `reckon serve` does:
    every matching rule applies in order, later ones win (COOP/COEP included)."""

    rules: ClassVar[list[tuple[str, dict[str, str]]]] = []

    def end_headers(self) -> None:
        relative = self.path.split("?", 1)[0].split("#", 1)[0].lstrip("/") or "index.html"
        merged: dict[str, str] = {}
        for pattern, headers in self.rules:
            if fnmatchcase(relative, pattern):
                merged.update(headers)
        for name, value in merged.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def a_site_with_its_headers(site: Path) -> Iterator[str]:
    """The built site on 127.0.0.1 with the build's headers; yields its base URL."""
    rules = [(r["pattern"], r["headers"]) for r in json.loads((site / "_headers.json").read_text())]
    handler_class = type("Handler", (_HeadersHandler,), {"rules": rules})
    handler = functools.partial(handler_class, directory=str(site))
    with serving(QuietServer(("127.0.0.1", 0), handler)) as url:
        yield url
