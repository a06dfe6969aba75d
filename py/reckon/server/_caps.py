"""Each model call's ceiling: how long it may take, and how many bytes its answer may have.

httpx's timeouts bound each wait for bytes, not a call: a model server that sends a
token a second for ever never trips them. Such a stream held a place of
``max_concurrent_streams`` and of its client's ``concurrent_streams`` for as long as
it ran, and a whole (unstreamed) answer is read into memory before it is sent. So
every call ends by ``call_timeout`` seconds after it was sent upstream, and its
answer by ``max_answer_bytes`` bytes, counted as the upstream sends them. Past
either the relay stops the call with a `CallCapped` error: a 504 or 502 when nothing
was sent yet, else one SSE error event at the end of what was (``_relay``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, AsyncIterator

import anyio

from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError

__all__ = ["CallCapped", "CappedChunks", "too_long"]


class CallCapped(RelayError):
    """A model call went over ``call_timeout`` or ``max_answer_bytes``."""


def too_long(config: RelayConfig, profile: str) -> CallCapped:
    said = (
        f"was still answering after {config.call_timeout:g} s, the relay's limit for one model call"
    )
    return _capped(504, profile, said, "call_timeout")


def _too_big(config: RelayConfig, profile: str) -> CallCapped:
    said = f"sent more than {config.max_answer_bytes} bytes for one answer, the relay's limit"
    return _capped(502, profile, said, "max_answer_bytes")


def _capped(status: int, profile: str, said: str, setting: str) -> CallCapped:
    return CallCapped(
        status,
        f"The model server '{profile}' {said} ({setting}), so the relay stopped the call. "
        f"Ask for a shorter answer (max_tokens), or raise {setting}.",
        code=setting,
    )


class CappedChunks:
    """The upstream's chunks until the call's deadline or byte limit, then `CallCapped`."""

    def __init__(
        self,
        chunks: AsyncIterable[bytes],
        *,
        deadline: float,
        config: RelayConfig,
        profile: str,
    ) -> None:
        self._chunks = aiter(chunks)
        self._deadline = deadline  # time.monotonic()
        self._config = config
        self._profile = profile
        self._total = 0

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise too_long(self._config, self._profile)
        try:
            with anyio.fail_after(remaining):
                chunk = await anext(self._chunks)
        except TimeoutError:
            raise too_long(self._config, self._profile) from None
        self._total += len(chunk)
        if self._total > self._config.max_answer_bytes:
            raise _too_big(self._config, self._profile)
        return chunk
