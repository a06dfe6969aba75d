"""A small orders API on loopback for the relay-tool tests: what a `[[tool]]` of
`reckon serve` calls. It records every request it gets (path, headers, body), so a test
can say what reached it (a secret header) and what never did (refused arguments), and
how long its caller kept a hanging call open (`/hang`)."""

from __future__ import annotations

import asyncio
import time
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
HANG_S = 60.0  # how long /hang waits for its caller to go away before it answers


@dataclass
class Endpoint:
    url: str
    seen: list[dict[str, Any]] = field(default_factory=list)
    # One per /hang call: seconds until its caller closed the connection (None: never).
    hung: list[float | None] = field(default_factory=list)

    def tool(self, name: str, path: str, **options: Any) -> dict[str, Any]:
        """A `[[tool]]` table (as a dict) for `path` of this server."""
        return {
            "name": name,
            "description": f"the {name} tool",
            "url": f"{self.url}{path}",
            **options,
        }


def _app(seen: list[dict[str, Any]], hung: list[float | None]) -> Starlette:
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

    async def hang(request: Request) -> Response:
        # Never answers while its caller is there: the body is read, so the next message
        # can only be http.disconnect, which comes as soon as the caller closes the socket.
        await record(request)
        started = time.monotonic()
        try:
            async with asyncio.timeout(HANG_S):
                while (await request.receive())["type"] != "http.disconnect":
                    pass
        except TimeoutError:
            hung.append(None)
            return JSONResponse([])
        hung.append(time.monotonic() - started)
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
            Route("/hang", hang, methods=methods),
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
    hung: list[float | None] = []
    with Running(_app(seen, hung), lifespan="off") as server:
        yield Endpoint(server.url, seen, hung)
