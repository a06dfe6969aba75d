"""The record of a session: each question with its steps, as plain JSON-ready data."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reckon._exceptions import ProtocolError
from reckon.agent._types import JSONDict
from reckon.agent.export._transcript_sent import compact_asks, expand_asks

__all__ = ["Transcript", "dump_state", "load_state", "replay_cells"]

_VERSION = 1
_STATE_VERSION = 1
_ROLES = frozenset({"system", "user", "assistant", "tool"})


@dataclass
class Transcript:
    """Questions in order, each ``{"question", "status", "answer", "steps", "message"?}``.

    Steps follow PROTOCOL section 4. Figures' PNGs stay in the steps so a saved
    session shows the same pictures when it is opened again.
    """

    asks: list[JSONDict] = field(default_factory=list)

    def add(self, question: str, outcome: JSONDict) -> None:
        self.asks.append({"question": question, **outcome})

    @property
    def steps(self) -> list[JSONDict]:
        return [step for ask in self.asks for step in ask.get("steps") or []]

    def to_json(self, *, compact: bool = False) -> str:
        """The transcript as JSON text; ``compact``: each request body as a delta over
        the one before (for saving: it grows linearly, not with the square of the
        session; ``from_json`` reads both)."""
        return json.dumps(self.to_data(compact=compact), ensure_ascii=False)

    def to_data(self, *, compact: bool = False) -> JSONDict:
        asks = compact_asks(self.asks) if compact else self.asks
        return {"version": _VERSION, "asks": asks}

    @classmethod
    def from_json(cls, text: str) -> Transcript:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"a saved transcript is not JSON: {exc}") from exc
        return cls.from_data(data)

    @classmethod
    def from_data(cls, data: Any) -> Transcript:
        """``to_data``'s value, as parsed from JSON; ``ProtocolError`` if malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("asks"), list):
            raise ProtocolError("a saved transcript must be an object with an 'asks' list")
        if data.get("version", _VERSION) != _VERSION:
            raise ProtocolError(f"unsupported transcript version {data.get('version')!r}")
        asks = data["asks"]
        if not all(isinstance(ask, dict) for ask in asks):
            raise ProtocolError("every ask in a saved transcript must be an object")
        return cls(asks=expand_asks(asks))


def replay_cells(transcript: Transcript | Iterable[JSONDict]) -> list[str]:
    """The code of every cell that ran ``ok``, in order: enough to rebuild the state.

    Failed cells are skipped because their fixed version follows them; a cell
    that failed and was never fixed left no state worth rebuilding.
    """
    steps: Iterable[Any] = transcript.steps if isinstance(transcript, Transcript) else transcript
    cells: list[str] = []
    for step in steps:
        if not isinstance(step, dict) or step.get("kind") != "code":
            continue
        result = step.get("result")
        if isinstance(result, dict) and result.get("status") == "ok" and step.get("code"):
            cells.append(str(step["code"]))
    return cells


def dump_state(messages: list[JSONDict], transcript: Transcript) -> str:
    """The agent's memory as JSON text: the model's message history (a follow-up after
    a reload has the context) and the transcript, its request bodies as deltas (the
    page saves this after every ask)."""
    state = {
        "version": _STATE_VERSION,
        "messages": messages,
        "transcript": transcript.to_data(compact=True),
    }
    return json.dumps(state, ensure_ascii=False)


def load_state(state_json: str) -> tuple[list[JSONDict], Transcript]:
    """The model's messages and the transcript from ``dump_state``'s text; a malformed
    state raises ``ProtocolError`` (and changes nothing)."""
    try:
        state = json.loads(state_json)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"a saved agent state is not JSON: {exc}") from exc
    if not isinstance(state, dict):
        raise ProtocolError("a saved agent state must be an object")
    if state.get("version", _STATE_VERSION) != _STATE_VERSION:
        raise ProtocolError(f"unsupported agent state version {state.get('version')!r}")
    messages = state.get("messages", [])
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and m.get("role") in _ROLES for m in messages
    ):
        raise ProtocolError("saved messages must be a list of chat messages with a known role")
    transcript = Transcript.from_data(state.get("transcript", {"asks": []}))
    return messages, transcript
