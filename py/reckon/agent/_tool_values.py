"""What the page's host tools returned, as user data for schema privacy.

A tool's result is the person's data as much as a file's values: under schema privacy
its strings and numbers are hidden from the model like an upload's. The page hands the
agent the JSON texts a run's tool calls returned (``toolValues`` beside its run result,
PROTOCOL.md §3, *Host tools*); the executor takes them out of the result at once, so they
are never stored or shown, and tells whoever listens (the ask under way)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from reckon.agent.privacy._preparing import HiddenValues
from reckon.agent.privacy._redactor import Redactor

__all__ = ["ToolValues", "values_of"]

Listener = Callable[[list[str], list[float]], None]

_MAX_VALUES = 1_000_000  # leaves read from one run's results


def values_of(texts: list[str]) -> tuple[list[str], list[float]]:
    """The strings and numbers of these JSON texts (values, not the objects' keys)."""
    strings: list[str] = []
    numbers: list[float] = []
    stack: list[Any] = []
    for text in texts:
        try:
            stack.append(json.loads(text))
        except ValueError:
            continue
    while stack and len(strings) + len(numbers) < _MAX_VALUES:
        value = stack.pop()
        if isinstance(value, str):
            if value.strip():
                strings.append(value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float):
            if math.isfinite(value):
                numbers.append(float(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return strings, numbers


class ToolValues:
    """The executor's end: results arrive here; the ask under privacy listens."""

    def __init__(self) -> None:
        self.listener: Listener | None = None

    def arrived(self, texts: Any) -> None:
        if self.listener is None or not isinstance(texts, list):
            return
        strings, numbers = values_of([t for t in texts if isinstance(t, str)])
        if strings or numbers:
            self.listener(strings, numbers)

    def hide(self, redactor: Redactor | None, hidden: HiddenValues) -> None:
        """Under schema privacy (a ``redactor``), what the page's tools return is hidden
        like a file's values, from the call on and for the rest of the session
        (``hidden``); without it, nothing is listened to."""
        if redactor is None:
            self.listener = None
            return

        def hide(strings: list[str], numbers: list[float]) -> None:
            hidden.strings.update(strings)
            hidden.numbers.update(numbers)
            redactor.extend(strings, numbers)

        self.listener = hide
