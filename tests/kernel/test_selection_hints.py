"""Rows and columns asked of a table's [] in one go get a hint that says how to write
them (reckon.kernel._selection_hints; ``df[df['SERIES'] != 'GRAND TOTALS', 'BONDS
OUTSTANDING']`` on a question not written for the agent, answered with the mask)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = "import pandas as pd\ndf = pd.DataFrame({'series': ['E', 'Total'], 'n': [1, 1]})"


@pytest.mark.parametrize(
    ("cell", "hint"),
    [
        (
            "print(df[df['series'] != 'Total', 'n'])",
            "a table's [] takes a column name, a list of them or a mask of rows, not a mask "
            "and columns together: write it with .loc, table.loc[mask, 'n'] (the mask over "
            "'series' as it is)",
        ),
        (
            "print(df[df['series'] != 'Total', ['n']])",
            "a table's [] takes a column name, a list of them or a mask of rows, not a mask "
            "and columns together: write it with .loc, table.loc[mask, ['n']] (the mask over "
            "'series' as it is)",
        ),
        (
            "print(df['series', 'n'])",
            "to take two columns, give a list of them: df[['series', 'n']]",
        ),
    ],
)
def test_rows_and_columns_in_brackets_get_the_loc_hint(
    a_session: Runner, cell: str, hint: str
) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "error"
    assert result["error"]["hint"] == hint


def test_a_missing_column_keeps_its_own_hint(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("print(df['N'])")
    assert "n" in result["error"]["hint"] and ".loc" not in result["error"]["hint"]
