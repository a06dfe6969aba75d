"""``GET /metrics``: what the relay did, in Prometheus' text exposition format (0.0.4).

Counted per process: each replica answers for itself, and Prometheus adds them up.
Every label value comes from a short fixed list (routes, statuses, error kinds,
limit names) or from the relay's own configuration (profile and tool names), never
from a request: a path, a model name, a tool name or a token could carry a secret,
and would make the series unbounded. Nothing here sees a prompt, a key or a client
token.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reckon.server import _json
from reckon.server._errors import _DEFAULT_TYPES
from reckon.server._tool_metrics import ToolMetrics
from reckon.server._usage import Usage

__all__ = ["CONTENT_TYPE", "Metrics", "MetricsMiddleware", "route_of"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
ROUTES = (
    "/v1/chat/completions",
    "/v1/models",
    "/api/info",
    "/api/tools",
    "/api/tools/call",
    "/openapi.json",
    "/metrics",
)
# Seconds; a laptop model can take minutes to its first token.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
ERROR_KINDS = frozenset(
    [*_DEFAULT_TYPES.values(), "model_not_found", "server_error", "insufficient_quota"]
)
# nginx's number for "the client went away before the answer started".
GONE = 499
_ERROR_BODY_LIMIT = 16 * 1024


def route_of(path: str) -> str:
    if path in ROUTES:
        return path
    if path.startswith(("/v1/", "/api/")):
        return "other_api"
    return "site"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _Histogram:
    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.sum += seconds

    def lines(self, name: str, labels: str) -> list[str]:
        out, running = [], 0
        for bound, count in zip([*BUCKETS, None], self.counts, strict=True):
            running += count
            le = "+Inf" if bound is None else f"{bound:g}"
            out.append(f'{name}_bucket{{{labels},le="{le}"}} {running}')
        out.append(f"{name}_sum{{{labels}}} {self.sum:.6f}")
        out.append(f"{name}_count{{{labels}}} {running}")
        return out


class Metrics:
    """The relay's counters; ``in_flight`` reads the number of calls under way."""

    def __init__(
        self, *, in_flight: Callable[[], int] = lambda: 0, tools: Iterable[str] = ()
    ) -> None:
        self.in_flight = in_flight
        self.tools = ToolMetrics(tools)
        self.requests: Counter[tuple[str, str]] = Counter()
        self.tokens: Counter[tuple[str, str]] = Counter()
        self.errors: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()
        self.latency: dict[str, _Histogram] = {}

    def request(self, route: str, status: int) -> None:
        self.requests[(route, str(status))] += 1

    def error(self, kind: str) -> None:
        self.errors[kind if kind in ERROR_KINDS else "other"] += 1

    def refused(self, limit: str) -> None:
        self.refusals[limit] += 1

    def used(self, usage: Usage) -> None:
        source = "reported" if usage.reported else "estimated"
        self.tokens[("prompt", source)] += usage.prompt
        self.tokens[("completion", source)] += usage.completion

    def upstream(self, profile: str, seconds: float) -> None:
        self.latency.setdefault(profile, _Histogram()).observe(seconds)

    def render(self) -> str:
        lines: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            lines.extend([f"# HELP {name} {text}", f"# TYPE {name} {kind}"])

        family("reckon_requests_total", "counter", "HTTP requests answered, by route and status.")
        for (route, status), n in sorted(self.requests.items()):
            lines.append(f'reckon_requests_total{{route="{route}",status="{status}"}} {n}')
        family(
            "reckon_tokens_total",
            "counter",
            "Tokens of model calls: reported by the model server, or estimated when it did not.",
        )
        for (kind, source), n in sorted(self.tokens.items()):
            lines.append(f'reckon_tokens_total{{kind="{kind}",source="{source}"}} {n}')
        family("reckon_errors_total", "counter", "Error answers and mid-stream errors, by type.")
        for kind, n in sorted(self.errors.items()):
            lines.append(f'reckon_errors_total{{kind="{_label(kind)}"}} {n}')
        family("reckon_limit_refusals_total", "counter", "Calls refused (429) by a limit.")
        for limit, n in sorted(self.refusals.items()):
            lines.append(f'reckon_limit_refusals_total{{limit="{limit}"}} {n}')
        family(
            "reckon_upstream_latency_seconds",
            "histogram",
            "Seconds from sending a call to the model server to its response headers.",
        )
        for profile, histogram in sorted(self.latency.items()):
            lines.extend(
                histogram.lines("reckon_upstream_latency_seconds", f'profile="{_label(profile)}"')
            )
        family("reckon_model_calls_in_flight", "gauge", "Model calls being forwarded now.")
        lines.append(f"reckon_model_calls_in_flight {self.in_flight()}")
        lines.extend(self.tools.lines())
        return "\n".join(lines) + "\n"

    async def endpoint(self, request: Request) -> Response:
        return Response(
            self.render(), media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"}
        )


class MetricsMiddleware:
    """Counts every answer by route and status, and error answers by their type.

    Outermost, so the guard's own refusals (401, 403) are counted too. Pure ASGI:
    it passes every message on as it comes, reading only an error's small JSON body.
    """

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = route_of(scope["path"])
        status = [GONE]
        error_body: list[bytes] | None = None

        async def counting_send(message: Message) -> None:
            nonlocal error_body
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                kind = Headers(raw=message.get("headers", [])).get("content-type", "")
                if status[0] >= 400 and kind.startswith("application/json"):
                    error_body = []
            elif (
                message["type"] == "http.response.body"
                and error_body is not None
                and sum(map(len, error_body)) < _ERROR_BODY_LIMIT
            ):
                error_body.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        except Exception:
            if status[0] == GONE:  # Starlette's outermost handler answers 500 for it
                status[0], error_body = 500, [b'{"error": {"type": "server_error"}}']
            raise
        finally:
            self.metrics.request(route, status[0])
            if error_body is not None:
                self.metrics.error(_error_type(b"".join(error_body)))


def _error_type(body: bytes) -> str:
    try:
        data = _json.loads(body)
    except ValueError:
        return "other"
    error = data.get("error") if isinstance(data, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else "other"
