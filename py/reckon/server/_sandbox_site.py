"""The sandbox on a site of its own (``reckon serve --sandbox-origin``).

Off by default: the page frames ``sandbox.html`` as an opaque-origin
``<iframe sandbox="allow-scripts">``. With a sandbox origin the relay serves that one
file on a second site as well (``auto``: ``http://sandbox.localhost:PORT`` beside the
page on ``http://127.0.0.1:PORT``; Chromium resolves ``*.localhost`` to loopback), and
the page frames it from there without the ``sandbox`` attribute: a site of its own has
a renderer process of its own (a heap bomb ends only the sandbox).

What the sandbox site is held to (SECURITY.md, "The sandbox on a site of its own"):

- It serves ``sandbox.html`` and nothing else; every other path there is a 404, the
  relay's API included.
- ``Clear-Site-Data: "cookies", "storage"`` on every load of it (``no-store``, so the
  browser never answers from its cache without the header): whatever an earlier
  session's cells left there (IndexedDB, Cache Storage, service workers, cookies) is
  gone before the frame's script runs. Not ``"cache"``: the HTTP and code caches are
  what the mode is for, and they hold only the site's public files.
- The same CSP as the opaque frame (no network: ``connect-src 'none'``;
  ``worker-src blob:``, so no service worker script can be registered), plus
  ``frame-ancestors`` naming only the relay's own page origins.
- COEP ``require-corp`` and CORP ``cross-origin``: the frame stays cross-origin
  isolated inside the page's isolation (``allow="cross-origin-isolated"``).

The page learns the mode from the relay only: the response for ``build-info.json``
on the page's own site carries ``Reckon-Sandbox-Origin`` (not exposed to other
origins, so a widget on another site keeps the opaque frame). The page's policy
(header and ``<meta>``) gets the sandbox origin in ``frame-src``.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reckon.server._config import AUTO, RelayConfig
from reckon.server._site import load_header_rules

__all__ = ["AUTO", "MODE_HEADER", "SandboxSite", "sandbox_host_names"]

AUTO_HOST = "sandbox.localhost"
MODE_HEADER = "Reckon-Sandbox-Origin"
FRAME = "sandbox.html"
_CLEAR = '"cookies", "storage"'
_LOOPBACK_PAGES = ("127.0.0.1", "localhost")


def sandbox_host_names(config: RelayConfig) -> tuple[set[str], set[str]]:
    """Host names the Guard must accept for the sandbox site: (loopback-like names
    checked with the relay's port, names accepted as they are)."""
    if config.sandbox_origin is None:
        return set(), set()
    if config.sandbox_origin == AUTO:
        return {AUTO_HOST}, set()
    netloc = urlsplit(config.sandbox_origin).netloc.lower()
    return set(), {netloc}


class SandboxSite:
    """Pure ASGI middleware, inside the Guard: the sandbox site's one file, the mode
    header on ``build-info.json``, and the page's ``frame-src``."""

    def __init__(self, app: ASGIApp, *, config: RelayConfig) -> None:
        self.app = app
        self.config = config
        self.site = config.site_dir
        self.origin = config.sandbox_origin

    def _sandbox_origin(self, headers: Headers) -> str:
        if self.origin != AUTO:
            return str(self.origin)
        _, _, port = headers.get("host", "").rpartition(":")
        return f"http://{AUTO_HOST}:{port}" if port.isdigit() else f"http://{AUTO_HOST}"

    def _on_sandbox_site(self, headers: Headers) -> bool:
        host = headers.get("host", "").lower()
        if self.origin == AUTO:
            return host.rpartition(":")[0] == AUTO_HOST or host == AUTO_HOST
        return host == urlsplit(str(self.origin)).netloc.lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.origin is None or self.site is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self._on_sandbox_site(headers):
            await self._frame(scope, headers)(scope, receive, send)
            return
        path = scope["path"]
        if path == "/build-info.json":
            origin = self._sandbox_origin(headers)

            async def with_mode(message: Message) -> None:
                if message["type"] == "http.response.start":
                    MutableHeaders(scope=message)[MODE_HEADER] = origin
                await send(message)

            await self.app(scope, receive, with_mode)
            return
        if scope["method"] == "GET" and path.endswith(("/", ".html")):
            await self._page(scope, receive, send, self._sandbox_origin(headers))
            return
        await self.app(scope, receive, send)

    def _frame(self, scope: Scope, headers: Headers) -> Response:
        if scope["method"] not in ("GET", "HEAD") or scope["path"] != f"/{FRAME}":
            return PlainTextResponse(
                f"This is Reckon's sandbox site: it serves only /{FRAME}.", status_code=404
            )
        assert self.site is not None
        try:
            body = (self.site / FRAME).read_bytes()
        except OSError:
            return PlainTextResponse(f"{FRAME} is missing; rebuild the site.", status_code=404)
        policy = ""
        for pattern, values in load_header_rules(self.site):
            if fnmatchcase(FRAME, pattern) and "Content-Security-Policy" in values:
                policy = values["Content-Security-Policy"]
        ancestors = " ".join(self._page_origins(headers))
        out = {
            "Content-Security-Policy": f"{policy}; frame-ancestors {ancestors}".lstrip("; "),
            "Clear-Site-Data": _CLEAR,
            "Cache-Control": "no-store",
            "Cross-Origin-Embedder-Policy": "require-corp",
            "Cross-Origin-Opener-Policy": "same-origin",
            "Cross-Origin-Resource-Policy": "cross-origin",
        }
        return Response(body, media_type="text/html; charset=utf-8", headers=out)

    def _page_origins(self, headers: Headers) -> list[str]:
        """Who may frame the sandbox site: the relay's own page origins only."""
        if self.origin == AUTO:
            _, _, port = headers.get("host", "").rpartition(":")
            suffix = f":{port}" if port.isdigit() else ""
            return [f"http://{name}{suffix}" for name in _LOOPBACK_PAGES]
        names = [*self.config.allowed_hosts]
        if self.config.host not in ("0.0.0.0", "::", "", *_LOOPBACK_PAGES):
            names.append(self.config.host)
        pages = [f"{scheme}://{name}" for name in names for scheme in ("https", "http")]
        pages += [f"http://{name}:{self.config.port}" for name in _LOOPBACK_PAGES]
        return pages

    async def _page(self, scope: Scope, receive: Receive, send: Send, origin: str) -> None:
        """An HTML page of the site: its policy (header and ``<meta>``) may frame the
        sandbox origin. Not revalidated: the body differs from the file's."""
        scope = dict(scope)
        scope["headers"] = [
            (k, v)
            for k, v in scope["headers"]
            if k.lower() not in (b"if-none-match", b"if-modified-since")
        ]
        start: Message | None = None
        chunks: list[bytes] = []

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            out = MutableHeaders(scope=start)
            body = b"".join(chunks)
            if out.get("content-type", "").startswith("text/html"):
                source = "frame-src 'self'"
                target = f"frame-src 'self' {origin}"
                body = body.replace(source.encode(), target.encode())
                if "content-security-policy" in out:
                    out["content-security-policy"] = out["content-security-policy"].replace(
                        source, target
                    )
                for name in ("etag", "last-modified"):
                    if name in out:
                        del out[name]
            if "content-length" in out:
                out["content-length"] = str(len(body))
            await send(start)
            await send({"type": "http.response.body", "body": body, "more_body": False})

        await self.app(scope, receive, rewrite)
