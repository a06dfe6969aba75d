"""Reading a failed cell's traceback for the hints: the cell's own frame, and the pandas
objects the failing calls held.

Each hint module reads the same frames: the cell's namespace, to name a table or a
column as the cell names it, and the Series or DataFrame pandas raised on. One walk
keeps them agreeing on what counts as a cell and in which order the frames come. It
only reads the frames, never runs anything.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

__all__ = ["cell_frame", "frame_locals"]

# The prefix of a cell's file name (``_traceback.cell_filename``): only the prefix is
# tested, as the hints always have. Not imported from there: ``_traceback`` imports the
# hints.
_CELL_PREFIX = "<cell-"


def cell_frame(
    tb: TracebackType | None, *, innermost: bool = True
) -> tuple[str, int, dict[str, Any]]:
    """The file name, line and namespace (``f_globals``) of the traceback's innermost
    cell frame (its outermost: ``innermost=False``), or ``("", 0, {})`` without one."""
    found: tuple[str, int, dict[str, Any]] = ("", 0, {})
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.startswith(_CELL_PREFIX):
            found = (frame.f_code.co_filename, tb.tb_lineno, frame.f_globals)
            if not innermost:
                break
        tb = tb.tb_next
    return found


def frame_locals(
    tb: TracebackType | None,
    keep: Callable[[Any], bool],
    *,
    name: str | None = None,
    groupby: bool = False,
) -> list[Any]:
    """The local values of the traceback's frames that ``keep`` accepts, outermost frame
    first (the innermost match is the last): every local, or only the one called ``name``
    (pandas' own ``self``). With ``groupby``, a ``SeriesGroupBy`` is read as its Series,
    for the column a groupby reduces is the one the error is about."""
    if groupby:
        from pandas.core.groupby import SeriesGroupBy
    found: list[Any] = []
    while tb is not None:
        values = tb.tb_frame.f_locals
        if name is not None:
            values = {name: values[name]} if name in values else {}
        for value in values.values():
            if groupby and isinstance(value, SeriesGroupBy):
                value = value.obj
            if keep(value):
                found.append(value)
        tb = tb.tb_next
    return found
