"""`create_app`: the relay's routes, middleware and lifespan in one place."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError, Scrubber, error_response
from reckon.server._guard import Guard
from reckon.server._limits import Limiter
from reckon.server._metrics import Metrics, MetricsMiddleware
from reckon.server._openapi import serve_openapi
from reckon.server._relay import ChatCompletions
from reckon.server._sandbox_site import SandboxSite
from reckon.server._site import Site
from reckon.server._tools import RelayTools
from reckon.server._upstream import Upstreams

__all__ = ["create_app"]

log = logging.getLogger("reckon.server")

_NO_SITE = (
    "Reckon's relay is running, but it has no site to serve. Build the site "
    "(it lands in dist/site) or start the relay with --site PATH.\n"
)


def create_app(config: RelayConfig) -> Starlette:
    """The relay as an ASGI app: API routes, the static site, and the request guard."""
    upstreams = Upstreams(config)
    metrics = Metrics(in_flight=lambda: upstreams.in_flight, tools=[t.name for t in config.tools])
    limiter = Limiter(config, metrics, upstreams.scrubber)
    tools = RelayTools(
        config,
        limiter=limiter,
        scrubber=lambda: Scrubber([*upstreams.secrets(), *tools.secrets()]),
        metrics=metrics.tools,
    )

    async def list_models(request: Request) -> Response:
        targets, failures = await upstreams.catalogue()
        if not targets and failures:
            raise failures[0]
        data = [
            {"id": t.id, "object": "model", "created": 0, "owned_by": t.profile.name}
            for t in targets
        ]
        return JSONResponse({"object": "list", "data": data})

    async def info(request: Request) -> Response:
        targets, _ = await upstreams.catalogue()
        default = await upstreams.default()
        return JSONResponse(
            {
                "status": "ok",
                "models": [t.id for t in targets],
                "default_model": default.id if default else None,
                # How the agent should talk to each model (PROTOCOL.md §5).
                "model_options": {
                    t.id: {
                        "tools": t.profile.tools,
                        "context_window": t.profile.context_window,
                        "calls_as_text": t.id in upstreams.text_calls,
                    }
                    for t in targets
                },
                "demo": not config.profiles,
                "auth": config.auth_required,
            }
        )

    async def no_site(request: Request) -> Response:
        return PlainTextResponse(_NO_SITE, status_code=404)

    chat = ChatCompletions(upstreams, limiter=limiter, metrics=metrics)
    routes: list[BaseRoute] = [
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/api/info", info, methods=["GET"]),
        Route("/api/tools", tools.listing, methods=["GET"]),
        Route("/api/tools/call", tools.call, methods=["POST"]),
        Route("/openapi.json", serve_openapi, methods=["GET"]),
    ]
    if config.metrics != "off":
        routes.append(Route("/metrics", metrics.endpoint, methods=["GET"]))
    if config.site_dir is not None:
        embedders = [*config.allowed_origins, *config.allowed_embedders]
        routes.append(Mount("/", app=Site(config.site_dir, frame_ancestors=embedders)))
    else:
        routes.append(Route("/", no_site))

    # Outermost, so that the guard's refusals are counted too.
    middleware = [
        Middleware(MetricsMiddleware, metrics=metrics),
        Middleware(Guard, config=config),
        Middleware(SandboxSite, config=config),
    ]
    if config.allowed_origins:
        # Lets a copy of the site hosted elsewhere call the relay; the Guard
        # has already refused every origin not on this list.
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=config.allowed_origins,
                allow_methods=["GET", "POST"],
                allow_headers=["*"],
                # A public page embedding a relay on this machine (Chrome asks first).
                allow_private_network=True,
                max_age=600,
            )
        )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with upstreams, limiter.running(), tools.running():
            yield

    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={
            RelayError: _relay_error,
            HTTPException: _http_error,
            Exception: _unexpected_error,
        },
    )
    app.state.upstreams = upstreams
    app.state.metrics = metrics
    return app


def _is_api(request: Request) -> bool:
    return request.url.path.startswith(("/v1/", "/api/"))


async def _relay_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RelayError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if not _is_api(request):
        return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)
    if exc.status_code == 404:
        message = (
            f"There is no {request.url.path} here. The relay offers POST /v1/chat/completions, "
            "GET /v1/models, GET /api/info, GET /api/tools and POST /api/tools/call."
        )
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}."
    else:
        message = exc.detail
    return error_response(exc.status_code, message, headers=exc.headers)


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    # Our bug. The exception text could mention anything, so it stays in the
    # log (scrubbed) and the browser gets a fixed message.
    upstreams: Upstreams = request.app.state.upstreams
    log.error("unexpected error on %s: %s", request.url.path, upstreams.scrubber().text(repr(exc)))
    return error_response(500, "The relay failed unexpectedly; its log has the details.")
