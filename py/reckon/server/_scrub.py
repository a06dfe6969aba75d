"""Secrets taken out of an answer as the browser will read it, not only as bytes.

``Scrubber`` (in ``_errors``) replaces a key's literal bytes. An answer can carry a
key the browser puts together without those bytes ever appearing: split across two
streamed events (``"sk-abc"`` then ``"def…"`` in two deltas), or written with JSON
escapes (``\\u0073k-…``). ``EventScrubber`` reads each SSE event's JSON (or the whole
JSON body), joins its strings in order across events, and holds back only the events
whose text could be the start of a secret, the way the byte scrubber holds back a
chunk's tail. A secret found is cut out of every string it spans and one marker put
in its place; events with no secret go out byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reckon.server._errors import REDACTED, Scrubber

__all__ = ["EventScrubber"]


@dataclass
class _Event:
    raw: bytes  # with its blank-line ending
    data: Any = None  # the parsed JSON of its data lines, when they hold JSON
    spots: list[tuple[Any, Any]] = field(default_factory=list)  # (container, key) of strings
    changed: bool = False

    def texts(self) -> list[str]:
        return [container[key] for container, key in self.spots]


class EventScrubber:
    """``chunk``/``flush`` like ``Scrubber``, for an SSE stream (``sse=True``) or one
    JSON body (held whole until ``flush``)."""

    def __init__(self, scrub: Scrubber, *, sse: bool) -> None:
        self._bytes = scrub
        self._secrets = scrub.secrets
        self._sse = sse
        self._buffer = b""
        self._held: list[_Event] = []

    def chunk(self, data: bytes) -> bytes:
        if not self._secrets:
            return self._bytes.chunk(data)
        self._buffer += data
        if not self._sse:
            return b""
        out = []
        while True:
            cut = _event_end(self._buffer)
            if cut < 0:
                break
            event, self._buffer = self._buffer[:cut], self._buffer[cut:]
            out.append(self._add(_read(event, sse=True)))
        return self._bytes.chunk(b"".join(out))

    def flush(self) -> bytes:
        if not self._secrets:
            return self._bytes.flush()
        rest, self._buffer = self._buffer, b""
        out = b""
        if rest:
            self._held.append(_read(rest, sse=self._sse))
            self._redact()
        out = b"".join(_write(e, sse=self._sse) for e in self._held)
        self._held = []
        return self._bytes.chunk(out) + self._bytes.flush()

    def _add(self, event: _Event) -> bytes:
        self._held.append(event)
        self._redact()
        text = "".join(t for e in self._held for t in e.texts())
        keep = max((_prefix_tail(text, s) for s in self._secrets), default=0)
        # Release every event that ends before the text that could start a secret.
        released, position = 0, 0
        for event in self._held:
            position += sum(len(t) for t in event.texts())
            if position > len(text) - keep:
                break
            released += 1
        out, self._held = self._held[:released], self._held[released:]
        return b"".join(_write(e, sse=self._sse) for e in out)

    def _redact(self) -> None:
        spans = [(e, i) for e in self._held for i in range(len(e.spots))]
        texts = [e.texts()[i] for e, i in spans]
        text = "".join(texts)
        cut = [False] * len(text)
        marks: set[int] = set()
        for secret in self._secrets:
            start = text.find(secret)
            while start >= 0:
                cut[start : start + len(secret)] = [True] * len(secret)
                marks.add(start)
                start = text.find(secret, start + len(secret))
        if not marks:
            return
        offset = 0
        for (event, index), value in zip(spans, texts, strict=True):
            kept = "".join(
                (REDACTED if offset + n in marks else "") + ("" if cut[offset + n] else ch)
                for n, ch in enumerate(value)
            )
            if kept != value:
                container, key = event.spots[index]
                container[key] = kept
                event.changed = True
            offset += len(value)


def _event_end(buffer: bytes) -> int:
    ends = [i + len(sep) for sep in (b"\n\n", b"\r\n\r\n") if (i := buffer.find(sep)) >= 0]
    return min(ends, default=-1)


def _read(raw: bytes, *, sse: bool) -> _Event:
    event = _Event(raw)
    try:
        if sse:
            lines = [line for line in raw.splitlines() if line.startswith(b"data:")]
            payload = b"\n".join(line[5:].removeprefix(b" ") for line in lines)
        else:
            payload = raw
        event.data = json.loads(payload) if payload.strip() else None
    except ValueError:  # not JSON (or not UTF-8): the byte scrubber still sees it
        return event
    if isinstance(event.data, dict | list):
        _collect(event.data, event.spots)
    return event


def _collect(value: Any, spots: list[tuple[Any, Any]]) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, str):
            spots.append((value, key))
        elif isinstance(item, dict | list):
            _collect(item, spots)


def _write(event: _Event, *, sse: bool) -> bytes:
    if not event.changed:
        return event.raw
    body = json.dumps(event.data, ensure_ascii=False).encode()
    if not sse:
        return body
    others = [line for line in event.raw.splitlines() if line and not line.startswith(b"data:")]
    return b"".join(line + b"\n" for line in [*others, b"data: " + body]) + b"\n"


def _prefix_tail(text: str, secret: str) -> int:
    """Length of the longest end of ``text`` that is a proper start of ``secret``."""
    for size in range(min(len(secret) - 1, len(text)), 0, -1):
        if text.endswith(secret[:size]):
            return size
    return 0
