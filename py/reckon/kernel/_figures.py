"""Rendering the figures a cell drew, and describing them for a model that cannot see."""

from __future__ import annotations

import base64
import os
import struct
import sys
from typing import Any

from ._png import DPI, MARGIN, figure_png

__all__ = ["BACKEND", "FigureCollector", "prepare_matplotlib", "show_figures"]

BACKEND = "module://reckon.kernel._mplbackend"
MAX_FIGURES = 20
# What a run's figures may weigh: every figure goes to the page, into the chat, the
# model's context and the saved conversation (the third outside attack had 84 MB of
# them accepted and saved with one ask). The page holds results to the same limit.
MAX_FIGURE_BYTES = 8 * 1024 * 1024  # PNG bytes of one run's figures together
# A figure this large in pixels (with the drawing margin) is not drawn at all: its
# RGBA canvas alone would be hundreds of MB, and no chart needs it.
MAX_FIGURE_PIXELS = 40_000_000
_LISTED_CATEGORIES = 15

_collector: FigureCollector | None = None


def prepare_matplotlib() -> None:
    """Choose our backend before the user imports matplotlib (or switch if they did)."""
    os.environ["MPLBACKEND"] = BACKEND
    if "matplotlib" in sys.modules:
        import matplotlib

        matplotlib.use(BACKEND, force=True)


def show_figures() -> None:
    """``plt.show()`` during a run: render and close what is open, like a notebook."""
    if _collector is not None:
        _collector.collect()


class FigureCollector:
    """The figures of one run, in the order they were shown."""

    def __init__(self) -> None:
        self.figures: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.skipped = 0
        self.png_bytes = 0
        self.seen = 0  # figures looked at, drawn or not: their numbers in messages

    def __enter__(self) -> FigureCollector:
        global _collector
        _collector = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _collector
        _collector = None

    def collect(self) -> None:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        numbers = pyplot.get_fignums()
        if not numbers:
            return  # close("all") would still run a garbage collection: most cells draw nothing
        try:
            for number in numbers:
                if len(self.figures) >= MAX_FIGURES:
                    self.skipped += 1
                    continue
                figure = pyplot.figure(number)
                self.seen += 1
                index = self.seen
                try:
                    self._add(figure, index)
                except Exception as exc:
                    # The user's data broke drawing; say so instead of failing the run.
                    self.problems.append(
                        f"Figure {index} could not be drawn: {type(exc).__name__}: {exc}"
                    )
        finally:
            pyplot.close("all")

    def _add(self, figure: Any, index: int) -> None:
        """Draw one figure, within the run's pixel and byte limits (or say why not)."""
        width, height = (float(v) * DPI for v in figure.get_size_inches())
        if (width + 2 * MARGIN) * (height + 2 * MARGIN) > MAX_FIGURE_PIXELS:
            self.problems.append(
                f"Figure {index} not drawn: {width:.0f}x{height:.0f} px is far larger than "
                "a chart needs; use a smaller figsize (at most about 6000x6000 px)"
            )
            return
        drawn = render_figure(figure, index=index)
        size = len(drawn["png"]) * 3 // 4
        if self.png_bytes + size > MAX_FIGURE_BYTES:
            self.problems.append(
                f"Figure {index} not shown: this run's figures would pass "
                f"{MAX_FIGURE_BYTES // (1024 * 1024)} MB of PNG (this one is "
                f"{size / (1024 * 1024):.1f} MB); draw fewer or smaller figures, or save "
                "them to files under /output"
            )
            return
        self.png_bytes += size
        self.figures.append(drawn)


def render_figure(figure: Any, *, index: int) -> dict[str, Any]:
    png = figure_png(figure)
    width, height = struct.unpack(">II", png[16:24])
    return {
        "png": base64.b64encode(png).decode("ascii"),
        "width": width,
        "height": height,
        "description": describe_figure(figure, index=index),
    }


def describe_figure(figure: Any, *, index: int) -> str:
    parts = [f"Figure {index}"]
    suptitle = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
    if suptitle:
        parts[0] += f" {suptitle!r}"
    axes = [ax for ax in figure.axes if getattr(ax, "_colorbar", None) is None]
    for number, ax in enumerate(axes, start=1):
        prefix = f"axes {number}: " if len(axes) > 1 else ""
        parts.append(prefix + _describe_axes(ax))
    if not axes:
        parts.append("empty")
    return "; ".join(parts)


