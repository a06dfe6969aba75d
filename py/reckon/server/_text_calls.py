"""Which models leave their tool calls as text, learned from their answers.

A server that renders tools through the model's own chat template and does not parse
the reply (llama-cpp-python with a GGUF's template) hands a call back as text
(``<tool_call>{...}``). The agent notices and talks to that model in code blocks for
the rest of its session; but every new session (each question of ``reckon eval``,
each new tab) found it out again, at the price of a call made with a tool schema the
server only pastes into the prompt. The relay sees every answer, so it remembers, per
model, that one came back so, and ``/api/info`` says it (``calls_as_text``): the next
session starts in code blocks. Only a fact about the upstream is kept, no content;
a reply that only quotes the marker makes the model talk in code blocks, which every
model can.

Not remembered: a call written as JSON in a fenced block (``{"name": "run_python",
…}``), or a fenced Python block. Remembering them was measured (docs/benchmarks.md,
run 18): the 1.5B model writes its first call as a ```json block when offered the
tool, and started in code blocks instead it answered 2 of the first 10 medium
questions right, against 11 or 12 of 12 in runs 12 to 16, though its easy asks took a
third of the time.
"""

from __future__ import annotations

import json

__all__ = ["TextCallWatch", "TextCalls"]

_MARKERS = ("<tool_call>", "<function=", "<|python_tag|>")
_TAIL = 64
_LINE_LIMIT = 1 << 16


class TextCalls:
    """The models whose answers had a tool call written as text."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def watch(self, model: str, payload: dict[str, object]) -> TextCallWatch | None:
        """A watch over one answer, when the request offered tools."""
        return TextCallWatch(self, model) if payload.get("tools") else None

    def saw(self, model: str) -> None:
        self._seen.add(model)

    def __contains__(self, model: object) -> bool:
        return model in self._seen


class TextCallWatch:
    """Reads the text of one answer (streamed events or a whole body) as it passes and
    looks for a call written in it; a marker split over tokens is found too."""

    def __init__(self, calls: TextCalls, model: str) -> None:
        self._calls, self._model = calls, model
        self._pending = b""  # an event line not complete yet
        self._text = ""  # the end of the answer's text so far
        self.found = False

    def feed(self, chunk: bytes) -> None:
        if self.found or not chunk:
            return
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        if len(self._pending) > _LINE_LIMIT:
            self._pending = b""  # no event line is this long: a whole body, read at end()
        for line in lines:
            if line.startswith(b"data:"):
                self._read(line[5:])

    def end(self) -> None:
        """The answer is over: a body that was not a stream is read whole."""
        if not self.found and self._pending.strip():
            self._read(self._pending)
        self._pending = b""

    def _read(self, data: bytes) -> None:
        try:
            event = json.loads(data)
        except ValueError:
            return
        for choice in event.get("choices") or [] if isinstance(event, dict) else []:
            part = (
                (choice.get("delta") or choice.get("message") or {})
                if isinstance(choice, dict)
                else {}
            )
            content = part.get("content") if isinstance(part, dict) else None
            if isinstance(content, str):
                self._text = (self._text + content)[-_TAIL:]
                if any(m in self._text for m in _MARKERS):
                    self.found = True
                    self._calls.saw(self._model)
