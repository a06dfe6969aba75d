"""Notes after a cell that ran: what its output shows but does not say.

A small model reads a cell's output as the answer. Some outputs are wrong without an
error: the mean of no rows (``_empty_note``), a count of distinct values with the
missing one among them (``_unique_note``), a column compared with the text ``'nan'``
(``_missing_note``) or with a marker reading made NaN (``_marker_note``), a pattern that
pulls nothing out of a column (``_pattern_note``), a sum over a table's own total row
(``_total_note``), a row's number printed for its name or a groupby's first row taken
for its top one (``_row_note``), a column compared with itself (``_self_compare``), the
first of a tie picked (``_tie_note``), a repeated header's first column taken for the
second table's (``_repeat_note``), a query's ``column = 'text'`` that no row meets
(``_sql_note``), a scipy test given a column with missing values (``_nan_stats_note``).
Each note goes to the cell's stderr, after its own, as ``[Reckon: …]``
(what the model and the person read), and to the result's ``notes`` (what the agent
reads: a cell's own stderr cannot pass for one). A note is a courtesy, as a hint is: the
cell's own objects may raise anywhere, and then there is no note, never a changed
result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reckon.kernel._empty_note import empty_note
from reckon.kernel._marker_note import marker_note
from reckon.kernel._missing_note import missing_note
from reckon.kernel._nan_stats_note import nan_stats_note
from reckon.kernel._pattern_note import pattern_note
from reckon.kernel._repeat_note import repeat_note
from reckon.kernel._row_note import group_order_note, row_number_note
from reckon.kernel._self_compare import self_compare_note
from reckon.kernel._sql import take_sql_notes
from reckon.kernel._tie_note import tie_note
from reckon.kernel._total_note import total_note
from reckon.kernel._unique_note import unique_note

__all__ = ["cell_notes", "shown_note"]


def sql_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """What the cell's run_sql queries that matched nothing compared (``_sql_note``)."""
    return " ".join(take_sql_notes())


_NOTES: tuple[Callable[[str, str, dict[str, Any]], str], ...] = (
    empty_note,
    unique_note,
    missing_note,
    nan_stats_note,
    marker_note,
    pattern_note,
    total_note,
    row_number_note,
    group_order_note,
    self_compare_note,
    tie_note,
    repeat_note,
    sql_note,
)


def shown_note(note: str) -> str:
    """A note as the cell's stderr shows it."""
    return f"[Reckon: {note}]"


def cell_notes(code: str, stdout: str, namespace: dict[str, Any]) -> list[str]:
    """The notes for ``code``, a cell that ran and printed ``stdout``: plain text."""
    notes = []
    for note_of in _NOTES:
        try:
            note = note_of(code, stdout, namespace)
        except Exception:  # a courtesy (the module docstring)
            continue
        if note:
            notes.append(note)
    return notes
