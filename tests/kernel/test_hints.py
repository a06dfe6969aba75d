"""A failed cell's error carries the fix its data points at (reckon.kernel._hints):
table-driven through a real session, one id per error a small model failed to fix."""

from __future__ import annotations

import pytest
from kernel_helpers import Runner

SETUP = (
    "df = pd.DataFrame({' WINDSPEED': [1, 2], 'date': pd.to_datetime(['2020-01-05', "
    "'2021-03-01']), 'First time buyers': [3, 4], 'precipitation': [0.5, 1.5], "
    "'city': ['Oslo', 'Rome']})"
)


@pytest.mark.parametrize(
    ("code", "kind", "hint"),
    [
        pytest.param("df['WINDSPEED']", "KeyError", "spelled ' WINDSPEED'", id="padded-name"),
        pytest.param(
            "df['First_time_buyers']", "KeyError", "spelled 'First time buyers'", id="underscores"
        ),
        pytest.param("df['year']", "KeyError", "df['date'].dt.year", id="year-of-a-date"),
        pytest.param("df.groupby('month').sum()", "KeyError", ".dt.month", id="groupby-month"),
        pytest.param("df['precip']", "KeyError", "did you mean 'precipitation'", id="shortened"),
        pytest.param(
            "df.groupby('Sheet').size()",
            "KeyError",
            "there is no column 'Sheet': a table read from one sheet does not say which sheet "
            "it came from. read_table(path, sheet=None) reads every sheet of a workbook into "
            "one table with a 'sheet' column",
            id="sheet-of-sheets-read-one-by-one",
        ),
        pytest.param(
            "df['Oslo']",
            "KeyError",
            "'Oslo' is not a column but a row, a value of the column 'city': to use such rows "
            "as columns, flip the table first: t = df.set_index('city').T, then t['Oslo'] (and "
            "each other row of 'city' the same way); or select the row itself with "
            "df[df['city'] == 'Oslo']",
            id="a-row-label-as-a-column",
        ),
        pytest.param(
            "df['Sub_Group']",
            "KeyError",
            "the one text column: 'city' holds 'Oslo', 'Rome', …; if 'Sub_Group' means these, "
            "use ['city']",
            id="names-asked-of-no-column",
        ),
        pytest.param(
            "df[df['city'] == '2020'].groupby('Sub_Group').sum()",
            "KeyError",
            "'city' holds 'Oslo', 'Rome', …; if 'Sub_Group' means these, use ['city']; note: the "
            "table it was asked of has 0 rows",
            id="names-asked-of-an-empty-selection",
        ),
        pytest.param(
            # pandas words these "Column not found: Oslo" and "['precip'] not in index".
            "df.groupby('city')['Oslo'].mean()",
            "KeyError",
            "'Oslo' is not a column but a row, a value of the column 'city'",
            id="a-row-label-asked-of-a-groupby",
        ),
        pytest.param(
            "df[['precip', 'city']]", "KeyError", "did you mean 'precipitation'", id="in-a-list"
        ),
        pytest.param(
            "df[['WINDSPEED', 'Sub_Group']]",
            "KeyError",
            "spelled ' WINDSPEED'",
            id="none-of-a-list",
        ),
        pytest.param("df.Year", "AttributeError", "df['date'].dt.year", id="attribute-column"),
        pytest.param(
            "df['precipitation'].sum().idxmax()", "AttributeError", "already reduced", id="scalar"
        ),
        pytest.param(
            "m = df.groupby(df['date'].dt.month)['precipitation'].sum().idxmax()\nm.strftime('%B')",
            "AttributeError",
            "calendar.month_name[value]",
            id="a-month-number-is-not-a-date",
        ),
        pytest.param(
            "m = df.groupby(df['date'].dt.month_name())['precipitation'].sum().idxmax()\n"
            "m.strftime('%B')",
            "AttributeError",
            "drop the .strftime(...) call",
            id="a-month-name-is-not-a-date",
        ),
        pytest.param(
            "d = df[df['city'] == 'Rome']['date'].values[0]\nprint(d.strftime('%Y-%m-%d'))",
            "AttributeError",
            "take the value with .iloc[0] instead (a pandas Timestamp)",
            id="a-numpy-date-from-values",
        ),
        pytest.param("dff.head()", "NameError", "did you mean 'df'", id="misspelt-table"),
        pytest.param(
            "mean_without = df['precipitation'].mean()\nprint(round(mean_with, 2))",
            "NameError",
            "no line assigns mean_with: compute it first (mean_with = ...), then use it; the "
            "tables loaded are: df",
            id="a-value-never-assigned",
        ),
        pytest.param(
            "rome = df[df['city'] == 'rome']\nrome['precipitation'].idxmax()",
            "ValueError",
            "(rome has 0 rows)",
            id="idxmax-of-an-empty-selection",
        ),
        pytest.param(
            "rows = df[df['date'].dt.year == 1999]\nrows.iloc[0]",
            "IndexError",
            "selected no rows",
            id="first-row-of-an-empty-selection",
        ),
        pytest.param(
            "max(x for x in df['precipitation'] if x > 9)",
            "ValueError",
            "selected no rows",
            id="max-of-nothing",
        ),
        pytest.param(
            "df['city'].str.extract(r'(\\d+)')[0].astype(int)",
            "ValueError",
            "drop them first (.dropna())",
            id="numbers-extracted-from-text-as-int",
        ),
        pytest.param(
            "df['precipitation'].where(df['city'] == 'Rome').astype(int)",
            "IntCastingNaNError",
            "an integer cannot be NaN",
            id="a-column-with-empty-cells-as-int",
        ),
        pytest.param(
            "df[df['date'].str.contains('2020')]",
            "AttributeError",
            "df['date'] holds dates and times (read as dates when the table loaded), not text: "
            "use .dt instead of .str",
            id="text-methods-of-dates",
        ),
        pytest.param(
            "pd.to_timedelta(df['precipitation'], unit='h').total_seconds()",
            "AttributeError",
            ".total_seconds is a method of one value, not of a Series: on a column of them, "
            "use .dt.total_seconds",
            id="a-time-method-of-a-column",
        ),
        pytest.param(
            "df['city'].lower()",
            "AttributeError",
            ".lower is a method of one value, not of a Series: on a column of them, use .str.lower",
            id="a-text-method-of-a-column",
        ),
        pytest.param(
            "df[df['precipitation'].str.startswith('1')]",
            "AttributeError",
            "df['precipitation'] holds numbers, not text",
            id="text-methods-of-numbers",
        ),
        pytest.param(
            "share = df['precipitation'] / 2\nprint(f'@share[{share:.2f}]')",
            "TypeError",
            "share is a Series of 2 values, and a format such as :.2f takes one number: pick "
            "the one first (share.max(), share.iloc[0], share.loc[label])",
            id="a-series-formatted-as-a-number",
        ),
        pytest.param(
            "print(f\"{df['precipitation'] / 2:.2f}\")",
            "TypeError",
            "a Series (many values) was given to a format such as :.2f, which takes one number",
            id="an-unnamed-series-formatted-as-a-number",
        ),
        pytest.param(
            "m = df['precipitation'].mean()\n@mean[m]",
            "SyntaxError",
            "final answer, not for code",
            id="answer-form-in-code",
        ),
    ],
)
def test_an_error_says_what_the_data_offers(
    a_session: Runner, code: str, kind: str, hint: str
) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(code)
    assert result["status"] == "error"
    assert result["error"]["type"] == kind
    assert hint in result["error"]["hint"]


