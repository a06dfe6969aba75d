"""Checks every request passes before it reaches a route.

- Host must name this relay (a loopback name with our port, or a configured
  name). A web page can point its own DNS name at 127.0.0.1 ("DNS rebinding")
  and so talk to the relay from its own origin; its Host header gives it away.
- Origin, when present, must be the relay's own or an allowed one
  (``--allow-origin``, ``allowed_origins`` in the config file), so no other site
  can spend the user's API key from the user's browser. This covers the site's
  files too: a page elsewhere can embed ``<reckon-chat>`` from this relay only
  when its origin is allowed.
- With a token configured (the shared ``--token``, clients' own tokens, or a
  ``client_secret`` for signed tokens), /v1/* and /api/* need
  ``Authorization: Bearer``; so does /metrics unless it is ``open``. Who the caller
  turned out to be is left in the scope for the limits (``_identity``).

Every response also gets ``X-Content-Type-Options`` and ``Referrer-Policy``. For an
allowed origin, CORS headers are added by Starlette's CORSMiddleware inside this
guard (preflights included); the guard's own refusals (401, a Host problem) carry
them too, so the page can read why it was refused.
"""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError, error_response
from reckon.server._identity import IDENTITY, Keyring
from reckon.server._sandbox_site import sandbox_host_names

__all__ = ["Guard"]

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "[::1]"})
_WILDCARD = frozenset({"0.0.0.0", "::", "[::]", ""})
_PROTECTED = ("/v1/", "/api/")
_METRICS = "/metrics"
_SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def _split_host(value: str) -> tuple[str, int | None]:
    host, sep, port = value.rpartition(":")
    # "[::1]" alone has colons but no port; a port never contains "]".
    if not sep or "]" in port:
        return value, None
    return host, int(port) if port.isdigit() else -1


class Guard:
    """Pure ASGI middleware (no BaseHTTPMiddleware: it would hide disconnects)."""

    def __init__(self, app: ASGIApp, *, config: RelayConfig) -> None:
        self.app = app
        self.config = config
        names = set(_LOOPBACK)
        if config.host not in _WILDCARD:
            names.add(f"[{config.host}]" if ":" in config.host else config.host.lower())
        self.names = names
        self.extra = {h.lower() for h in config.allowed_hosts}
        # The sandbox's own site, when it has one: served by this relay too.
        sandbox_names, sandbox_extra = sandbox_host_names(config)
        self.names |= sandbox_names
        self.extra |= sandbox_extra
        self.origins = set(config.allowed_origins)
        self.keyring = Keyring(config)
        self.metrics_protected = config.metrics == "token"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        headers = Headers(scope=scope)
        origin = headers.get("origin")
        allowed = origin is not None and origin in self.origins

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for name, value in _SECURITY_HEADERS.items():
                    out.setdefault(name, value)
                if allowed and "access-control-allow-origin" not in out:
                    assert origin is not None
                    out["Access-Control-Allow-Origin"] = origin
                    out.add_vary_header("Origin")
            await send(message)

        problem = self._host_problem(scope, headers) or self._origin_problem(scope, headers)
        if problem is not None:
            await error_response(403, problem)(scope, receive, send_with_headers)
            return
        preflight = scope["method"] == "OPTIONS" and "access-control-request-method" in headers
        if self.keyring.required and self._protects(scope["path"]) and not preflight:
            try:
                scope[IDENTITY] = self.keyring.identify(headers.get("authorization"))
            except RelayError as refused:
                await refused.response()(scope, receive, send_with_headers)
                return
        await self.app(scope, receive, send_with_headers)

    def _protects(self, path: str) -> bool:
        return path.startswith(_PROTECTED) or (path == _METRICS and self.metrics_protected)

    def _ports(self, scope: Scope) -> set[int]:
        ports = {self.config.port}
        server = scope.get("server")
        if server and server[1] is not None:
            ports.add(int(server[1]))
        return ports

    def _host_problem(self, scope: Scope, headers: Headers) -> str | None:
        value = headers.get("host", "").lower()
        name, port = _split_host(value)
        if value in self.extra or name in self.extra:
            return None
        default = 443 if scope["scheme"] == "https" else 80
        if name in self.names and (port or default) in self._ports(scope):
            return None
        here = f"http://127.0.0.1:{max(self._ports(scope))}/"
        return (
            f"The Host header {value!r} does not name this relay, so the request is refused "
            f"(this protects against DNS rebinding). Open {here}, or start the relay with "
            f"--allow-host {name or 'NAME'}."
        )

    def _origin_problem(self, scope: Scope, headers: Headers) -> str | None:
        origin = headers.get("origin")
        if origin is None or origin in self.origins:
            return None
        own = f"{scope['scheme']}://{headers.get('host', '')}".lower()
        if origin.lower() == own:
            return None
        return (
            f"Requests from the web page at {origin!r} are refused: only pages served by this "
            f"relay may use it. Open Reckon from {own}/, or start the relay with "
            f"--allow-origin {origin}."
        )
