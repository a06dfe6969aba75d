"""Capturing what a cell prints: capped text for the result, batches for the live view.

Two limits, because the two audiences differ: the result (what the model and the
transcript keep) holds at most ``limit`` characters, while the live stream (what the
person watches) carries everything up to ``stream_limit``, so a cell that prints
100,000 lines shows them all without bloating the result.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["OutputCapture", "StreamWriter"]

# Larger batches make fewer postMessage hops; 64 KB keeps the live view responsive
# (the page appends a batch in one DOM write).
_BATCH_CHARS = 65536
# Past this the live view stops too: a runaway print loop must not flood the page.
STREAM_LIMIT = 20_000_000


class StreamWriter(io.TextIOBase):
    """A text stream that keeps at most ``limit`` characters and streams batches
    of up to ``stream_limit`` characters."""

    def __init__(
        self,
        name: str,
        *,
        limit: int,
        stream_limit: int = STREAM_LIMIT,
        on_stream: Callable[[str, str], None] | None = None,
        interval: float = 0.05,
        overflow_hint: str = "write the full output to a file",
    ) -> None:
        super().__init__()
        self.name = name
        self._limit = max(0, limit)
        self._stream_room = max(self._limit, stream_limit)
        self._on_stream = on_stream
        self._interval = interval
        self._overflow_hint = overflow_hint
        self._parts: list[str] = []
        self._kept = 0
        self._dropped = 0
        self._batch: list[str] = []
        self._batch_chars = 0
        self._last_flush = time.monotonic()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def truncated(self) -> bool:
        return self._dropped > 0

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self._limit - self._kept
        kept = text if len(text) <= room else text[: max(0, room)]
        self._dropped += len(text) - len(kept)
        if kept:
            self._parts.append(kept)
            self._kept += len(kept)
        if self._stream_room <= 0:
            return len(text)
        live = text if len(text) <= self._stream_room else text[: self._stream_room]
        self._stream_room -= len(live)
        self._batch.append(live)
        self._batch_chars += len(live)
        if self._stream_room <= 0:
            self._batch.append("\n[live output stopped here; the cell goes on]\n")
            self.flush()
        elif (
            self._batch_chars >= _BATCH_CHARS
            or time.monotonic() - self._last_flush >= self._interval
        ):
            self.flush()
        return len(text)

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._batch:
            return
        text = "".join(self._batch)
        self._batch.clear()
        self._batch_chars = 0
        if self._on_stream is None:
            return
        try:
            self._on_stream(self.name, text)
        except Exception:
            # The live view is a nicety; a broken channel must not fail the cell,
            # and the text still arrives in the result.
            self._on_stream = None

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self._dropped:
            text += (
                f"\n[output truncated: {self._dropped:,} more characters not shown; "
                f"print less, or {self._overflow_hint}]"
            )
        return text


class OutputCapture:
    """Swaps ``sys.stdout``/``sys.stderr`` for writers and always puts them back."""

    def __init__(
        self,
        *,
        limit: int,
        stream_limit: int = STREAM_LIMIT,
        on_stream: Callable[[str, str], None] | None,
        interval: float,
        overflow_hint: str,
    ) -> None:
        self.stdout, self.stderr = (
            StreamWriter(
                name,
                limit=limit,
                stream_limit=stream_limit,
                on_stream=on_stream,
                interval=interval,
                overflow_hint=overflow_hint,
            )
            for name in ("stdout", "stderr")
        )
        self._saved: tuple[TextIO, TextIO] | None = None

    @property
    def truncated(self) -> bool:
        return self.stdout.truncated or self.stderr.truncated

    def __enter__(self) -> OutputCapture:
        self._saved = (sys.stdout, sys.stderr)
        sys.stdout = self.stdout
        sys.stderr = self.stderr
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._saved is not None:
            sys.stdout, sys.stderr = self._saved
            self._saved = None
        self.stdout.flush()
        self.stderr.flush()
