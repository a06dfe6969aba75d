"""A text pattern that matches none of a column's values is said, with what the values
look like (reckon.kernel._pattern_note; "which district has the most attractions?":
``df['地址'].str.extract(r'(\\d+區)')`` over '臺南市北門區北門里舊埕119號' matched nothing,
and four fixes never touched the pattern)."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'地址': ['臺南市北門區北門里舊埕119號', '臺南市北門區北門里200號',"
    " '臺南市將軍區平沙里140號', None], 'n': [1, 2, 3, 4]})"
)
SAID = (
    "matched none of the 3 text values of df['地址'], which look like "
    "'臺南市北門區北門里舊埕119號', '臺南市北門區北門里200號', '臺南市將軍區平沙里140號'. "
    "Write the pattern for what they hold."
)


def test_a_failed_cell_over_an_empty_extract_names_the_pattern_and_the_values(
    a_session: Runner,
) -> None:
    assert a_session(SETUP)["status"] == "ok"
    cell = (
        "found = df['地址'].str.extract(r'(\\d+區)').dropna()\n"
        "print(found[0].value_counts().idxmax())"
    )
    result = a_session(cell)
    assert result["status"] == "error"
    hint = result["error"]["hint"]
    assert hint.startswith("the data it ran on is empty")
    assert hint.endswith("; df['地址'].str.extract(r'(\\d+區)') " + SAID)


@pytest.mark.parametrize(
    "cell",
    [
        "print(df['地址'].str.extract(r'(\\d+區)'))",
        "print(df.地址.str.findall('tainan', flags=2))  # re.I",
        "parts = df['地址'].str.extractall(pat=r'(District)')\nprint(len(parts))",
    ],
)
def test_a_cell_that_pulls_nothing_out_has_a_note(a_session: Runner, cell: str) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok"
    column = "df.地址" if "df.地址" in cell else "df['地址']"  # as the cell wrote it
    assert result["notes"][0].endswith(SAID.replace("df['地址']", column)), result["notes"]


@pytest.mark.parametrize(
    "cell",
    [
        "print(df['地址'].str.extract(r'(.{2}區)')[0].value_counts())",  # it matches
        "print(df['地址'].str.contains('Tainan').sum())",  # a count of 0 may be right
        "p = r'(\\d+區)'\nprint(df['地址'].str.extract(p))",  # not written in the call
        "print(df['地址'].str.extract(r'(\\d+區)', flags=0 + 0))",  # nor its options
        "print(df['地址'].str.len().max())",
    ],
)
def test_no_note_where_the_pattern_matches_or_cannot_be_read(a_session: Runner, cell: str) -> None:
    assert a_session.notes_after(SETUP, cell) == []


def test_a_plain_contains_is_tried_as_text_in_a_failed_cell(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    # '(' is text here, not a group: read as a regex it would not compile (no hint).
    missing = (
        "rows = df[df['地址'].str.contains('(東區', regex=False, na=False)]\n"
        "print(rows['n'].idxmax())"
    )
    result = a_session(missing)
    assert result["error"]["hint"].endswith(
        "; df['地址'].str.contains('(東區', regex=False, na=False) " + SAID
    )


MANY = (
    "import pandas as pd\n"
    "towns = ['臺南市北門區北門里%d號' % n for n in range(39)] + ['臺南市中西區']\n"
    "df = pd.DataFrame({'地址': towns})"
)


def test_a_pattern_that_pulls_out_hardly_any_is_noted_with_values_it_missed(
    a_session: Runner,
) -> None:
    """Seen: r'(.*?)(?:區)$' took the district only from the addresses that end in it, 2
    of 382, and the answer was the largest of those."""
    assert a_session(MANY)["status"] == "ok"
    result = a_session("print(df['地址'].str.extract(r'(.*?區)$')[0].value_counts())")
    assert result["notes"] == [
        "df['地址'].str.extract(r'(.*?區)$') matched only 1 of the 40 text values of "
        "df['地址']; the others, such as '臺南市北門區北門里0號', '臺南市北門區北門里1號', "
        "'臺南市北門區北門里2號', give nothing. If they should count, write the pattern "
        "for what they hold."
    ]
    # Two in forty is 5%: no note; nor for a test of each value, which may rightly be rare.
    assert a_session("df.loc[0, '地址'] = '臺南市東區'")["status"] == "ok"
    again = a_session("print(df['地址'].str.extract(r'(.*?區)$')[0].value_counts())")
    assert "notes" not in again
    assert "notes" not in a_session("print(df['地址'].str.contains('東區$').sum())")