def test_the_table_a_column_was_asked_of_comes_before_the_others(a_session: Runner) -> None:
    assert a_session(f"{SETUP}\nother = pd.DataFrame({{'zzz': [1]}})")["status"] == "ok"
    result = a_session("df['precip']")
    assert "did you mean 'precipitation'" in result["error"]["hint"]


def test_an_error_with_nothing_to_add_has_no_hint(a_session: Runner) -> None:
    result = a_session("1 / 0")
    assert result["error"]["type"] == "ZeroDivisionError" and "hint" not in result["error"]


@pytest.mark.parametrize(
    "code",
    [
        "bonds['outstanding'].sum()",
        "bonds['outstanding'].mean()",
        "bonds['outstanding'] / 2",
        "bonds['outstanding'].max()",
        "bonds['outstanding'].astype(float)",
        "bonds.groupby('series')['outstanding'].mean()",
        "bonds['outstanding'] - bonds['held']",  # the column of text, not the numbers beside
    ],
)
def test_arithmetic_on_text_names_the_text_it_met(a_session: Runner, code: str) -> None:
    """Seen on a question not written for the agent: a sheet's column of bonds with a
    header row read as data, ``.sum()`` failing twice with pandas' words alone."""
    setup = (
        "bonds = pd.DataFrame({'series': ['EE', 'EE', 'I', 'I'], "
        "'outstanding': ['BONDS OUTSTANDING', 1200, '1,234', 7], 'held': [1, 2, 3, 4]})"
    )
    assert a_session(setup)["status"] == "ok"
    result = a_session(code)
    assert result["status"] == "error"
    hint = result["error"]["hint"]
    assert hint.startswith("bonds['outstanding'] holds text where numbers were expected")
    assert "'BONDS OUTSTANDING'" in hint and "pd.to_numeric(" in hint


def test_numbers_written_as_text_are_named_so(a_session: Runner) -> None:
    assert a_session("s = pd.Series(['3', '4'], name='n')")["status"] == "ok"
    result = a_session("s.mean()")
    assert (
        result["error"]["hint"]
        == "s holds numbers as text: make them numbers first with pd.to_numeric(s)"
    )
