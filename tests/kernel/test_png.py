"""A figure drawn once and cropped (reckon.kernel._png) is the picture savefig paints.

Each figure is built twice by the same code: one copy goes through our renderer,
the other through matplotlib's own savefig, so neither sees the other's draw.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.transforms import Bbox
from PIL import Image

from reckon.kernel._png import DPI, MARGIN, figure_png, tight_pixel_box


def line() -> None:
    plt.plot([1, 2, 3, 4], [3, 1, 4, 1], label="sales")
    plt.title("Sales by month")
    plt.xlabel("month")
    plt.ylabel("units")
    plt.legend()


def bars() -> None:
    plt.bar(["North", "South", "East", "West"], [3, 7, 2, 5], color="tab:orange")
    plt.xticks(rotation=45)


def histogram() -> None:
    plt.hist(np.random.default_rng(1).normal(size=500), bins=20)
    plt.suptitle("Spread")


def scatter_colorbar() -> None:
    rng = np.random.default_rng(2)
    points = plt.scatter(rng.random(50), rng.random(50), c=rng.random(50), s=40)
    plt.colorbar(points, label="score")


def pie() -> None:
    plt.pie([30, 20, 50], labels=["a", "b", "c"], autopct="%1.0f%%")


def image_grid() -> None:
    figure, axes = plt.subplots(2, 2, figsize=(6, 5))
    for n, ax in enumerate(axes.flat):
        ax.imshow(np.arange(64).reshape(8, 8) ** (n + 1), cmap="viridis")
        ax.set_title(f"panel {n}")
    figure.suptitle("Four panels")
    figure.tight_layout()


def dates_log_twin() -> None:
    days = pd.date_range("2024-01-01", periods=40, freq="D")
    ax = plt.gca()
    ax.semilogy(days, np.linspace(1, 1000, 40))
    ax.grid(True, which="both")
    ax.twinx().plot(days, np.sin(np.arange(40)), color="red")
    plt.gcf().autofmt_xdate()


def annotated_and_animated() -> None:
    plt.plot([0, 1], [0, 1])
    plt.annotate("peak", xy=(1, 1), xytext=(0.3, 0.8), arrowprops={"arrowstyle": "->"})
    (moving,) = plt.plot([0, 1], [1, 0], color="green")
    moving.set_animated(True)  # savefig paints animated artists; a plain draw skips them


def pandas_plot() -> None:
    frame = pd.DataFrame({"month": ["Jan", "Feb", "Mar"], "a": [1, 3, 2], "b": [2, 2, 4]})
    frame.plot(x="month", title="By month")


def tinted_background() -> None:
    # The padding reaches past the canvas at the bottom (the x label sits near the
    # edge): savefig paints it with the figure's colour, and so do we.
    plt.figure(facecolor=(0.9, 0.85, 0.8))  # 229.5, 216.75, 204 in bytes
    plt.plot([1, 2, 3], [2, 1, 3])
    plt.xlabel("a label near the edge")


def odd_size() -> None:
    # (5.2 + 4) * 100 is 919.9999999999999 in floats: its wide canvas, truncated,
    # would be a pixel short
    plt.figure(figsize=(5.2, 4.2))
    plt.scatter([1, 2, 3], [3, 1, 2])


def legend_outside() -> None:
    plt.plot([1, 2, 3], label="a legend entry")
    plt.legend(bbox_to_anchor=(1.02, 1), loc="upper left")


def labels_past_the_edge() -> None:
    frame = pd.DataFrame({"month": ["January", "February", "March"], "a": [1, 3, 2]})
    frame.plot(x="month", kind="bar").set_xlabel("month of 2024")


def translucent_background() -> None:
    plt.figure(facecolor=(1, 1, 1, 0.5))
    plt.plot([1, 2, 3])
    plt.xlabel("month")


DRAWN_ONCE = [
    line, bars, histogram, scatter_colorbar, pie, image_grid, dates_log_twin,
    annotated_and_animated, pandas_plot, tinted_background, odd_size, legend_outside,
    labels_past_the_edge, translucent_background,
]  # fmt: skip
INK_PAST_THE_EDGE = [legend_outside, labels_past_the_edge]


def legend_far_out() -> None:
    plt.plot([1, 2, 3], label="a legend far to the right")
    plt.legend(bbox_to_anchor=(1.6, 1), loc="upper left")


def constrained() -> None:
    _, axes = plt.subplots(1, 2, layout="constrained")
    axes[0].plot([1, 2])
    axes[1].plot([2, 1])


def high_dpi() -> None:
    plt.figure(dpi=150)
    plt.plot([1, 2, 3])


def empty() -> None:
    plt.figure()  # no axes: its tight box is the whole canvas, padded past it


SAVEFIG = [legend_far_out, empty, constrained, high_dpi]


def built(draw: Callable[[], None]) -> Any:
    plt.close("all")
    draw()
    figure = plt.gcf()
    assert isinstance(figure.canvas, FigureCanvasAgg)
    return figure


def drawn(figure: Any) -> list[str]:
    """Counts the figure's draws from now on (savefig's measuring pass is one)."""
    draws: list[str] = []
    figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event.name))
    return draws


def pixels(png: bytes) -> Any:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def measured_box(draw: Callable[[], None]) -> tuple[int, int, int, int]:
    """Where the tight box lies on the wide canvas, measured as savefig measures it:
    on a fresh copy, drawn on its own canvas (the wide canvas moves it MARGIN px)."""
    figure = built(draw)
    figure.canvas.draw()
    tight = figure.get_tightbbox(figure.canvas.get_renderer())
    width, height = figure.canvas.get_width_height()
    box = tight_pixel_box(tight, width=width + 2 * MARGIN, height=height + 2 * MARGIN)
    if box is None:
        # on its own canvas the box may start below zero: move it first
        moved = Bbox.from_extents(*(tight.extents + MARGIN / DPI))
        box = tight_pixel_box(moved, width=width + 2 * MARGIN, height=height + 2 * MARGIN)
        assert box is not None
        return box
    x0, y0, x1, y1 = box
    return x0 + MARGIN, y0 + MARGIN, x1 + MARGIN, y1 + MARGIN


@pytest.mark.parametrize("draw", DRAWN_ONCE, ids=lambda f: f.__name__)
def test_a_figure_drawn_once_is_what_savefig_paints(draw: Callable[[], None]) -> None:
    figure = built(draw)
    draws = drawn(figure)
    got = pixels(figure_png(figure))
    assert len(draws) == 1
    x0, y0, x1, y1 = measured_box(draw)
    assert got.shape == (y1 - y0, x1 - x0, 4)

    # savefig, painting a fresh copy for the same wide box, pixel for pixel.
    width, height = figure.get_size_inches()
    margin = MARGIN / DPI
    wide = Bbox.from_extents(-margin, -margin, width + margin + 1e-9, height + margin + 1e-9)
    painted = io.BytesIO()
    built(draw).savefig(painted, format="rgba", dpi=DPI, bbox_inches=wide)
    canvas_width, canvas_height = figure.canvas.get_width_height()
    tall, broad = canvas_height + 2 * MARGIN, canvas_width + 2 * MARGIN
    canvas = np.frombuffer(painted.getvalue(), dtype=np.uint8).reshape(tall, broad, 4)
    assert np.array_equal(got, canvas[tall - y1 : tall - y0, x0:x1])

    # And where it overlaps the figure's own canvas, the very pixels savefig paints
    # there: moved by whole pixels, no text landed a pixel off.
    full = io.BytesIO()
    built(draw).savefig(full, format="rgba", dpi=DPI)
    own = np.frombuffer(full.getvalue(), dtype=np.uint8).reshape(canvas_height, canvas_width, 4)
    left, right = max(x0, MARGIN), min(x1, MARGIN + canvas_width)
    bottom, top = max(y0, MARGIN), min(y1, MARGIN + canvas_height)
    assert np.array_equal(
        got[y1 - top : y1 - bottom, left - x0 : right - x0],
        own[canvas_height - (top - MARGIN) : canvas_height - (bottom - MARGIN),
            left - MARGIN : right - MARGIN],
    )  # fmt: skip
    # What lies past the figure's own canvas: padding in the figure's colour, and the
    # ink of a label or a legend that reaches out there.
    outside = np.ones(got.shape[:2], dtype=bool)
    outside[y1 - top : y1 - bottom, left - x0 : right - x0] = False
    ink = (got[outside] != got[0, 0]).any(axis=1)
    assert ink.any() == (draw in INK_PAST_THE_EDGE)

    # savefig's own tight crop is less than a pixel smaller on each side.
    tight = io.BytesIO()
    built(draw).savefig(tight, format="png", dpi=DPI, bbox_inches="tight")
    theirs = pixels(tight.getvalue())
    assert 0 <= got.shape[1] - theirs.shape[1] <= 2
    assert 0 <= got.shape[0] - theirs.shape[0] <= 2
    if draw is tinted_background:  # its padding is painted in its own colour
        assert got[-1, 0].tolist() == theirs[-1, 0].tolist() == [230, 217, 204, 255]


@pytest.mark.parametrize("draw", DRAWN_ONCE, ids=lambda f: f.__name__)
def test_the_png_carries_what_savefig_writes_beside_the_pixels(
    draw: Callable[[], None],
) -> None:
    ours = Image.open(io.BytesIO(figure_png(built(draw))))
    tight = io.BytesIO()
    built(draw).savefig(tight, format="png", dpi=DPI, bbox_inches="tight")
    theirs = Image.open(io.BytesIO(tight.getvalue()))
    assert ours.mode == theirs.mode
    assert ours.info == theirs.info  # Software, dpi


@pytest.mark.parametrize("draw", SAVEFIG, ids=lambda f: f.__name__)
def test_other_figures_go_through_savefig_unchanged(draw: Callable[[], None]) -> None:
    reference = built(draw)
    theirs = drawn(reference)
    tight = io.BytesIO()
    reference.savefig(tight, format="png", dpi=DPI, bbox_inches="tight")
    figure = built(draw)
    ours = drawn(figure)
    assert figure_png(figure) == tight.getvalue()
    # One draw more than savefig for a figure that reaches past the wide canvas.
    assert len(theirs) == 2 and len(ours) == (3 if draw in (legend_far_out, empty) else 2)


def test_changed_savefig_settings_go_through_savefig() -> None:
    with plt.rc_context({"savefig.facecolor": "black"}):
        figure = built(line)
        tight = io.BytesIO()
        built(line).savefig(tight, format="png", dpi=DPI, bbox_inches="tight")
        assert figure_png(figure) == tight.getvalue()
        assert pixels(tight.getvalue())[0, 0].tolist() == [0, 0, 0, 255]


def test_a_figure_that_cannot_be_drawn_raises_and_is_left_as_it_was() -> None:
    plt.close("all")
    plt.plot([1, 2])
    plt.title(r"$\frac{$")  # mathtext that does not parse: drawing raises
    figure = plt.gcf()
    before = figure.bbox.bounds
    with pytest.raises(ValueError, match="frac"):
        figure_png(figure)
    assert figure.bbox.bounds == before
    assert figure.patch.get_bbox().bounds == (0, 0, 1, 1)
    assert not figure.canvas.is_saving()
