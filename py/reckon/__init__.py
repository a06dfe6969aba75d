"""Reckon: a code interpreter that runs in the browser.

The package has three parts that never import each other:

- ``reckon.kernel`` runs inside the sandbox worker (Pyodide + the scientific stack);
- ``reckon.agent`` runs inside the agent worker (a small Pyodide) and drives the model;
- ``reckon.server`` is the relay (CPython only): serves the site, forwards model calls.

``reckon.client`` (CPython only) drives all three from Python: ``reckon.Session``
runs the product headless. It is imported on first use, so importing ``reckon``
inside Pyodide never reaches for the relay's dependencies or Playwright.
``reckon.reproduce`` (CPython only) re-runs an exported notebook and compares its
outputs; ``reckon.eval`` (CPython only) is the evaluation harness on top of both, and
``reckon._cli`` the ``reckon`` command over the relay and the harness.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reckon import _exceptions
from reckon._exceptions import *  # noqa: F403

if TYPE_CHECKING:
    from reckon.client import Session

__version__ = "0.1.0"

# Every error is the package's: they are listed once, in _exceptions.
__all__ = [*_exceptions.__all__, "Session", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Session":
        from reckon.client import Session

        return Session
    raise AttributeError(f"module 'reckon' has no attribute {name!r}")
