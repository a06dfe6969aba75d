"""How many tokens a call used: the upstream's own ``usage``, or a conservative estimate.

A whole answer carries ``usage``; a stream carries it in its last chunk when the
request asked for it (``stream_options.include_usage``, which Reckon's agent always
sends). When an answer has none (not asked for, a server that never sends it, a
stream cut short), the call is charged an estimate that errs high: one token per
``BYTES_PER_TOKEN`` bytes of UTF-8 text, both of the request (messages and tools, as
JSON) and of the answer's text, and ``IMAGE_TOKENS`` per image. Common tokenizers
make a token of 3-4 bytes of English or code, and of about one CJK character (3
bytes), so the estimate is about twice the real count for most text.

The meter reads the bytes as they are sent to the browser, so the relay never holds
more than one unfinished event of a stream for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["BYTES_PER_TOKEN", "IMAGE_TOKENS", "Usage", "UsageMeter", "estimate_prompt_tokens"]

BYTES_PER_TOKEN = 2
# More than the most any provider charges for one image (about 1,600 tokens).
IMAGE_TOKENS = 2000
_IMAGE_PARTS = ("image_url", "image", "input_image")


@dataclass(frozen=True)
class Usage:
    prompt: int
    completion: int
    reported: bool  # False: estimated

    @property
    def total(self) -> int:
        return self.prompt + self.completion


def _tokens(size: int) -> int:
    return math.ceil(size / BYTES_PER_TOKEN)


def estimate_prompt_tokens(payload: dict[str, Any]) -> int:
    """The conservative estimate of a request's prompt tokens (see the module docstring)."""
    images = 0

    def without_images(value: Any) -> Any:
        nonlocal images
        if isinstance(value, dict):
            if value.get("type") in _IMAGE_PARTS:
                images += 1
                return {}
            return {k: without_images(v) for k, v in value.items()}
        if isinstance(value, list):
            return [without_images(v) for v in value]
        return value

    text = json.dumps(
        [without_images(payload.get("messages")), payload.get("tools")], ensure_ascii=False
    )
    return _tokens(len(text.encode())) + images * IMAGE_TOKENS


def _reported(value: Any) -> tuple[int, int] | None:
    """(prompt, completion) from an OpenAI ``usage`` object, when it holds counts."""
    if not isinstance(value, dict):
        return None

    def count(name: str) -> int | None:
        number = value.get(name)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            return None
        return number

    prompt, completion = count("prompt_tokens"), count("completion_tokens")
    if prompt is not None and completion is not None:
        return prompt, completion
    total = count("total_tokens")
    if total is not None:
        prompt = min(prompt or 0, total)
        return prompt, total - prompt
    return None


def _text_size(value: Any) -> int:
    """UTF-8 bytes of every string inside ``value`` (an answer's message or delta)."""
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, dict):
        return sum(_text_size(v) for v in value.values())
    if isinstance(value, list):
        return sum(_text_size(v) for v in value)
    return 0


class UsageMeter:
    """Fed the answer's bytes (``feed``); says what the call used (``result``).

    ``prompt_estimate`` is called only when the answer reports no usage."""

    def __init__(self, prompt_estimate: Callable[[], int]) -> None:
        self.prompt_estimate = prompt_estimate
        self.answered = False  # an answer (2xx) started: only then are tokens charged
        self._sse = False
        self._buffer = b""
        self._usage: tuple[int, int] | None = None
        self._text = 0  # bytes of answer text seen
        self._opaque = 0  # bytes that could not be read as events (charged as text)

    def start(self, *, sse: bool) -> None:
        self.answered, self._sse = True, sse

    def feed(self, data: bytes) -> None:
        if not self.answered or not data:
            return
        self._buffer += data
        if not self._sse:
            return
        while True:
            ends = [i + len(s) for s in (b"\n\n", b"\r\n\r\n") if (i := self._buffer.find(s)) >= 0]
            if not ends:
                return
            cut = min(ends)
            self._event(self._buffer[:cut])
            self._buffer = self._buffer[cut:]

    def result(self) -> Usage:
        if not self.answered:
            return Usage(0, 0, reported=True)
        rest, self._buffer = self._buffer, b""
        if self._sse:
            if rest.strip():
                self._event(rest)
        else:
            self._whole(rest)
        if self._usage is not None:
            return Usage(*self._usage, reported=True)
        return Usage(self.prompt_estimate(), _tokens(self._text + self._opaque), reported=False)

    def _event(self, raw: bytes) -> None:
        lines = [line for line in raw.splitlines() if line.startswith(b"data:")]
        data = b"\n".join(line[5:].removeprefix(b" ") for line in lines)
        if not data.strip() or data.strip() == b"[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError:
            self._opaque += len(data)
            return
        self._read(event)

    def _whole(self, body: bytes) -> None:
        try:
            answer = json.loads(body) if body.strip() else None
        except ValueError:
            self._opaque += len(body)
            return
        self._read(answer)

    def _read(self, answer: Any) -> None:
        if not isinstance(answer, dict):
            return
        usage = _reported(answer.get("usage"))
        if usage is not None:
            # Servers that report usage on every chunk report the running total.
            self._usage = usage
        choices = answer.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict):
                    self._text += _text_size(choice.get("delta") or choice.get("message"))
