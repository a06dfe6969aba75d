"""Server-sent events, parsed incrementally, and chat-completion chunks accumulated.

Network chunks split anywhere — inside a line, inside a ``\\r\\n`` pair, inside a
UTF-8 sequence — so the decoder keeps state between ``feed`` calls and only
dispatches an event when its blank line has arrived (per the HTML SSE spec).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable

from reckon._exceptions import ModelError, ModelProtocolError
from reckon.agent._types import ChatReply, JSONDict
from reckon.agent.models._runaway import RunawayGuard
from reckon.agent.models._think import ThinkSplitter

__all__ = ["ChunkAccumulator", "SSEDecoder"]


class SSEDecoder:
    """Turns a byte stream into the ``data`` payloads of its events."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[str]:
        """Add bytes; return the data of every event completed by them."""
        self._buffer += self._utf8.decode(chunk)
        return self._drain(final=False)

    def close(self) -> list[str]:
        """End of stream: flush what is left, including an event without its blank line."""
        self._buffer += self._utf8.decode(b"", final=True)
        events = self._drain(final=True)
        if self._buffer:
            self._line(self._buffer, events)
            self._buffer = ""
        if self._data:
            events.append("\n".join(self._data))
            self._data = []
        return events

    def _drain(self, *, final: bool) -> list[str]:
        events: list[str] = []
        start = 0
        buffer = self._buffer
        while True:
            cr = buffer.find("\r", start)
            lf = buffer.find("\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                # A lone "\r" at the end may be the first half of "\r\n": wait for more.
                if cr == len(buffer) - 1 and not final:
                    break
                end, step = cr, 2 if buffer.startswith("\n", cr + 1) else 1
            else:
                end, step = lf, 1
            self._line(buffer[start:end], events)
            start = end + step
        self._buffer = buffer[start:]
        return events

    def _line(self, line: str, events: list[str]) -> None:
        if not line:
            if self._data:
                events.append("\n".join(self._data))
                self._data = []
            return
        if line.startswith(":"):
            return  # a comment, often a keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        # "event", "id" and "retry" carry nothing a chat completion needs.


class ChunkAccumulator:
    """Folds chat-completion chunks (streamed deltas) into one ``ChatReply``."""

    def __init__(self, *, on_text: Callable[[str], None] | None = None) -> None:
        self._on_text = on_text
        self._text: list[str] = []
        self._reasoning: list[str] = []
        # Only what the model says is streamed to the page; <think> parts are not.
        self._visible = ThinkSplitter()
        self._calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: JSONDict | None = None
        self.done = False
        self.runaway = RunawayGuard()

    def add_event(self, data: str) -> None:
        """Take one SSE data payload: a JSON chunk, an error object or ``[DONE]``."""
        data = data.strip()
        if not data:
            return
        if data == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError as exc:
            raise ModelProtocolError(
                f"the model server sent a non-JSON event: {data[:200]!r}"
            ) from exc
        if not isinstance(chunk, dict):
            raise ModelProtocolError(f"the model server sent an unexpected event: {data[:200]!r}")
        self.add_chunk(chunk)

    def add_chunk(self, chunk: JSONDict) -> None:
        raise_for_error(chunk)
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)  # cut to ``runaway.cut`` in ``reply``
                if self.runaway.feed(content):
                    self.done = True  # the stream is cut here (``looping``)
                    self.finish_reason = "looping"
                    continue
                shown = self._visible.feed(content)
                if self._on_text is not None and shown:
                    self._on_text(shown)
            for key in ("reasoning_content", "reasoning"):
                thought = delta.get(key)
                if isinstance(thought, str) and thought:
                    self._reasoning.append(thought)
                    break
            for position, call in enumerate(delta.get("tool_calls") or []):
                self._add_call(position, call)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])

    def _add_call(self, position: int, call: JSONDict) -> None:
        index = call.get("index")
        key = index if isinstance(index, int) else position
        entry = self._calls.setdefault(key, {"id": "", "name": "", "arguments": ""})
        if call.get("id"):
            entry["id"] = str(call["id"])
        function = call.get("function") or {}
        if function.get("name"):
            entry["name"] += str(function["name"]) if not entry["name"] else ""
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            entry["arguments"] += arguments
        elif arguments is not None:  # some servers send an object instead of a string
            entry["arguments"] += json.dumps(arguments)

    def reply(self) -> ChatReply:
        calls = [self._calls[key] for key in sorted(self._calls)]
        for number, call in enumerate(calls):
            if not call["id"]:
                call["id"] = f"call_{number}"
        shown = self._visible.close()
        if self._on_text is not None and shown:
            self._on_text(shown)
        text = "".join(self._text)
        if self.runaway.cut is not None:
            text = text[: self.runaway.cut]
        return ChatReply(
            text=text,
            reasoning="".join(self._reasoning),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
        )


def raise_for_error(payload: JSONDict) -> None:
    """Raise ``ModelError`` for an OpenAI-style error object inside a 200 response."""
    error = payload.get("error")
    if error is None:
        return
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("type") or error)
        code = error.get("code") if isinstance(error.get("code"), int) else None
        kind = str(error.get("type") or "model_error")
    else:
        message, code, kind = str(error), None, "model_error"
    raise ModelError(f"the model server reported an error: {message}", status=code, kind=kind)
