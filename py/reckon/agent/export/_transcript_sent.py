"""Saved transcripts keep each request as a delta over the one before it.

Every request of a conversation repeats the whole history, so saving each body whole
makes a saved session grow with the square of its length. In a saved state (PROTOCOL
sections 4 and 6) a ``sent`` record may instead carry ``"keep": [k, j]``: its body's
``messages`` are only the new ones, and the full list is ``messages[:k]`` + the previous
request's ``messages[k:j]`` + ``messages[k:]`` ("previous": the record before it in the
same ask; the first of each ask is whole, so an ask saved or lost alone stands alone).
Its ``parts`` likewise leave out those of the kept messages, which are the previous
request's. Records without ``keep`` are whole, as older saves and ``transcript()`` have
them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reckon._exceptions import ProtocolError
from reckon.agent._types import JSONDict

__all__ = ["compact_asks", "expand_asks"]


def compact_asks(asks: list[JSONDict]) -> list[JSONDict]:
    """``asks`` with each ``sent`` record written as a delta where one saves anything."""
    return _each_record(asks, lambda record, previous, _: (_delta(record, previous), record))


def expand_asks(asks: list[JSONDict]) -> list[JSONDict]:
    """The inverse of ``compact_asks``: every record whole (messages shared, not copied)."""

    def whole(record: Any, previous: JSONDict | None, number: int) -> tuple[Any, Any]:
        if isinstance(record, dict) and "keep" in record:
            record = _whole(record, previous, number)
        return record, record

    return _each_record(asks, whole)


_Rewrite = Callable[[Any, JSONDict | None, int], tuple[Any, Any]]


def _each_record(asks: list[JSONDict], rewrite: _Rewrite) -> list[JSONDict]:
    """Each ask's ``sent`` records through ``rewrite(record, previous, ask number)``, which
    gives the record to keep and the record whole; ``previous`` is the last whole record
    of the ask that holds messages (what a delta is taken against)."""
    out: list[JSONDict] = []
    for number, ask in enumerate(asks):
        sent = ask.get("sent")
        if not isinstance(sent, list):
            out.append(ask)
            continue
        previous: JSONDict | None = None
        records = []
        for record in sent:
            kept, whole = rewrite(record, previous, number)
            records.append(kept)
            if _messages(whole) is not None:
                previous = whole
        out.append({**ask, "sent": records})
    return out


def _messages(record: object) -> list[JSONDict] | None:
    body = record.get("body") if isinstance(record, dict) else None
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else None


def _parts(record: JSONDict) -> list[JSONDict]:
    parts = record.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _kept_range(messages: list[JSONDict], before: list[JSONDict]) -> tuple[int, int]:
    """Which of the previous request's messages this one repeats in place: the longest
    common start, or (a system prompt rebuilt in between) the common run after it."""
    count = min(len(messages), len(before))
    if messages[:count] == before[:count]:  # shared objects compare by identity first
        return 0, count
    if count > 1 and messages[1:count] == before[1:count]:
        return 1, count
    keep = 0
    while keep < count and messages[keep] == before[keep]:
        keep += 1
    return 0, keep


def _delta(record: JSONDict, previous: JSONDict | None) -> JSONDict:
    messages = _messages(record)
    before = _messages(previous)
    if messages is None or before is None or previous is None:
        return record
    start, end = _kept_range(messages, before)
    if end <= start:
        return record
    parts = _parts(record)
    inside = [p for p in parts if start <= _index(p) < end]
    if inside != [p for p in _parts(previous) if start <= _index(p) < end]:
        return record  # marked differently (another environment): keep it whole
    body = {**record["body"], "messages": messages[:start] + messages[end:]}
    own = [p for p in parts if not start <= _index(p) < end]
    return {**record, "body": body, "parts": own, "keep": [start, end]}


def _whole(record: JSONDict, previous: JSONDict | None, number: int) -> JSONDict:
    keep = record.get("keep")
    messages = _messages(record)
    before = _messages(previous)
    where = f"ask {number} of the saved transcript"
    if before is None or previous is None:
        raise ProtocolError(f"{where} has a request saved as a delta with no request before it")
    if (
        messages is None
        or not isinstance(keep, list)
        or len(keep) != 2
        or not all(isinstance(k, int) and not isinstance(k, bool) for k in keep)
        or not 0 <= keep[0] <= keep[1] <= len(before)
        or keep[0] > len(messages)
    ):
        raise ProtocolError(
            f"{where} has a request saved as a delta with a bad 'keep' {keep!r}: "
            "it must be [start, end] within the previous request's messages"
        )
    start, end = keep
    whole = messages[:start] + before[start:end] + messages[start:]
    parts = _parts(record)
    kept = [p for p in _parts(previous) if start <= _index(p) < end]
    ordered = [p for p in parts if _index(p) < start] + kept
    ordered += [p for p in parts if _index(p) >= start]
    rest = {k: v for k, v in record.items() if k != "keep"}
    return {**rest, "body": {**record["body"], "messages": whole}, "parts": ordered}


def _index(part: JSONDict) -> int:
    index = part.get("message")
    return index if isinstance(index, int) else -1
