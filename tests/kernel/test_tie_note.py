"""idxmax or idxmin that picked the first of a tie says so (reckon.kernel._tie_note;
"which sub-specialty had the most doctors in 2010?": ``value_counts().idxmax()`` of the
names, the first of three tied at 2)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'name': ['Infektiologie', 'Kardiologie', 'Rheumatologie', "
    "'Infektiologie', 'Rheumatologie', 'Urologie', 'Neurologie'], "
    "'y2010': [10, 3100, 594, 12, 1, 20, 30]})"
)


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        (
            "counts = df['name'].value_counts()\nprint(counts.idxmax())",
            "counts.idxmax() is 'Infektiologie', the first of 2 tied at 2 ('Infektiologie', "
            "'Rheumatologie'): idxmax() picks the first of a tie. counts counts rows per "
            "value, and most values appear once: such a count ranks nothing. To rank by a "
            "number, take the largest of the column that holds it.",
        ),
        (
            "s = pd.Series([3, 1, 1, 1], index=['a', 'b', 'c', 'd'])\nprint(s.idxmin())",
            "s.idxmin() is 'b', the first of 3 tied at 1 ('b', 'c', 'd'): idxmin() picks the "
            "first of a tie.",
        ),
        (
            "rows = df['name'].str.contains('Rheuma')\nprint(rows.idxmax())",
            "rows.idxmax() is 2, the first of 2 tied at True (2, 4): idxmax() picks the first "
            "of a tie. Of a True/False Series it gives the first True row, not a largest value.",
        ),
    ],
)
def test_the_first_of_a_tie_is_noted(a_session: Runner, cell: str, said: str) -> None:
    assert a_session.notes_after(SETUP, cell) == [said]


@pytest.mark.parametrize(
    "cell",
    [
        "print(df.loc[df['y2010'].idxmax(), 'name'])",
        "print(df.groupby('name')['y2010'].sum().idxmax())",
        "s = pd.Series([3, 1, 1], index=['a', 'b', 'c'])\nprint(s.idxmax())",
    ],
)
def test_no_note_without_a_tie(a_session: Runner, cell: str) -> None:
    assert a_session.notes_after(SETUP, cell) == []
