"""``POST /v1/chat/completions``: check the request, forward it, pass the answer back.

Written as a plain ASGI app rather than a Starlette endpoint because it must
watch for the browser going away (``http.disconnect``) during the whole
upstream call, including the wait for the first byte, and close the upstream
request at once: an abandoned generation would otherwise keep burning tokens.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from starlette.types import Receive, Scope, Send

from reckon.server import _anthropic
from reckon.server._caps import CallCapped, CappedChunks, too_long
from reckon.server._config import ResolvedModel
from reckon.server._errors import RelayError, Scrubber
from reckon.server._identity import IDENTITY, Identity
from reckon.server._limits import Limiter
from reckon.server._metrics import Metrics
from reckon.server._pump import pump
from reckon.server._request import ClientGone, parse_request, read_body, until_disconnect
from reckon.server._scrub import EventScrubber
from reckon.server._upstream import Upstreams, chat_call
from reckon.server._upstream_errors import describe_failure, upstream_error
from reckon.server._usage import UsageMeter, estimate_prompt_tokens

__all__ = ["ChatCompletions"]

log = logging.getLogger("reckon.server")

_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    # Tells nginx-style proxies in front of the relay not to buffer tokens.
    (b"x-accel-buffering", b"no"),
]
_ERROR_BODY_LIMIT = 64 * 1024


def _error_event(error: RelayError, tail: bytes) -> bytes:
    # The OpenAI SDKs raise an APIError for a `data:` event carrying "error".
    lead = b"" if tail.endswith(b"\n\n") else b"\n" if tail.endswith(b"\n") else b"\n\n"
    code = {"code": error.code} if error.code else {}
    event = {"error": {"type": error.type, "message": error.message, **code}}
    return lead + b"data: " + json.dumps(event).encode() + b"\n\n"


class ChatCompletions:
    """The ASGI app behind ``POST /v1/chat/completions``."""

    def __init__(self, upstreams: Upstreams, *, limiter: Limiter, metrics: Metrics) -> None:
        self.upstreams = upstreams
        self.config = upstreams.config
        self.limiter = limiter
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            raw = await read_body(receive, self.config.max_body_bytes, self.config.body_timeout)
            payload = parse_request(raw)
            target = await self.upstreams.resolve(payload.get("model"))
            url, body = chat_call(target, payload)
            if self.upstreams.in_flight >= self.config.max_concurrent_streams:
                self.metrics.refused("max_concurrent_streams")
                raise RelayError(
                    429,
                    f"The relay is already forwarding {self.config.max_concurrent_streams} model "
                    "calls; retry in a moment (or raise max_concurrent_streams).",
                    code="max_concurrent_streams",
                    headers={"Retry-After": "1"},
                )
            # Worked out only when needed: for the limits now, else if usage is missing.
            estimate = estimate_prompt_tokens(payload) if self.limiter.store else None
            admission = await self.limiter.admit(scope, reserve=estimate or 0)
        except ClientGone:
            return
        except RelayError as exc:
            log.info("chat request refused (%d): %s", exc.status, exc.message)
            await exc.response()(scope, receive, send)
            return
        started = time.monotonic()
        outcome = ["cancelled (client went away)"]
        meter = UsageMeter(
            lambda: estimate_prompt_tokens(payload) if estimate is None else estimate
        )

        async def work() -> None:
            if self.config.log_prompts:
                log.info("prompt for %s: %s", target.id, json.dumps(payload["messages"]))
            outcome[0] = await self._forward(
                target, url, body, payload, meter, scope, receive, send
            )

        self.upstreams.in_flight += 1
        try:
            await until_disconnect(receive, work)
        finally:
            self.upstreams.in_flight -= 1
            usage = meter.result()
            self.metrics.used(usage)
            if admission is not None:
                # Shielded: a client that left must still give its place back.
                with anyio.CancelScope(shield=True):
                    await self.limiter.settle(admission, tokens=usage.total)
            identity: Identity | None = scope.get(IDENTITY)
            log.info(
                "chat %s%s%s -> %s in %.0f ms, %d tokens%s",
                target.id,
                " (stream)" if payload.get("stream") is True else "",
                f" for client {identity.client}" if identity and identity.client else "",
                outcome[0],
                (time.monotonic() - started) * 1000,
                usage.total,
                "" if usage.reported else " (estimated)",
            )

    async def _forward(
        self,
        target: ResolvedModel,
        url: str,
        body: bytes,
        payload: dict[str, Any],
        meter: UsageMeter,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> str:
        scrub = self.upstreams.scrubber()
        client = self.upstreams.client
        stream = payload.get("stream") is True
        request = client.build_request(
            "POST", url, content=body, headers=self.upstreams.headers(target.profile, stream=stream)
        )
        sent = time.monotonic()
        try:
            with anyio.fail_after(self.config.call_timeout):  # see _caps
                response = await client.send(request, stream=True)
        except (httpx.HTTPError, TimeoutError) as exc:
            error = (
                describe_failure(exc, target.profile, self.config)
                if isinstance(exc, httpx.HTTPError)
                else too_long(self.config, target.profile.name)
            )
            await error.response()(scope, receive, send)
            return str(error.status)
        self.metrics.upstream(target.profile.name, time.monotonic() - sent)
        deadline = sent + self.config.call_timeout
        try:
            return await self._answer(
                response, target, payload, scrub, meter, deadline, scope, receive, send
            )
        finally:
            # Shielded: on cancellation this close is what tells the upstream to stop.
            with anyio.CancelScope(shield=True):
                await response.aclose()

    async def _answer(
        self,
        response: httpx.Response,
        target: ResolvedModel,
        payload: dict[str, Any],
        scrub: Scrubber,
        meter: UsageMeter,
        deadline: float,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> str:
        status = response.status_code
        profile = target.profile
        stream = payload.get("stream") is True

        def capped(chunks: AsyncIterator[bytes]) -> CappedChunks:
            return CappedChunks(chunks, deadline=deadline, config=self.config, profile=profile.name)

        if status >= 300:
            body = b""
            try:
                async for chunk in capped(response.aiter_raw()):
                    body += chunk
                    if len(body) > _ERROR_BODY_LIMIT:
                        break
            except CallCapped:
                pass  # what came of the error answer in time is enough to report it
            if status < 400:
                error = RelayError(
                    502,
                    f"The model server '{profile.name}' answered with a redirect (HTTP {status}); "
                    "set its base_url to the final address.",
                )
            else:
                key = self.upstreams.key(profile)
                error = upstream_error(
                    response, body, target, profile.api_key_env, key is not None, scrub
                )
            await error.response()(scope, receive, send)
            return str(status)
        is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
        headers = list(_STREAM_HEADERS) if stream and is_sse else []
        chunks: AsyncIterator[bytes] = capped(response.aiter_raw())
        if profile.protocol == "anthropic":
            # Translated, so decoded first and sent under our own content type.
            options = payload.get("stream_options")
            usage = isinstance(options, dict) and options.get("include_usage") is True
            raw = capped(response.aiter_bytes())
            chunks = _anthropic.translate(
                raw, stream=stream, model=target.model, include_usage=usage
            )
            is_sse = stream
            headers = list(_STREAM_HEADERS) if stream else [(b"content-type", b"application/json")]
        if not headers:
            media = response.headers.get("content-type", "application/json")
            headers = [(b"content-type", media.encode("latin-1"))]
        if "content-encoding" in response.headers and profile.protocol == "openai":
            # Upstream compressed despite Accept-Encoding: identity; say so.
            headers.append((b"content-encoding", response.headers["content-encoding"].encode()))
        try:
            # A whole answer is buffered, so a failure can still become a clean
            # 502/504; a stream waits only for its first chunk, for the same reason.
            first = b"".join([c async for c in chunks]) if not stream else await anext(chunks, b"")
        except httpx.HTTPError as exc:
            error = describe_failure(exc, profile, self.config)
            await error.response()(scope, receive, send)
            return str(error.status)
        except RelayError as untranslatable:
            await untranslatable.response()(scope, receive, send)
            return str(untranslatable.status)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        meter.start(sse=is_sse)
        # Secrets are looked for in the text the browser will read (unless compressed).
        clean: Scrubber | EventScrubber = scrub
        if "content-encoding" not in response.headers:
            clean = EventScrubber(scrub, sse=is_sse)
        sent = [clean.chunk(first)]
        meter.feed(sent[0])
        watch = self.upstreams.text_calls.watch(target.id, payload)
        if watch is not None:
            watch.feed(sent[0])
        await send({"type": "http.response.body", "body": sent[0], "more_body": True})

        async def forward(chunk: bytes) -> None:
            data = clean.chunk(chunk)
            if data:
                sent[0] = data
                meter.feed(data)
                if watch is not None:
                    watch.feed(data)
                await send({"type": "http.response.body", "body": data, "more_body": True})

        outcome = str(status)
        try:
            await pump(chunks, forward)
            ending = clean.flush()
        except (httpx.HTTPError, CallCapped) as exc:
            if isinstance(exc, CallCapped):
                error, why = exc, f"cut at its {exc.code}"
            else:
                error, why = describe_failure(exc, profile, self.config), type(exc).__name__
            outcome = f"{status}, then failed mid-answer ({why})"
            log.warning("model server %r failed mid-answer: %s", profile.name, why)
            ending = clean.flush()
            if is_sse:
                ending += _error_event(error, ending or sent[0])
                self.metrics.error(error.type)
        meter.feed(ending)
        if watch is not None:
            watch.feed(ending)
            watch.end()
        await send({"type": "http.response.body", "body": ending, "more_body": False})
        return outcome
