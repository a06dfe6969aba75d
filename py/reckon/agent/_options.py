"""What an ``Agent`` is given: its limits, the person's controls and whom it tells.

One dataclass holds them all, so the agent and the parts it is made of (``_requests``,
``_cells``) read the same settings, live: ``_host``'s ``configure()`` changes the
controls between asks (approval: from the next cell).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, overload

from reckon._exceptions import ProtocolError
from reckon.agent._approval import APPROVAL_MODES, Decide
from reckon.agent._types import JSONDict
from reckon.agent.privacy._privacy import Privacy

__all__ = ["AgentOptions", "Option"]

T = TypeVar("T")


@dataclass(kw_only=True)
class AgentOptions:
    """``Agent(model, executor, **options)``: every option is keyword-only and optional."""

    max_steps: int = 12  # model calls for one answer
    max_failures: int = 3  # failed cells in a row before the answer gives up
    observation_limit: int = 6000  # characters of a cell's output the model reads
    # How long a cell may take to honour an interrupt before we stop waiting for it.
    interrupt_grace: float = 10.0
    # The person's say over the loop (docs/control.md).
    # Tokens this conversation may use in all (None: no limit); ask() may add a
    # limit for one answer.
    token_budget: int | None = None
    privacy: Privacy = field(default_factory=Privacy)
    approval: str = "auto"  # "ask": each cell waits for ``decide``
    decide: Decide | None = None
    verify: bool = False  # recompute each answer's key number another way
    # Whom it tells: each finished step, streamed text, each call's tokens, and before
    # each model call what it must read (a slow local model reads a long prompt for
    # many seconds before its first word, and the page says so).
    on_step: Callable[[JSONDict], None] | None = None
    on_text: Callable[[str], None] | None = None
    on_usage: Callable[[JSONDict], None] | None = None
    on_call: Callable[[JSONDict], None] | None = None

    def __post_init__(self) -> None:
        if self.approval not in APPROVAL_MODES:
            raise ProtocolError(f'approval must be "auto" or "ask", got {self.approval!r}')
        self.privacy = self.privacy or Privacy()  # None: the default


class _HasOptions(Protocol):
    options: AgentOptions


class Option(Generic[T]):
    """An attribute of the agent that is the field of its ``options`` of the same name
    (``_host`` sets ``agent.approval`` and the other controls)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, agent: None, owner: type) -> Option[T]: ...

    @overload
    def __get__(self, agent: _HasOptions, owner: type) -> T: ...

    def __get__(self, agent: _HasOptions | None, owner: type) -> Option[T] | T:
        if agent is None:
            return self
        value: T = getattr(agent.options, self._name)
        return value

    def __set__(self, agent: _HasOptions, value: T) -> None:
        setattr(agent.options, self._name, value)
