"""Reckon from Python (CPython only): headless sessions.

``Session`` starts the relay in a thread and headless Chromium, and drives the
page's ``window.reckon`` API, so everything runs through the real product path.
Playwright is an optional dependency (``scripts/run`` installs it, or
``pip install -e '.[headless]'`` in a checkout),
imported only when a session starts.

The evaluation harness that uses it is ``reckon.eval``; its ``reproduce_notebook``
is also reachable here, where the README has always documented it, imported on
first use so that this package never imports the harness that imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reckon.client._session import Runtime, Session

if TYPE_CHECKING:
    from reckon.eval._reproduce import reproduce_notebook

__all__ = ["Runtime", "Session", "reproduce_notebook"]


def __getattr__(name: str) -> Any:
    if name == "reproduce_notebook":
        from reckon.eval._reproduce import reproduce_notebook

        return reproduce_notebook
    raise AttributeError(f"module 'reckon.client' has no attribute {name!r}")
