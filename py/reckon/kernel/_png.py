"""A figure as PNG bytes, cropped to what it holds, drawn once.

``savefig(bbox_inches="tight")`` draws a figure twice: once without painting, to
measure what it holds, then again, shifted, onto a canvas of the cropped size. In
the sandbox drawing is most of a chart's cost (matplotlib's Python in WebAssembly,
and right after a restore its code is not optimized yet), so a figure is drawn once,
the way savefig draws a box it is given, onto its canvas grown by ``MARGIN`` pixels
on every side (a tick label or a legend past the edge is painted there too); the
tight box is measured on that drawing and cut out of its pixels. The box, with
savefig's padding, is widened to whole pixels and the canvas is moved by a whole,
even number of them, so nothing is shifted by a fraction (nor any text's rounding
flipped): the picture is the one savefig paints for the figure, at most a pixel
larger on each side than its own tight crop. A figure that reaches further out, or
that savefig would draw otherwise (another dpi, a layout engine, changed
``savefig.*`` settings), goes through savefig as before. tests/kernel/test_png.py
checks each way against savefig, and how many times each draws.
"""

from __future__ import annotations

import io
import math
from typing import Any

__all__ = ["DPI", "MARGIN", "figure_png", "tight_pixel_box"]

DPI = 100
MARGIN = 200  # px: even (see above), and two inches at DPI, which floats hold exactly


def figure_png(figure: Any) -> bytes:
    """The figure as PNG at ``DPI``, cropped to its tight box plus savefig's padding."""
    drawn = _drawn_wide(figure)
    if drawn is not None:
        pixels, tight = drawn
        height, width = pixels.shape[:2]
        box = tight_pixel_box(tight, width=width, height=height)
        if box is not None:
            return _png(pixels, box)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return buffer.getvalue()


def tight_pixel_box(tight: Any, *, width: int, height: int) -> tuple[int, int, int, int] | None:
    """A tight box (``figure.get_tightbbox``, inches) plus savefig's padding, in whole
    pixels of a ``width`` x ``height`` canvas (x0, y0, x1, y1; y up, as in matplotlib),
    or None when it reaches past that canvas."""
    import matplotlib as mpl

    pad = mpl.rcParams["savefig.pad_inches"]
    if not isinstance(pad, int | float):
        return None  # "layout": a layout engine's padding (those take savefig's way)
    box = tight.padded(pad)
    x0, y0 = math.floor(box.x0 * DPI), math.floor(box.y0 * DPI)
    x1, y1 = math.ceil(box.x1 * DPI), math.ceil(box.y1 * DPI)
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height or x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def _drawn_wide(figure: Any) -> tuple[Any, Any] | None:
    """The figure drawn as savefig draws a box ``MARGIN`` pixels wider on each side
    than its canvas: those pixels and the tight box measured on that drawing
    (inches from the wide canvas's corner). None, with nothing drawn, when savefig
    would draw this figure some other way."""
    import matplotlib as mpl
    import numpy as np
    from matplotlib import _tight_bbox
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.layout_engine import PlaceHolderLayoutEngine
    from matplotlib.transforms import Bbox

    canvas = figure.canvas  # Any: matplotlib's private saving flag is set below
    rc = mpl.rcParams
    engine = figure.get_layout_engine()
    if (
        not isinstance(figure.canvas, FigureCanvasAgg)
        or figure.dpi != DPI
        # tight_layout() leaves a placeholder behind, which savefig does not run either
        or not (engine is None or isinstance(engine, PlaceHolderLayoutEngine))
        or getattr(canvas, "device_pixel_ratio", 1) != 1
        or rc["savefig.facecolor"] != "auto"
        or rc["savefig.edgecolor"] != "auto"
        or rc["savefig.transparent"]
    ):
        return None
    margin = MARGIN / DPI
    width, height = figure.get_size_inches()
    # A hair more at the top right: the canvas's size is truncated to whole pixels.
    wide = Bbox.from_extents(-margin, -margin, width + margin + 1e-9, height + margin + 1e-9)
    draw: Any = FigureCanvasAgg.draw  # as savefig's PNG writer calls it
    # What savefig does with a box it is given (matplotlib 3.8's print_figure): the
    # figure moved and its canvas grown, and animated artists painted too.
    adjust: Any = _tight_bbox.adjust_bbox
    restore = adjust(figure, wide, canvas.fixed_dpi)
    saving = canvas._is_saving
    canvas._is_saving = True
    try:
        draw(canvas)
        renderer = canvas.get_renderer()
        tight = figure.get_tightbbox(renderer)
        pixels = np.asarray(renderer.buffer_rgba())  # kept by the renderer the canvas holds
    finally:
        canvas._is_saving = saving
        restore()
    return pixels, tight


def _png(pixels: Any, box: tuple[int, int, int, int]) -> bytes:
    import numpy as np
    from matplotlib import image

    x0, y0, x1, y1 = box
    height = pixels.shape[0]
    buffer = io.BytesIO()
    # What savefig's PNG writer does with its canvas, metadata included.
    cropped = np.ascontiguousarray(pixels[height - y1 : height - y0, x0:x1])
    image.imsave(buffer, cropped, format="png", origin="upper", dpi=DPI)
    return buffer.getvalue()
