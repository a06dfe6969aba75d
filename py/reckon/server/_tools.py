"""``GET /api/tools`` and ``POST /api/tools/call``: the relay's host tools.

The browser is not trusted: a call is checked here as if the page had checked nothing
(a configured name, arguments valid under the tool's schema, the caller's token and
limits as for model calls), then forwarded to the tool's endpoint with its own headers
(secret ones read from the environment per call), bounded in time and size. Every
call the route takes is answered with HTTP 200 and JSON data: ``{"status": "ok",
"result": ...}`` or ``{"status": "error", "error": "...", "code": "..."}`` (errors as
data, PROTOCOL.md §5, *Relay tools*); only the relay's own refusals (the guard's 401 and
403, a body too large or too slow, the limits' 429) keep their HTTP status and the
relay's error shape. A browser that goes away (its cell interrupted, its ask stopped)
ends the call to the endpoint at once. Each call is counted on ``GET /metrics`` by its
tool and outcome (_tool_metrics.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from reckon._exceptions import ConfigError
from reckon.server import _json
from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError, Scrubber
from reckon.server._limits import Limiter
from reckon.server._request import ClientGone, read_body, until_disconnect
from reckon.server._tool_config import RelayTool
from reckon.server._tool_metrics import ToolMetrics
from reckon.server._tool_schema import validate

__all__ = ["RelayTools"]

log = logging.getLogger("reckon.server")

_SHAPE = 'send {"name": "<tool>", "args": {...}}'
_EXCERPT = 300


class ToolFailed(Exception):
    """A call that reached this route and failed: answered as data, with HTTP 200."""

    def __init__(self, code: str, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.tool = tool  # the configured tool it was for, when the call named one

    @property
    def outcome(self) -> str:
        """Its outcome on ``/metrics``: the relay's refusal, the time limit, or an error."""
        if self.code in _REFUSALS:
            return "refused"
        return "timeout" if self.code == "timeout" else "error"


_REFUSALS = frozenset({"bad_request", "unknown_tool", "bad_arguments"})


def _answer(http: int, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, status_code=http, headers={"Cache-Control": "no-store"})


def _error(failed: ToolFailed) -> Response:
    return _answer(200, {"status": "error", "error": failed.message, "code": failed.code})


