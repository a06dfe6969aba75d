"""What ``Agent.stop()`` reaches during one ask: the model call, the running cell and a
wait for the person's decision; each of them ends with ``Stopped``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

from reckon._exceptions import ReckonError
from reckon.agent._types import ChatReply, ChatRequest, Executor, JSONDict, Model

__all__ = ["Stopped", "Stopping"]

T = TypeVar("T")

# Interrupts still under way; the loop keeps only weak references to tasks.
_BACKGROUND: set[asyncio.Task[None]] = set()


class Stopped(Exception):
    """Raised inside the loop when ``stop()`` cut a model call, a cell or a wait short."""


class Stopping:
    """The stop switch of one ask, and the waits it can cut short."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._model_task: asyncio.Future[ChatReply] | None = None
        self._running_cell = False

    def stopped(self) -> bool:
        return self._event.is_set()

    def stop(self, executor: Executor) -> None:
        """Cancel the model call and interrupt a running cell."""
        self._event.set()
        if self._model_task is not None and not self._model_task.done():
            self._model_task.cancel()
        if self._running_cell:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # called from outside the loop: the flag alone must do
                return
            task = loop.create_task(_interrupt(executor))
            _BACKGROUND.add(task)  # keep a reference until it finishes
            task.add_done_callback(_BACKGROUND.discard)

    async def call_model(
        self, model: Model, request: ChatRequest, on_text: Callable[[str], None] | None
    ) -> ChatReply:
        if self.stopped():
            raise Stopped
        task = asyncio.ensure_future(model.complete(request, on_text=on_text))
        self._model_task = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.stopped() and (current is None or not current.cancelling()):
                raise Stopped from None
            raise
        finally:
            self._model_task = None

    async def run_cell(self, executor: Executor, code: str, *, grace: float) -> JSONDict:
        """Run ``code``; when stopped, wait (``grace`` seconds) for the interrupted result."""
        if self.stopped():
            raise Stopped
        self._running_cell = True
        try:
            run = asyncio.ensure_future(executor.run(code))
            if await self.first(run):
                return run.result()
            try:
                return await asyncio.wait_for(asyncio.shield(run), timeout=grace)
            except TimeoutError:
                run.cancel()
                raise Stopped from None
        finally:
            self._running_cell = False

    async def first(self, work: asyncio.Future[T]) -> bool:
        """Wait for ``work`` or a stop, whichever comes first: whether ``work`` is done."""
        stopping = asyncio.ensure_future(self._event.wait())
        either: set[asyncio.Future[Any]] = {work, stopping}
        done, _ = await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        return work in done


async def _interrupt(executor: Executor) -> None:
    with contextlib.suppress(ReckonError):
        await executor.interrupt()
