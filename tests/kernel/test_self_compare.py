"""A column compared with itself says so, in a note and in the empty-data hint
(reckon.kernel._self_compare; "on which date was Berkeley warmer than Galway?":
``df['temperature'] > df['temperature']``, no rows, then five cells printing None)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'date': ['d1', 'd2', 'd1', 'd2'], 'temperature': [1, -1, 6, 8],"
    " 'place': ['Galway', 'Galway', 'Berkeley', 'Berkeley']})"
)
WARMER = "(df['place'] == 'Berkeley') & (df['temperature'] > df['temperature'])"
SAID = (
    "df['temperature'] > df['temperature'] compares df['temperature'] with itself, row by "
    "row: it is False in every row. Each row of df holds one 'place' ('Berkeley'): to "
    "compare them, put them side by side first: wide = df.pivot_table(index='date', "
    "columns='place', values='temperature'), then wide['Berkeley'] - wide['Galway']."
)


def test_a_filter_of_a_column_against_itself_is_noted(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(f"rows = df[{WARMER}]\nprint(len(rows))")
    assert result["status"] == "ok" and result["stdout"] == "0\n"
    assert result["notes"] == [SAID]


def test_the_error_on_its_empty_result_says_so(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(
        f"rows = df[{WARMER}]\nprint(rows.loc[rows['temperature'].idxmax(), 'date'])"
    )
    assert result["status"] == "error"
    assert result["error"]["hint"].startswith("the data it ran on is empty (rows has 0 rows)")
    assert result["error"]["hint"].endswith("; " + SAID)


def test_without_kinds_named_it_says_what_the_comparison_does(a_session: Runner) -> None:
    assert a_session.notes_after(SETUP, "print((df.temperature <= df.temperature).sum())") == [
        "df.temperature <= df.temperature compares df.temperature with itself, row by row: "
        "it is True (but where missing) in every row. Compare it with another column, or "
        "with the rows of another kind put beside it."
    ]


@pytest.mark.parametrize(
    "cell",
    [
        "print((df['temperature'] != df['temperature']).sum())",  # the missing-value idiom
        "print((df['temperature'] > df['temperature'].mean()).sum())",
        "wide = df.pivot_table(index='date', columns='place', values='temperature')\n"
        "print((wide['Berkeley'] > wide['Galway']).sum())",
    ],
)
def test_no_note_for_other_comparisons(a_session: Runner, cell: str) -> None:
    assert a_session.notes_after(SETUP, cell) == []
