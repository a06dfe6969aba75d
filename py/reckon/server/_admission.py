"""What a limit store answers: an ``Admission`` or a ``Refusal`` (or ``LimitsUnavailable``).

Apart from ``_limits`` so that both stores, the in-memory one there and the Redis
one in ``_limits_redis``, take these types from below.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Admission", "LimitStore", "LimitsUnavailable", "Refusal"]


@dataclass(frozen=True)
class Admission:
    """A call let through: what to undo or settle when it ends."""

    key: str
    request: str  # unique; the call's place in the window and among the streams
    day: int
    reserved: int


@dataclass(frozen=True)
class Refusal:
    limit: str  # one of _access.LIMIT_NAMES
    retry_after: int  # whole seconds, at least 1
    used: int  # calls in the window, tokens today, or streams open


class LimitsUnavailable(Exception):
    """The limit store cannot be asked (Redis is down): calls are refused, not let through."""


class LimitStore(Protocol):
    async def admit(self, key: str, *, request: str, reserve: int) -> Admission | Refusal: ...

    async def settle(self, admission: Admission, *, tokens: int) -> None: ...

    def running(self) -> contextlib.AbstractAsyncContextManager[None]: ...
