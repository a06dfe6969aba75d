"""A cell that takes a repeated header's first column beside the second table's columns
says which one goes with them (reckon.kernel._repeat_note; seen: a hidden sheet with two
tables side by side, the second filtered by the first table's 'Series')."""

from __future__ import annotations

from pathlib import Path

from kernel_helpers import Runner

MESSY = Path(__file__).parent.parent / "data" / "messy"
# Two tables side by side, as pandas reads them: the shared header comes twice.
SETUP = (
    "df = pd.DataFrame({'Series': ['A', 'A', 'B'], 'Pieces': [1, 2, 3], "
    "'Series.1': ['B', 'HH', 'HH'], 'Out': [10, 20, 30], 'Issued': [5, 7, 9]})"
)


def test_the_first_tables_column_beside_the_seconds_is_named(a_session: Runner) -> None:
    [note] = a_session.notes_after(
        SETUP, "hh = df[df['Series'] == 'B']\nprint(hh['Out'].sum(), hh['Issued'].sum())"
    )
    assert note == (
        "df holds the header 'Series' twice (a second table beside the first, from column "
        "3), and pandas named the second 'Series.1': 'Out', 'Issued' stand in that second "
        "table, so the 'Series' of their own rows is df['Series.1'], not df['Series']."
    )


def test_the_right_twin_or_the_first_tables_own_columns_have_no_note(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    for cell in (
        "print(df[df['Series.1'] == 'HH']['Out'].sum())",
        "print(df[df['Series'] == 'A']['Pieces'].sum())",
        # A column of each table: which is meant cannot be told.
        "print(df[df['Series'] == 'A'][['Pieces', 'Out']].sum())",
    ):
        result = a_session(cell)
        assert result["status"] == "ok" and "notes" not in result, cell


def test_a_real_sheet_with_two_tables_gets_the_note(a_session: Runner) -> None:
    book = str(MESSY / "large.xlsx")
    [note] = a_session.notes_after(
        f"df = read_table({book!r}, sheet='data')",
        "hh = df[df['Series'] == 'HH']\nprint(round(hh['Bonds Out'].corr(hh['Bonds Issued']), 4))",
    )
    assert "so the 'Series' of their own rows is df['Series.1']" in note