class RelayTools:
    """The routes, and the HTTP client that reaches the tools' endpoints."""

    def __init__(
        self,
        config: RelayConfig,
        *,
        limiter: Limiter,
        scrubber: Callable[[], Scrubber],
        metrics: ToolMetrics,
    ) -> None:
        self.config = config
        self.tools = {t.name: t for t in config.tools}
        self.limiter = limiter
        self.scrubber = scrubber
        self.metrics = metrics
        self.client: httpx.AsyncClient | None = None
        missing = [
            f"{env} (tool {t.name!r}, header {header})"
            for t in config.tools
            for header, env in t.secret_headers.items()
            if not os.environ.get(env)
        ]
        if missing:
            raise ConfigError(
                f"relay tools need environment variables that are not set: {', '.join(missing)}; "
                "set them before starting the relay"
            )

    def secrets(self) -> list[str | None]:
        return [
            os.environ.get(env) for t in self.tools.values() for env in t.secret_headers.values()
        ]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        # No proxy or .netrc from the environment, no redirects: the configured URL only.
        # No timeout of httpx's own (5 s by default): each tool's `timeout` bounds its call.
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, timeout=None
        ) as client:
            self.client = client
            try:
                yield
            finally:
                self.client = None

    async def listing(self, request: Request) -> Response:
        return _answer(200, {"status": "ok", "tools": [t.public for t in self.tools.values()]})

    async def call(self, request: Request) -> Response:
        named: str | None = None  # a configured tool's name, once the body says it
        try:
            raw = await read_body(
                request.receive, self.config.max_body_bytes, self.config.body_timeout
            )
            tool, args = self._parse(raw)
            named = tool.name
            admission = await self.limiter.admit(request.scope, reserve=0)
        except ClientGone:
            self.metrics.call(None, "cancelled")
            return Response(status_code=400)
        except RelayError as refused:
            # Refused by the relay's own rules (body size, limits): as the model routes are.
            self.metrics.call(named, "refused")
            return refused.response()
        except ToolFailed as failed:
            self.metrics.call(failed.tool, failed.outcome)
            return _error(failed)
        started = time.monotonic()
        answer: list[Response] = []

        async def work() -> None:
            try:
                result = await self._forward(tool, args)
            except ToolFailed as failed:
                self._count(tool, failed.outcome, failed.code, started)
                answer.append(_error(failed))
            else:
                self._count(tool, "ok", "ok", started)
                answer.append(_answer(200, {"status": "ok", "result": result}))

        try:
            if not await until_disconnect(request.receive, work):
                self._count(tool, "cancelled", "cancelled (client went away)", started)
        finally:
            if admission is not None:
                with anyio.CancelScope(shield=True):
                    await self.limiter.settle(admission, tokens=0)
        # Gone: nobody reads this answer, but the route must give one.
        return answer[0] if answer else Response(status_code=499)

    def _count(self, tool: RelayTool, outcome: str, said: str, started: float) -> None:
        log.info("tool %s -> %s in %.0f ms", tool.name, said, _ms(started))
        self.metrics.call(tool.name, outcome, time.monotonic() - started)

    def _parse(self, raw: bytes) -> tuple[RelayTool, dict[str, Any]]:
        try:
            body = _json.loads(raw)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ToolFailed("bad_request", f"The request body is not JSON; {_SHAPE}.") from None
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            raise ToolFailed("bad_request", f"The request must be a JSON object; {_SHAPE}.")
        tool = self.tools.get(body["name"])
        if tool is None:
            known = ", ".join(self.tools) or "none (this relay has no [[tool]] in its config)"
            raise ToolFailed(
                "unknown_tool",
                f"no relay tool named {body['name'][:100]!r}; its tools: {known}",
            )
        args = body.get("args", {})
        problems = (
            validate(args, tool.parameters)
            if isinstance(args, dict)
            else ["args must be an object"]
        )
        if problems:
            raise ToolFailed(
                "bad_arguments",
                f"{tool.name}: bad arguments: {'; '.join(problems)}. "
                f"Its parameters: {json.dumps(tool.parameters)}",
                tool=tool.name,
            )
        return tool, args

    async def _forward(self, tool: RelayTool, args: dict[str, Any]) -> Any:
        assert self.client is not None, "RelayTools.running() is not entered"
        headers = {"Accept": "application/json", **tool.headers}
        for header, env in tool.secret_headers.items():
            value = os.environ.get(env)
            if not value:
                raise ToolFailed(
                    "not_configured",
                    f"{tool.name}: the relay is missing its key ({env} is not set)",
                )
            headers[header] = value
        options: dict[str, Any] = (
            {"json": args} if tool.method == "POST" else {"params": _query(args)}
        )
        request = self.client.build_request(tool.method, tool.url, headers=headers, **options)
        try:
            with anyio.fail_after(tool.timeout):
                response = await self.client.send(request, stream=True)
                try:
                    body = await _capped(response, tool)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise ToolFailed(
                "timeout",
                f"{tool.name} did not answer within {tool.timeout:g} s (its time limit); "
                "try again later, or ask for less",
            ) from None
        except httpx.HTTPError as exc:
            raise ToolFailed(
                "unreachable",
                f"{tool.name}: the relay could not reach the tool's endpoint "
                f"({type(exc).__name__})",
            ) from None
        text = self.scrubber().text(body.decode("utf-8", errors="replace"))
        if response.status_code >= 300:
            excerpt = " ".join(text.split())[:_EXCERPT]
            raise ToolFailed(
                "endpoint_error",
                f"{tool.name} failed: its endpoint answered HTTP {response.status_code}"
                + (f": {excerpt}" if excerpt else ""),
            )
        try:
            value = _json.loads(text) if text.strip() else None
        except (ValueError, RecursionError):
            raise ToolFailed(
                "not_json", f"{tool.name} failed: its endpoint did not answer JSON"
            ) from None
        if tool.returns is not None and (problems := validate(value, tool.returns)):
            raise ToolFailed(
                "bad_result",
                f"{tool.name} returned data that does not match its declared result: "
                + "; ".join(problems),
            )
        return value


async def _capped(response: httpx.Response, tool: RelayTool) -> bytes:
    # Counted as it arrives, and given up at once: a 100 MB answer is never held.
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > tool.max_result_bytes:
            raise ToolFailed(
                "result_too_large",
                f"{tool.name} returned more than {tool.max_result_bytes:,} bytes, the most its "
                "result may be (max_result_bytes); ask it for less (a filter, a month, fewer "
                "fields)",
            )
    return bytes(body)


def _query(args: dict[str, Any]) -> dict[str, str]:
    # A GET tool's arguments as query parameters: text as it is, anything else as JSON.
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in args.items() if v is not None}


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000
