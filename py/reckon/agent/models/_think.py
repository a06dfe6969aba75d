"""A reasoning model's thinking, kept apart from what it says.

Servers hand reasoning back in one of two ways: a ``reasoning_content`` (or
``reasoning``) field beside ``content`` (vLLM, llama.cpp, DeepSeek, Ollama), or
``<think>…</think>`` inside ``content`` (Qwen3, QwQ and others served raw). Thinking is
shown to the person as thinking; it is never run and never taken as the answer.
"""

from __future__ import annotations

__all__ = ["ThinkSplitter"]

_OPEN, _CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Splits streamed content into thinking and visible text, tags split anywhere.

    A reply that starts inside a think block without its opening tag (some
    templates put ``<think>`` in the prompt) is recognised by a ``</think>`` that
    comes before any ``<think>``: everything before it was thinking.
    """

    def __init__(self) -> None:
        self.thinking: list[str] = []
        self.visible: list[str] = []
        self._inside = False
        self._opened = False
        self._pending = ""

    def feed(self, piece: str) -> str:
        """Take a piece of content; return the visible text it completes."""
        text = self._pending + piece
        self._pending = ""
        shown: list[str] = []
        while text:
            if self._inside:
                at = text.find(_CLOSE)
                if at == -1:
                    keep = _partial_tag(text, _CLOSE)
                    self.thinking.append(text[: len(text) - keep])
                    self._pending = text[len(text) - keep :]
                    break
                self.thinking.append(text[:at])
                self._inside = False
                text = text[at + len(_CLOSE) :]
                continue
            opening, stray = text.find(_OPEN), -1 if self._opened else text.find(_CLOSE)
            if stray != -1 and (opening == -1 or stray < opening):
                self.thinking.append("".join(self.visible) + text[:stray])
                self.visible.clear()
                shown.clear()
                self._opened = True
                text = text[stray + len(_CLOSE) :]
                continue
            if opening == -1:
                keep = max(
                    _partial_tag(text, _OPEN), 0 if self._opened else _partial_tag(text, _CLOSE)
                )
                self._show(text[: len(text) - keep], shown)
                self._pending = text[len(text) - keep :]
                break
            self._show(text[:opening], shown)
            self._inside = self._opened = True
            text = text[opening + len(_OPEN) :]
        return "".join(shown)

    def close(self) -> str:
        """End of the reply: a half tag left over is text after all."""
        rest, self._pending = self._pending, ""
        if self._inside:
            self.thinking.append(rest)
            return ""
        shown: list[str] = []
        self._show(rest, shown)
        return "".join(shown)

    def _show(self, body: str, shown: list[str]) -> None:
        if body:
            self.visible.append(body)
            shown.append(body)


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could begin ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
