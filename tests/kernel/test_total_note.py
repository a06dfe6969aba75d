"""A cell that sums, averages or ranks a column with its table's total row says so
(reckon.kernel._total_note; "what percentage of the grand total of bonds outstanding
is that?": ``df['BONDS OUTSTANDING'].sum()`` took in 'GRAND TOTALS', 38.05% for 76.11%)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'series': ['E', 'EE', 'HH', 'GRAND TOTALS'],"
    " 'outstanding': [32.5, 504.9, 4.1, 541.5], 'count': [1, 2, 3, 4]})"
)
NOTE = (
    "takes in the row 'GRAND TOTALS', whose 'outstanding' (541.5) is the total of the "
    "other rows: a sum or a mean counts them twice, and a largest value may be it. Leave "
    "it out first, e.g. df[df['series'] != 'GRAND TOTALS']."
)


@pytest.mark.parametrize(
    "cell",
    [
        "share = df.loc[1, 'outstanding'] / df['outstanding'].sum() * 100\nprint(round(share, 2))",
        "print(df.outstanding.mean())",
        "print(df.loc[df['outstanding'].idxmax(), 'series'])",
    ],
)
def test_a_column_taken_with_its_total_row_is_noted(a_session: Runner, cell: str) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok"
    assert result["notes"][0].endswith(NOTE), result["notes"]
    assert result["stderr"].startswith("[Reckon: ")


@pytest.mark.parametrize(
    ("setup", "cell"),
    [
        (SETUP, "rest = df[df['series'] != 'GRAND TOTALS']\nprint(rest['outstanding'].sum())"),
        (SETUP, "print(df['count'].sum())"),  # 4 is no total of 1, 2 and 3
        # 3 = 1 + 2 by chance: no row is labelled as a total.
        ("df = pd.DataFrame({'k': ['a', 'b', 'c'], 'n': [1, 2, 3]})", "print(df['n'].sum())"),
        # Labelled 'Total', but not the sum of the others: a category.
        ("df = pd.DataFrame({'k': ['a', 'b', 'Total'], 'n': [1, 2, 5]})", "print(df['n'].sum())"),
    ],
)
def test_no_note_without_a_total_row_in_what_was_taken(
    a_session: Runner, setup: str, cell: str
) -> None:
    assert a_session.notes_after("import pandas as pd\n" + setup, cell) == []
