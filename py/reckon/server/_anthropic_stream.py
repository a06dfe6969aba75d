"""An Anthropic Messages event stream, translated as it arrives into OpenAI chunks.

Upstream bytes may be split anywhere (inside a line, a ``\\r\\n`` or a UTF-8
character), so they are buffered up to the blank line that ends an event and
only whole events are decoded.
"""

from __future__ import annotations

import json
import time
from typing import Any

from reckon.server import _json

__all__ = ["FINISH_REASONS", "StreamTranslator"]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}

_DONE = b"data: [DONE]\n\n"


def _data(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"


class StreamTranslator:
    """Feed it Anthropic SSE bytes; it returns OpenAI ``chat.completion.chunk`` SSE bytes."""

    def __init__(self, *, model: str, include_usage: bool = False) -> None:
        self.model = model
        self.include_usage = include_usage
        self.id = "msg"
        self.created = int(time.time())
        self._cr = b""  # a trailing "\r" that may be the first half of "\r\n"
        self._text = b""  # normalised to "\n" line ends, up to the next blank line
        self._tools: dict[int, int] = {}  # content block index -> position among tool calls
        self._with_arguments: set[int] = set()
        self._prompt_tokens = 0
        self._output_tokens = 0
        self._finished = False  # the chunk with finish_reason went out
        self._done = False  # [DONE] or an error went out; the rest is ignored

    def feed(self, data: bytes) -> bytes:
        data = self._cr + data
        self._cr = b""
        if data.endswith(b"\r"):
            data, self._cr = data[:-1], b"\r"
        self._text += data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        out = []
        while not self._done:
            end = self._text.find(b"\n\n")
            if end < 0:
                break
            block, self._text = self._text[:end], self._text[end + 2 :]
            out.append(self._event(block))
        return b"".join(out)

    def close(self) -> bytes:
        """What ends the translated stream once the upstream has said everything."""
        out = self.feed(b"\n\n") if (self._text + self._cr).strip() else b""
        if self._done:
            return out
        if not self._finished:
            return out + self._error(
                "upstream_error",
                "The model server ended the stream before the answer was complete.",
            )
        return out + self._ending()

    def _event(self, block: bytes) -> bytes:
        name, lines = "", []
        for line in block.split(b"\n"):
            field, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if field == b"event":
                name = value.decode("utf-8", "replace")
            elif field == b"data":
                lines.append(value)
        if not lines:
            return b""  # a comment or a bare event name
        try:
            event = _json.loads(b"\n".join(lines))
            return self._handle(str(event.get("type") or name), event)
        except (ValueError, KeyError, TypeError, AttributeError):
            return self._error(
                "upstream_error", "The model server sent an event the relay cannot read."
            )

    def _handle(self, kind: str, event: dict[str, Any]) -> bytes:
        if kind == "message_start":
            message = event["message"]
            self.id = str(message.get("id") or self.id)
            self.model = str(message.get("model") or self.model)
            self._prompt_tokens = int((message.get("usage") or {}).get("input_tokens", 0))
            return self._chunk({"role": "assistant", "content": ""})
        if kind == "content_block_start":
            block, index = event["content_block"], int(event["index"])
            if block["type"] == "tool_use":
                self._tools[index] = position = len(self._tools)
                function = {"name": block["name"], "arguments": ""}
                call = {
                    "index": position,
                    "id": block["id"],
                    "type": "function",
                    "function": function,
                }
                return self._chunk({"tool_calls": [call]})
            if block["type"] == "text" and block.get("text"):
                return self._chunk({"content": block["text"]})
            return b""
        if kind == "content_block_delta":
            delta, index = event["delta"], int(event["index"])
            if delta["type"] == "text_delta" and delta["text"]:
                return self._chunk({"content": delta["text"]})
            if (
                delta["type"] == "input_json_delta"
                and index in self._tools
                and delta["partial_json"]
            ):
                self._with_arguments.add(index)
                return self._arguments(index, delta["partial_json"])
            return b""  # thinking and signature deltas are not part of the OpenAI answer
        if kind == "content_block_stop":
            index = int(event["index"])
            if index in self._tools and index not in self._with_arguments:
                # A tool without parameters streams no JSON; OpenAI clients expect "{}".
                return self._arguments(index, "{}")
            return b""
        if kind == "message_delta":
            usage = event.get("usage") or {}
            self._output_tokens = int(usage.get("output_tokens", self._output_tokens))
            reason = FINISH_REASONS.get(event["delta"].get("stop_reason") or "", "stop")
            self._finished = True
            return self._chunk({}, finish=reason)
        if kind == "message_stop":
            finish = b"" if self._finished else self._chunk({}, finish="stop")
            self._finished = True
            return finish + self._ending()
        if kind == "error":
            error = event.get("error") or {}
            detail = error.get("message") or "no details"
            return self._error(
                str(error.get("type") or "upstream_error"),
                f"The model server failed mid-answer: {detail}",
            )
        return b""  # ping, and event types added to the API later

    def _chunk(self, delta: dict[str, Any], *, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _data(
            {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [choice],
            }
        )

    def _arguments(self, index: int, text: str) -> bytes:
        call = {"index": self._tools[index], "function": {"arguments": text}}
        return self._chunk({"tool_calls": [call]})

    def _ending(self) -> bytes:
        self._done = True
        if not self.include_usage:
            return _DONE
        prompt, output = self._prompt_tokens, self._output_tokens
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        }
        event = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }
        return _data(event) + _DONE

    def _error(self, kind: str, message: str) -> bytes:
        # The same shape as the relay's own mid-stream failures; the OpenAI SDKs raise it.
        self._done = True
        return _data({"error": {"type": kind, "message": message}})