def _describe_axes(ax: Any) -> str:
    bits: list[str] = []
    if ax.get_title():
        bits.append(f"title {ax.get_title()!r}")
    labels = []
    if ax.get_xlabel():
        labels.append(f"x: {ax.get_xlabel()}")
    if ax.get_ylabel():
        labels.append(f"y: {ax.get_ylabel()}")
    if labels:
        bits.append(", ".join(labels))
    series = _describe_series(ax)
    bits.extend(series)
    if not series:
        bits.append("no data")
    return "; ".join(bits)


def _describe_series(ax: Any) -> list[str]:
    import numpy as np

    series: list[str] = []
    for line in ax.get_lines():
        x = _floats(line.get_xdata(orig=False))
        y = _floats(line.get_ydata(orig=False))
        text = "line" + _label(line.get_label())
        text += f" ({len(y)} points"
        if len(x):
            text += f", x {_span(ax.xaxis, x)}"
        if len(y):
            text += f", y {_span(ax.yaxis, y)}"
        series.append(text + ")")
    for container in ax.containers:
        if type(container).__name__ == "BarContainer":
            series.append(_describe_bars(ax, container))
    for collection in ax.collections:
        offsets = collection.get_offsets()
        if type(collection).__name__ == "PathCollection" and len(offsets):
            points = np.asarray(offsets, dtype=float)
            text = "scatter" + _label(collection.get_label())
            text += f" ({len(points)} points, x {_span(ax.xaxis, points[:, 0])}"
            text += f", y {_span(ax.yaxis, points[:, 1])})"
            series.append(text)
    for image in ax.images:
        shape = getattr(image.get_array(), "shape", ())
        series.append(f"image {'x'.join(str(n) for n in shape)}")
    wedges = [p for p in ax.patches if type(p).__name__ == "Wedge"]
    if wedges:
        series.append(f"pie with {len(wedges)} wedges")
    return series


def _describe_bars(ax: Any, container: Any) -> str:
    patches = list(container.patches)
    horizontal = getattr(container, "orientation", "vertical") == "horizontal"
    if horizontal:
        starts = [p.get_y() for p in patches]
        sizes = [p.get_height() for p in patches]
        values = [p.get_width() for p in patches]
        axis = ax.yaxis
    else:
        starts = [p.get_x() for p in patches]
        sizes = [p.get_width() for p in patches]
        values = [p.get_height() for p in patches]
        axis = ax.xaxis
    label = _label(container.get_label())
    value_span = _span(None, _floats(values)) if values else "none"
    contiguous = len(patches) > 1 and all(
        abs(starts[i] + sizes[i] - starts[i + 1]) <= 1e-9 * max(1.0, abs(starts[i + 1]))
        for i in range(len(patches) - 1)
    )
    if contiguous:
        edges = _floats([*starts, starts[-1] + sizes[-1]])
        return (
            f"histogram{label} ({len(patches)} bins over {_span(axis, edges)}, counts {value_span})"
        )
    text = f"{'horizontal ' if horizontal else ''}bars{label} ({len(patches)} bars"
    names = _categories(axis, [s + w / 2 for s, w in zip(starts, sizes, strict=True)])
    if names and len(names) <= _LISTED_CATEGORIES:
        text += ": " + ", ".join(names)
    return text + f"; values {value_span})"


def _categories(axis: Any, centers: list[float]) -> list[str]:
    ticks = {
        round(float(t), 6): label.get_text()
        for t, label in zip(axis.get_ticklocs(), axis.get_ticklabels(), strict=False)
    }
    names = [ticks.get(round(c, 6), "") for c in centers]
    return names if all(names) else []


def _label(label: Any) -> str:
    text = str(label) if label is not None else ""
    # Matplotlib names unlabelled artists "_child0", "_nolegend_" and so on.
    return "" if not text or text.startswith("_") else f" {text!r}"


def _floats(values: Any) -> Any:
    import numpy as np

    try:
        array = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return np.asarray([], dtype=float)
    return array[np.isfinite(array)]


def _span(axis: Any, values: Any) -> str:
    if not len(values):
        return "none"
    low, high = float(values.min()), float(values.max())
    return f"{_number(axis, low)}..{_number(axis, high)}"


def _number(axis: Any, value: float) -> str:
    if axis is not None and "Date" in type(axis.get_major_formatter()).__name__:
        from matplotlib.dates import num2date

        try:
            return str(num2date(value).strftime("%Y-%m-%d"))  # type: ignore[no-untyped-call]
        except (ValueError, OverflowError):
            pass
    return f"{value:.4g}"
