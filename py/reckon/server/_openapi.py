"""``GET /openapi.json``: the hand-written OpenAPI description of the relay's HTTP API.

The document ships as package data beside this module (``openapi.json``) and is
read once, on the first request; ``tests/server/test_openapi.py`` keeps it and
the app's routes in step.
"""

from __future__ import annotations

import functools
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["DOCUMENT", "openapi_document", "serve_openapi"]

DOCUMENT = "openapi.json"


@functools.cache
def openapi_document() -> bytes:
    """The document's bytes, as shipped in the package."""
    return resources.files("reckon.server").joinpath(DOCUMENT).read_bytes()


async def serve_openapi(request: Request) -> Response:
    return Response(
        openapi_document(),
        media_type="application/json",
        headers={"Cache-Control": "no-cache"},
    )
