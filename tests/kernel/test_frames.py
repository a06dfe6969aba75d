"""The traceback walk the hints share (reckon.kernel._frames): which cell frame, which
locals and in which order. The hint tests go through a session, where every cell runs
in one namespace and pandas' frames hold the same table under several names, so
these options do not change what a hint says there."""

from __future__ import annotations

from types import TracebackType
from typing import Any

import pandas as pd

from reckon.kernel._frames import cell_frame, frame_locals

CALLS = "def inner(s):\n    raise ValueError(s)\n\ndef outer(s):\n    t = s + '!'\n    inner(t)\n"


def _failed(*cells: str) -> tuple[TracebackType | None, dict[str, Any]]:
    """The traceback of the first of ``cells`` to fail, each run as the kernel runs a
    cell (its own file name, one namespace), and that namespace."""
    namespace: dict[str, Any] = {"pd": pd}
    for number, code in enumerate(cells, start=1):
        try:
            exec(compile(code, f"<cell-{number}>", "exec"), namespace)
        except Exception as exc:
            return exc.__traceback__, namespace
    raise AssertionError("no cell failed")


def _said(value: Any) -> bool:
    """The text the cells' calls hold (this file's own frame holds the cells' source)."""
    return isinstance(value, str) and value.startswith("a")


def test_the_cell_frame_is_the_innermost_unless_asked_otherwise() -> None:
    tb, namespace = _failed(CALLS, "x = 1\nouter('a')")
    assert cell_frame(tb) == ("<cell-1>", 2, namespace)
    assert cell_frame(tb, innermost=False) == ("<cell-2>", 2, namespace)


def test_a_traceback_without_a_cell_has_no_cell_frame() -> None:
    try:
        {}["missing"]
    except KeyError as exc:
        assert cell_frame(exc.__traceback__) == ("", 0, {})


def test_locals_come_outermost_first_and_by_name_when_named() -> None:
    tb, _ = _failed(CALLS, "outer('a')")
    assert frame_locals(tb, _said) == ["a", "a!", "a!"]
    assert frame_locals(tb, _said, name="s") == ["a", "a!"]
    assert frame_locals(tb, _said, name="t") == ["a!"]


def test_a_groupby_of_one_column_is_read_as_that_column_when_asked() -> None:
    tb, _ = _failed(
        "def reduce(grouped):\n    raise TypeError('text')\n",
        "reduce(pd.DataFrame({'k': [1], 'v': ['x']}).groupby('k')['v'])",
    )
    found = frame_locals(tb, lambda v: isinstance(v, pd.Series), groupby=True)
    assert [series.name for series in found] == ["v"]
    assert frame_locals(tb, lambda v: isinstance(v, pd.Series)) == []
