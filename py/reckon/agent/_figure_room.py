"""How many figures one answer keeps.

The sandbox holds each run to 8 MB of PNG, but an answer may run a cell per model call:
twelve such runs kept 96 MB in the saved conversation (#32 A1). So an answer keeps the
figures of its runs up to ``ANSWER_FIGURE_BYTES`` together; those past it are dropped
from the result, with a line in its stderr that says so (the model and the page read it).
"""

from __future__ import annotations

from dataclasses import dataclass

from reckon.agent._types import JSONDict

__all__ = ["ANSWER_FIGURE_BYTES", "FigureRoom", "figure_chars"]

ANSWER_FIGURE_BYTES = 16 * 1024 * 1024


def figure_chars(figure: object) -> int:
    """A figure's PNG as base64 characters: its ``png``, or in the browser, where the
    page lends the agent ``{ref, chars}`` in its place (PROTOCOL.md §4), its ``chars``."""
    if not isinstance(figure, dict):
        return 0
    png, chars = figure.get("png"), figure.get("chars")
    if isinstance(png, str):
        return len(png)
    return chars if isinstance(chars, int) and not isinstance(chars, bool) and chars > 0 else 0


@dataclass
class FigureRoom:
    """The PNG bytes (as base64 text) one answer's results have kept so far."""

    used: int = 0
    limit: int = ANSWER_FIGURE_BYTES * 4 // 3

    def keep(self, result: JSONDict) -> JSONDict:
        """``result`` with the figures that still fit, and a note for those that did not."""
        figures = result.get("figures")
        if not isinstance(figures, list) or not figures:
            return result
        kept: list[object] = []
        for figure in figures:
            size = figure_chars(figure)
            if self.used + size <= self.limit:
                self.used += size
                kept.append(figure)
        dropped = len(figures) - len(kept)
        if not dropped:
            return result
        note = (
            f"[{dropped} figure{'s' if dropped != 1 else ''} not kept: one answer keeps at "
            f"most {ANSWER_FIGURE_BYTES // (1024 * 1024)} MB of figures; draw fewer or "
            "smaller ones, or save them to files under /output]\n"
        )
        return {**result, "figures": kept, "stderr": f"{result.get('stderr') or ''}{note}"}
