"""A small orders API on loopback for the relay-tool tests: what a `[[tool]]` of
`reckon serve` calls. It records every request it gets (path, headers, body), so a test
can say what reached it (a secret header) and what never did (refused arguments)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ._threads import Running

ORDERS = [
    {"id": 1, "month": 3, "amount": 120.5, "customer": "Ada"},
    {"id": 2, "month": 3, "amount": 80, "customer": "Bo"},
    {"id": 3, "month": 4, "amount": 42, "customer": "Cy"},
]
# Values long and rare enough that schema privacy's filter must hide them.
VIP = [{"customer": "Zelda Quartermaine", "amount": 98765.43}]
SECRET = "orders-api-SECRET-5d1c9e0b7a"
SECRET_ENV = "RECKON_TEST_ORDERS_KEY"


@dataclass
class Endpoint:
    url: str
    seen: list[dict[str, Any]] = field(default_factory=list)

    def tool(self, name: str, path: str, **options: Any) -> dict[str, Any]:
        """A `[[tool]]` table (as a dict) for `path` of this server."""
        return {
            "name": name,
            "description": f"the {name} tool",
            "url": f"{self.url}{path}",
            **options,
        }


def _app(seen: list[dict[str, Any]]) -> Starlette:
    async def record(request: Request) -> Any:
        body = await request.body()
        seen.append(
            {
                "path": request.url.path,
                "headers": dict(request.headers),
                "body": body,
                "query": dict(request.query_params),
            }
        )
        return await request.json() if body else dict(request.query_params)

    async def orders(request: Request) -> Response:
        args = await record(request)
        month = int(args.get("month", 0))
        return JSONResponse([o for o in ORDERS if o["month"] == month])

    async def slow(request: Request) -> Response:
        await record(request)
        await asyncio.sleep(30)
        return JSONResponse([])

    async def huge(request: Request) -> Response:
        await record(request)
        return JSONResponse(["x" * 1000] * 2000)  # about 2 MB

    async def fail(request: Request) -> Response:
        await record(request)
        return PlainTextResponse("database down", status_code=500)

    async def echo(request: Request) -> Response:
        await record(request)
        return JSONResponse({"you_sent": request.headers.get("x-api-key", "")})

    async def vip(request: Request) -> Response:
        await record(request)
        return JSONResponse(VIP)

    async def text(request: Request) -> Response:
        await record(request)
        return PlainTextResponse("<html>not json</html>")

    methods = ["GET", "POST"]
    return Starlette(
        routes=[
            Route("/orders", orders, methods=methods),
            Route("/slow", slow, methods=methods),
            Route("/huge", huge, methods=methods),
            Route("/fail", fail, methods=methods),
            Route("/echo", echo, methods=methods),
            Route("/text", text, methods=methods),
            Route("/vip", vip, methods=methods),
        ]
    )


@contextmanager
def an_orders_endpoint() -> Iterator[Endpoint]:
    seen: list[dict[str, Any]] = []
    with Running(_app(seen), lifespan="off") as server:
        yield Endpoint(server.url, seen)
