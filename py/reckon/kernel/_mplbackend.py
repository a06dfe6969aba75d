"""A matplotlib backend for the sandbox: Agg drawing, and a ``show()`` that hands
the open figures to the running cell, the way a notebook's inline backend does.

Selected with ``MPLBACKEND=module://reckon.kernel._mplbackend``; it works the
same on CPython and in Pyodide because it never touches a display.
"""

from __future__ import annotations

from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg

__all__ = ["FigureCanvas", "show"]

FigureCanvas = FigureCanvasAgg


def show(*args: Any, **kwargs: Any) -> None:
    from reckon.kernel import _figures

    _figures.show_figures()
