"""Reckon from Python (CPython only): headless sessions and the evaluation harness.

``Session`` starts the relay in a thread and headless Chromium, and drives the
page's ``window.reckon`` API, so everything runs through the real product path.
Playwright is an optional dependency (``scripts/run`` installs it, or
``pip install -e '.[headless]'`` in a checkout),
imported only when a session starts.
"""

from __future__ import annotations

from reckon.client._reproduce import reproduce_notebook
from reckon.client._session import Runtime, Session

__all__ = ["Runtime", "Session", "reproduce_notebook"]
