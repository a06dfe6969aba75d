"""Asks and notebook imports take turns: one at a time, later asks wait in line.

A person may type the next question while the agent still answers, or while a
notebook they dropped is still being imported; the JS API may be called the same
way. Each ask waits for the one before it (its events carry its own ``askId``
only once its turn comes), so no two ever share the sandbox or the model's
history. ``stop()`` ends the running ask *and* every ask still waiting: a person
who presses Stop wants the agent idle, not the next question started.

This is the one guard of that rule. ``_host`` waits in line (``take``); the agent's
own ``ask`` and the notebook import ``join`` the turn their task took, or take one
when none is under way, and are refused while another is (a direct caller that
does not wait in line).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["Turns"]


class Turns:
    """The line of asks and imports in front of one agent."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._holder: asyncio.Task[object] | None = None
        self._stops = 0
        self.waiting = 0

    @property
    def busy(self) -> bool:
        """An ask or an import is running (or waiting to)."""
        return self._lock.locked() or self.waiting > 0

    def stop(self) -> None:
        """Every ask waiting now gives up its turn when it comes."""
        self._stops += 1

    def ticket(self) -> int:
        """Taken when an ask arrives (synchronously: before any stop() after it)."""
        return self._stops

    @asynccontextmanager
    async def take(self, ticket: int | None = None) -> AsyncIterator[bool]:
        """Wait for this turn; yields False when stop() was called since `ticket`."""
        seen = self._stops if ticket is None else ticket
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self._holder = _current_task()
        try:
            yield self._stops == seen
        finally:
            self._holder = None
            self._lock.release()

    @asynccontextmanager
    async def join(self) -> AsyncIterator[bool]:
        """The running task's turn: the one it took, or one taken now (a free lock is
        taken without waiting). Yields False, taking nothing, while another is under way."""
        # (A coroutine driven outside a task has none: then neither has its turn's holder.)
        if self._lock.locked() and self._holder is _current_task():
            yield True
        elif self.busy:
            yield False
        else:
            async with self.take() as turn:
                yield turn


def _current_task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None
