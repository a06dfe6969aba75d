"""One conversation's state, in one object: what ``Agent.reset()`` forgets and what a
switch between conversations would swap. Before, it was spread over seven holders on
the agent and its request sender (the history, the transcript, the tables loaded, the
log of what was sent, how far the model had read, the summed usage)."""

from __future__ import annotations

from dataclasses import dataclass, field

from reckon.agent._preload import TableLoads
from reckon.agent._types import JSONDict
from reckon.agent.export._transcript import Transcript
from reckon.agent.models._sent import SentLog
from reckon.agent.models._usage import add_usage

__all__ = ["Conversation"]


@dataclass(eq=False)
class Conversation:
    """The history the model reads (``messages``), the record a person sees and exports
    (``transcript``), which variable holds which table (``tables``), copies of what
    earlier requests sent (``sent_log``) and how much of the history the model has
    already read (``read_until``, for the prompt-reading estimate)."""

    messages: list[JSONDict] = field(default_factory=list)
    transcript: Transcript = field(default_factory=Transcript)
    tables: TableLoads = field(default_factory=TableLoads)
    sent_log: SentLog = field(default_factory=SentLog)
    read_until: int = 0
    # The finished asks' usage, summed once per finished ask (usage is asked after
    # every model call): the asks list it was summed from, its length, the sum.
    _summed: tuple[list[JSONDict], int, JSONDict] = field(
        default_factory=lambda: ([], 0, add_usage([])), repr=False
    )

    def finished_usage(self) -> JSONDict:
        """Tokens used by every finished answer of the transcript."""
        asks = self.transcript.asks
        if self._summed[0] is not asks or self._summed[1] != len(asks):
            self._summed = (asks, len(asks), add_usage([ask.get("usage") for ask in asks]))
        return self._summed[2]
