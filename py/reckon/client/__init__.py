"""Reckon from Python (CPython only): headless sessions.

``Session`` starts the relay in a thread and headless Chromium, and drives the
page's ``window.reckon`` API, so everything runs through the real product path.
Playwright is an optional dependency (``scripts/run`` installs it, or
``pip install -e '.[headless]'`` in a checkout),
imported only when a session starts.

``reproduce_notebook`` (from ``reckon.reproduce``) is here too, where the README has
always documented it. The evaluation harness, ``reckon.eval``, is built on this
package and never imported by it.
"""

from __future__ import annotations

from reckon.client._session import Runtime, Session
from reckon.reproduce import reproduce_notebook

__all__ = ["Runtime", "Session", "reproduce_notebook"]
