"""How a trailing expression's value is shown: ``repr`` text and, for tables, HTML."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["describe_value"]

TEXT_LIMIT = 20_000
HTML_LIMIT = 200_000


def describe_value(value: Any) -> dict[str, Any] | None:
    """The ``result`` dict of a run for ``value``; ``None`` shows nothing."""
    if value is None:
        return None
    result: dict[str, Any] = {"type": type(value).__name__, "text": _cap(_text(value))}
    html = _html(value)
    if html is not None:
        if len(html) > HTML_LIMIT:
            html = (
                f"<p>[HTML view left out: {len(html):,} characters is too large; "
                "see the text view, or show fewer rows]</p>"
            )
        result["html"] = html
    return result


def _text(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:
        # A user's __repr__ may be broken; the value itself is still worth naming.
        return f"<{type(value).__name__} object; repr() failed: {type(exc).__name__}: {exc}>"


def _cap(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    more = len(text) - TEXT_LIMIT
    return text[:TEXT_LIMIT] + f"\n[… {more:,} more characters not shown]"


def _html(value: Any) -> str | None:
    pandas = sys.modules.get("pandas")
    try:
        if pandas is not None and isinstance(value, pandas.Series):
            html = value.to_frame()._repr_html_()
        else:
            render = getattr(type(value), "_repr_html_", None)
            if render is None or not callable(render):
                return None
            html = render(value)
    except Exception:
        return None
    return html if isinstance(html, str) else None
