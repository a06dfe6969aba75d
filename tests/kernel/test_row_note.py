"""A row taken by its place where a name or a value was asked says so
(reckon.kernel._row_note; questions not written for the agent: ``bonds.idxmax()`` over
numbered rows printed '1' for the series 'EE', and ``counts.iloc[0]`` of a groupby gave
the first agency alphabetically for the one with the most)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

BONDS = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'series': ['E', 'HH', 'EE', 'I'],"
    " 'outstanding': [32.5, 504.9, 4.1, 9.0]})\n"
    "bonds = df.loc[df['series'] != 'E', 'outstanding']"
)
NUMBER = (
    "is 1, the number of a row, not its name: the rows of bonds are numbered. Where the "
    "question asks which one, give the row's name: df.loc[1, 'series'] is 'HH'."
)
COUNTS = (
    "import pandas as pd\n"
    "rows = pd.DataFrame({'agency': list('DACBADDAD'), 'active': [1] * 9})\n"
    "by_agency = rows.groupby('agency').size()\n"
    "table = rows.groupby('agency').size().reset_index(name='n')"
)


@pytest.mark.parametrize(
    "cell",
    [
        "most = bonds.idxmax()\nprint(f'@series[{most}]')",
        "top, value = bonds.idxmax(), bonds.max()\nprint(top, value)",
        "print(bonds.idxmax())",
        "bonds.idxmax()",
    ],
)
def test_a_row_number_printed_for_a_name_is_noted(a_session: Runner, cell: str) -> None:
    notes = a_session.notes_after(BONDS, cell)
    assert notes and notes[0].endswith(NUMBER), notes


@pytest.mark.parametrize(
    "cell",
    [
        "print(df.loc[bonds.idxmax(), 'series'])",  # the number used as a label
        "i = bonds.idxmax()\nprint(df.loc[i, 'series'])",
        "print(bonds.max())",
        # Rows named by numbers: a year is the answer.
        "years = pd.Series([3, 9, 4], index=pd.Index([2019, 2020, 2021], name='year'))\n"
        "print(years.idxmax())",
    ],
)
def test_no_note_for_a_row_number_used_as_one(a_session: Runner, cell: str) -> None:
    assert a_session.notes_after(BONDS, cell) == []


@pytest.mark.parametrize(
    ("cell", "first"),
    [
        ("print(by_agency.iloc[0])", "by_agency.iloc[0] takes the row of 'A', the first by name"),
        ("print(by_agency.index[0])", "by_agency.index[0] takes the row of 'A', the first by name"),
        ("print(table.iloc[0]['n'])", "table.iloc[0] takes the row of 'A', the first by 'agency'"),
        (
            "print(rows.groupby('agency')['active'].sum().iloc[0])",
            "rows.groupby('agency')['active'].sum().iloc[0] takes the first group of a groupby",
        ),
    ],
)
def test_the_first_row_of_a_groupby_is_noted(a_session: Runner, cell: str, first: str) -> None:
    assert a_session(COUNTS)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok"
    assert result["notes"][0].startswith(first), result["notes"]
    assert (
        "not in order of value" in result["notes"][0]
        or "not by their values" in (result["notes"][0])
    )


@pytest.mark.parametrize(
    "cell",
    [
        "print(by_agency.sort_values(ascending=False).iloc[0])",
        "print(by_agency.idxmax(), by_agency.max())",
        "print(rows.groupby('agency')['active'].sum().sort_values().index[0])",
        "print(rows['agency'].value_counts().index[0])",
        "ranked = by_agency.sort_values(ascending=False)\nprint(ranked.index[0])",
        # The first row is the largest: taking it gives the right row.
        "top = pd.Series([9, 2, 3], index=['a', 'b', 'c'])\nprint(top.iloc[0])",
        # Grouped by years, not names: the first year may be what is asked.
        "years = pd.DataFrame({'y': [2001, 2002, 2002, 2003], 'v': [1, 2, 3, 4]})\n"
        "print(years.groupby('y')['v'].sum().iloc[0])",
    ],
)
def test_no_note_for_a_first_row_in_order_of_value(a_session: Runner, cell: str) -> None:
    assert a_session.notes_after(COUNTS, cell) == []


def test_the_note_takes_the_row_a_name_of_the_cell_holds(a_session: Runner) -> None:
    assert a_session(COUNTS)["status"] == "ok"
    result = a_session("top = by_agency.idxmax()\nprint(top, table.iloc[0]['n'])")
    assert result["notes"][0].endswith(
        "to take the row of top ('D'): table[table['agency'] == top]."
    ), result["notes"]
    result = a_session("top = by_agency.idxmax()\nprint(top, by_agency.iloc[0])")
    assert result["notes"][0].endswith("to take the row of top ('D'): by_agency.loc[top].")


def test_no_note_when_the_first_row_is_the_one_the_cell_names(a_session: Runner) -> None:
    assert a_session.notes_after(COUNTS, "first = 'A'\nprint(first, table.iloc[0]['n'])") == []
