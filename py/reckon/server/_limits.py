"""Per-client limits on model calls: requests per minute, tokens per day, streams at once.

A call is admitted or refused in one step that checks and counts all three, so no
two calls can both take the last place (in memory there is no ``await`` inside that
step; in Redis it is one Lua script, see ``_limits_redis``):

- requests per minute: a sliding window of the last 60 s, so no minute anywhere
  holds more than the limit; the refusal's Retry-After is when the oldest call
  leaves the window;
- tokens per day (UTC): a call is admitted while the day's count is below the
  limit. Admitting it adds its prompt estimate at once (so a burst of calls cannot
  all slip in under the limit), and its end replaces the estimate with what the
  upstream reported (or the estimate of ``_usage``). One call may end past the
  limit; the next is refused until midnight UTC;
- concurrent streams: calls under way (streamed or not), released when they end.

Callers are counted by client id when they have one (``_identity``), else by their
address (behind a proxy, the one X-Forwarded-For names; see ``trusted_proxies``).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.types import Scope

from reckon.server._access import Limits, public_redis_url
from reckon.server._admission import Admission, LimitStore, LimitsUnavailable, Refusal
from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError, Scrubber
from reckon.server._identity import IDENTITY, Identity
from reckon.server._metrics import Metrics

__all__ = [
    "Admission",
    "LimitStore",
    "Limiter",
    "LimitsUnavailable",
    "MemoryLimits",
    "Refusal",
    "limit_key",
]

log = logging.getLogger("reckon.server")

WINDOW = 60.0
DAY = 86400


def _seconds(value: float) -> int:
    return max(1, math.ceil(value))


@dataclass
class _Counts:
    requests: deque[float]
    day: int = -1
    tokens: int = 0
    streams: int = 0


class MemoryLimits:
    """The limits of one relay process. ``clock`` is ``time.time`` outside tests."""

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.time) -> None:
        self.limits = limits
        self.clock = clock
        self._counts: dict[str, _Counts] = {}
        self._swept = clock()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        yield

    async def admit(self, key: str, *, request: str, reserve: int) -> Admission | Refusal:
        # No await from here to the end: nothing else runs in between, so this is atomic.
        now = self.clock()
        self._sweep(now)
        day = int(now // DAY)
        counts = self._counts.setdefault(key, _Counts(deque()))
        if counts.day != day:
            counts.day, counts.tokens = day, 0
        window = counts.requests
        while window and window[0] <= now - WINDOW:
            window.popleft()
        limits = self.limits
        if limits.tokens_per_day is not None and counts.tokens >= limits.tokens_per_day:
            return Refusal("tokens_per_day", _seconds((day + 1) * DAY - now), counts.tokens)
        if limits.requests_per_minute is not None and len(window) >= limits.requests_per_minute:
            return Refusal("requests_per_minute", _seconds(window[0] + WINDOW - now), len(window))
        if limits.concurrent_streams is not None and counts.streams >= limits.concurrent_streams:
            return Refusal("concurrent_streams", 1, counts.streams)
        window.append(now)
        counts.tokens += reserve
        counts.streams += 1
        return Admission(key, request, day, reserve)

    async def settle(self, admission: Admission, *, tokens: int) -> None:
        counts = self._counts.get(admission.key)
        if counts is None:
            return
        counts.streams -= 1
        if counts.day == admission.day:
            counts.tokens += tokens - admission.reserved
        else:  # the call ran past midnight: today pays for it
            day = int(self.clock() // DAY)
            if counts.day != day:
                counts.day, counts.tokens = day, 0
            counts.tokens += tokens

    def _sweep(self, now: float) -> None:
        # Callers known by address come and go: forget those with nothing to remember.
        if now - self._swept < WINDOW:
            return
        self._swept = now
        day = int(now // DAY)
        for key, counts in list(self._counts.items()):
            idle = not counts.requests or counts.requests[-1] <= now - WINDOW
            if idle and counts.streams == 0 and (counts.day != day or counts.tokens == 0):
                del self._counts[key]


def limit_key(scope: Scope) -> tuple[str, str]:
    """(key, who): the client id, or the caller's address, and how to name it to them."""
    identity: Identity | None = scope.get(IDENTITY)
    if identity is not None and identity.client is not None:
        return f"client:{identity.client}", f"Client {identity.client!r}"
    client = scope.get("client")
    address = str(client[0]) if client else "unknown"
    return f"ip:{address}", f"This address ({address})"


class Limiter:
    """The relay's limits in front of the store that counts them (memory or Redis)."""

    def __init__(self, config: RelayConfig, metrics: Metrics, scrubber: Callable[[], Scrubber]):
        self.limits = config.limits
        self.metrics = metrics
        self.scrubber = scrubber
        self.where = public_redis_url(config.redis_url) if config.redis_url else "memory"
        self.store: LimitStore | None = None
        if not self.limits.any:
            return
        if config.redis_url is not None:
            # Imported here: a relay without --redis never loads the redis package.
            from reckon.server._limits_redis import RedisLimits

            self.store = RedisLimits(config.redis_url, self.limits)
        else:
            self.store = MemoryLimits(self.limits)

    def running(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self.store.running() if self.store is not None else contextlib.nullcontext()

    async def admit(self, scope: Scope, *, reserve: int) -> Admission | None:
        if self.store is None:
            return None
        key, who = limit_key(scope)
        try:
            result = await self.store.admit(key, request=uuid.uuid4().hex, reserve=reserve)
        except LimitsUnavailable as exc:
            log.warning(
                "limit store %s unavailable: %s", self.where, self.scrubber().text(str(exc))
            )
            raise RelayError(
                503,
                f"The relay cannot reach its limit store ({self.where}), so it refuses model "
                "calls until the store is back (limits fail closed). Try again shortly; if "
                "this goes on, the relay's operator should check Redis.",
                code="limits_unavailable",
            ) from None
        if isinstance(result, Refusal):
            self.metrics.refused(result.limit)
            raise self._refusal(result, who)
        return result

    async def settle(self, admission: Admission, *, tokens: int) -> None:
        assert self.store is not None
        try:
            await self.store.settle(admission, tokens=tokens)
        except LimitsUnavailable as exc:
            # The stream's place frees itself when its lease runs out; the estimate
            # already counted stays counted (which errs on the safe side).
            log.warning(
                "could not settle a call with the limit store %s: %s",
                self.where,
                self.scrubber().text(str(exc)),
            )

    def _refusal(self, refusal: Refusal, who: str) -> RelayError:
        limit = getattr(self.limits, refusal.limit)
        wait = refusal.retry_after
        if refusal.limit == "requests_per_minute":
            message = (
                f"{who} has made {refusal.used} model calls in the last minute, the relay's "
                f"limit (requests_per_minute = {limit}). Retry in {wait} s."
            )
        elif refusal.limit == "tokens_per_day":
            midnight = datetime.fromtimestamp((time.time() // DAY + 1) * DAY, UTC)
            message = (
                f"{who} has used {refusal.used:,} tokens today, the relay's limit "
                f"(tokens_per_day = {limit:,}). Retry after midnight UTC "
                f"({midnight:%Y-%m-%d %H:%M} UTC, in {wait} s)."
            )
        else:
            message = (
                f"{who} already has {refusal.used} model calls under way, the relay's limit "
                f"(concurrent_streams = {limit}). Retry when one has finished (in {wait} s)."
            )
        return RelayError(
            429, message, code=refusal.limit, headers={"Retry-After": str(refusal.retry_after)}
        )
