"""The relay tools' part of ``GET /metrics``: calls by tool and outcome, and seconds.

A tool's label is a name from the relay's own config, never what a request named: a call
to a name the relay does not have counts under `UNKNOWN`, which no configured tool can
be called (a tool's name is a Python identifier). Every configured tool is listed from
the start, at zero, so a scraper's rates see a tool before its first call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

__all__ = ["OUTCOMES", "UNKNOWN", "ToolMetrics"]

# ok: the endpoint's answer went back; error: the endpoint failed, or answered too much
# or not as declared; refused: the relay would not call it (unknown name, bad arguments,
# a limit); timeout: the tool's own time limit; cancelled: the browser went away first.
OUTCOMES = ("ok", "error", "refused", "timeout", "cancelled")
UNKNOWN = "(unknown)"


class ToolMetrics:
    """Counters for `POST /api/tools/call`, per configured tool."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        self.calls: Counter[tuple[str, str]] = Counter(
            {(name, outcome): 0 for name in self.names for outcome in OUTCOMES}
        )
        self.seconds: dict[str, float] = dict.fromkeys(self.names, 0.0)

    def call(self, name: str | None, outcome: str, seconds: float = 0.0) -> None:
        """One call the route took: `seconds` spent on its endpoint (0 if never called)."""
        assert outcome in OUTCOMES, outcome
        label = name if name in self.names else UNKNOWN
        self.calls[(label, outcome)] += 1
        if label != UNKNOWN:
            self.seconds[label] += seconds

    def lines(self) -> list[str]:
        out = [
            "# HELP reckon_tool_calls_total Relay tool calls (POST /api/tools/call), by tool "
            "and outcome.",
            "# TYPE reckon_tool_calls_total counter",
        ]
        for (name, outcome), n in sorted(self.calls.items()):
            out.append(f'reckon_tool_calls_total{{tool="{name}",outcome="{outcome}"}} {n}')
        out += [
            "# HELP reckon_tool_seconds_total Seconds relay tools' endpoints took, by tool.",
            "# TYPE reckon_tool_seconds_total counter",
        ]
        for name, seconds in sorted(self.seconds.items()):
            out.append(f'reckon_tool_seconds_total{{tool="{name}"}} {seconds:.6f}')
        return out
