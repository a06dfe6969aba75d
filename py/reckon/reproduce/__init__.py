"""Does an exported notebook reproduce? (CPython only.)

Run its code cells again, on this machine (``reproduce_notebook``) or in a fresh
browser sandbox (``reproduce_in_sandbox``), and compare every output with the one
stored in the notebook (``compare_cell``). Both ``reckon.client`` (which re-exports
``reproduce_notebook``, where the README documents it) and ``reckon.eval`` use it;
it imports neither, so neither has to import the other lazily.
"""

from __future__ import annotations

from reckon.reproduce._compare import compare_cell, normalize_text, table_values, why_different
from reckon.reproduce._reproduce import (
    SandboxSession,
    execute_cells,
    reproduce_in_sandbox,
    reproduce_notebook,
)

__all__ = [
    "SandboxSession",
    "compare_cell",
    "execute_cells",
    "normalize_text",
    "reproduce_in_sandbox",
    "reproduce_notebook",
    "table_values",
    "why_different",
]
