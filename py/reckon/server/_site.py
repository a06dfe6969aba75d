"""The built static site, with the headers the build asks for.

The build writes ``_headers.json`` at the site root::

    [{"pattern": "*.html", "headers": {"Content-Security-Policy": "..."}}, ...]

Patterns are ``fnmatch`` globs matched against the file's path relative to the
site root, with ``/`` separators (``*`` also matches ``/``, so ``*.html`` covers
every HTML file). Every matching rule applies, in file order; when two rules
set the same header, the later one wins. ``_headers.json`` itself is not served.

A file with a precompressed sibling (``<name>.gz``, written by the build for the
start-up snapshot) is sent as that sibling with ``Content-Encoding: gzip`` to a
client that accepts gzip and is not on this machine: over a network a quarter of
the bytes wins, while on loopback the browser's inflating would cost more (about
0.5 s of CPU for the 185 MB snapshot) than the copy saves.
"""

from __future__ import annotations

import ipaddress
import json
import os
from fnmatch import fnmatchcase
from pathlib import Path

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from reckon._exceptions import ConfigError

__all__ = ["HEADERS_FILE", "Site", "load_header_rules"]

HEADERS_FILE = "_headers.json"

# Fixed rather than left to the `mimetypes` table, which differs between
# systems: browsers refuse module scripts and streaming wasm compilation
# served under the wrong type, and we send nosniff.
_MEDIA_TYPES = {
    ".wasm": "application/wasm",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
}

Rule = tuple[str, dict[str, str]]


def load_header_rules(site_dir: Path) -> list[Rule]:
    path = site_dir / HEADERS_FILE
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    rules: list[Rule] = []
    if not isinstance(data, list):
        raise ConfigError(f"{path} must hold a JSON list of {{pattern, headers}} objects")
    for index, item in enumerate(data):
        pattern = item.get("pattern") if isinstance(item, dict) else None
        headers = item.get("headers") if isinstance(item, dict) else None
        if (
            not isinstance(pattern, str)
            or not isinstance(headers, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
        ):
            raise ConfigError(
                f'{path}: entry {index} must be {{"pattern": "<glob>", "headers": '
                '{"Name": "value"}}'
            )
        rules.append((pattern.lstrip("/"), headers))
    return rules


class Site(StaticFiles):
    """StaticFiles (``html=True``) plus per-file headers and fixed media types."""

    def __init__(self, directory: Path, *, frame_ancestors: list[str] | None = None) -> None:
        super().__init__(directory=directory, html=True)
        self.root = Path(os.path.realpath(directory))
        self.rules = load_header_rules(directory)
        # Only a header can say who may frame a page (a <meta> CSP cannot), so this is
        # the relay's to add: the relay's own pages, and the origins it was told of.
        self.frame_ancestors = " ".join(["'self'", *(frame_ancestors or [])])

    async def get_response(self, path: str, scope: Scope) -> Response:
        if Path(path).as_posix() == HEADERS_FILE:
            raise HTTPException(status_code=404)
        response = await super().get_response(path, scope)
        if isinstance(response, FileResponse) and response.status_code == 404:
            # The site's 404.html does not go through file_response.
            self._decorate(response, str(response.path))
        return response

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response: Response
        compressed = f"{os.fspath(full_path)}.gz"
        if status_code == 200 and _wants_gzip(scope) and os.path.isfile(compressed):
            response = FileResponse(
                compressed, status_code=status_code, stat_result=os.stat(compressed)
            )
            response.headers["content-encoding"] = "gzip"
            response.headers["vary"] = "Accept-Encoding"
            response.headers["content-type"] = "application/octet-stream"
        else:
            response = super().file_response(full_path, stat_result, scope, status_code)
        self._decorate(response, full_path)
        return response

    def _decorate(self, response: Response, full_path: str | os.PathLike[str]) -> None:
        real = Path(os.path.realpath(full_path))
        try:
            relative = real.relative_to(self.root).as_posix()
        except ValueError:  # a symlink out of the site; StaticFiles allowed it
            relative = real.name
        media = _MEDIA_TYPES.get(real.suffix.lower())
        if media is not None and response.status_code != 304:
            response.headers["content-type"] = media
        for pattern, headers in self.rules:
            if fnmatchcase(relative, pattern):
                for name, value in headers.items():
                    response.headers[name] = value
        if real.suffix.lower() == ".html":
            policy = response.headers.get("content-security-policy")
            ancestors = f"frame-ancestors {self.frame_ancestors}"
            response.headers["content-security-policy"] = (
                f"{policy}; {ancestors}" if policy else ancestors
            )


def _wants_gzip(scope: Scope) -> bool:
    """A client that takes gzip and is not on this machine (see the module docstring)."""
    if "gzip" not in Headers(scope=scope).get("accept-encoding", "").lower():
        return False
    client = scope.get("client")
    try:
        return not ipaddress.ip_address(client[0]).is_loopback if client else False
    except ValueError:  # a Unix socket or a test transport: treat as local
        return False
