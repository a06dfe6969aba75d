"""A cell that prints NaN from a selection of no rows says so in its stderr
(reckon.kernel._empty_note; run 16: eleven variants of one filter, each printing nan)."""

from __future__ import annotations

from kernel_helpers import Runner

SETUP = (
    "df = pd.DataFrame({'hour': pd.date_range('2012-06-22', periods=48, freq='h'), "
    "'v': range(48), 'city': ['Oslo', 'Rome'] * 24})"
)
TIME_OF_DAY = (
    "window = df[(df['hour'] >= '09:00') & (df['hour'] <= '17:00')]\n"
    "print(round(window['v'].mean(), 2))"
)


def test_nan_from_no_rows_names_the_empty_table_and_the_dates_compared(
    a_session: Runner,
) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(TIME_OF_DAY)
    assert result["status"] == "ok" and result["stdout"].strip() == "nan"
    note = result["stderr"]
    assert note.startswith("[Reckon: window has 0 rows, so the result is NaN")
    assert "'hour' holds dates and times (the first is 2012-06-22 00:00:00): '09:00' is" in note
    assert "df['hour'].dt.hour >= 9" in note
    # Put right as the note says, the same cell has no note.
    fixed = a_session(
        "window = df[df['hour'].dt.hour.between(9, 17)]\nprint(round(window['v'].mean(), 2))"
    )
    assert fixed["stdout"].strip() != "nan" and fixed["stderr"] == ""


def test_an_empty_filter_on_text_says_only_what_is_empty(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("rome = df[df['city'] == 'rome']\nprint('mean:', rome['v'].mean())")
    assert result["stderr"].startswith("[Reckon: rome has 0 rows")
    assert "dates and times" not in result["stderr"]


def test_nan_with_rows_behind_it_or_no_nan_has_no_note(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    # A NaN of real rows (a missing value), and an empty table with a number printed.
    assert a_session("s = pd.Series([float('nan')])\nprint(s.iloc[0])")["stderr"] == ""
    assert a_session("none = df[df['v'] > 99]\nprint(len(none))")["stderr"] == ""
    # A column named like nan is not NaN.
    assert a_session("e = df[df['v'] > 99]\nprint('nan_count')")["stderr"] == ""


def test_a_table_that_raises_when_counted_leaves_the_run_as_it_was(a_session: Runner) -> None:
    # A cell's own objects may raise anywhere: the note is left out, the run stands.
    hostile = (
        "class Odd(pd.DataFrame):\n"
        "    def __len__(self):\n"
        "        raise RuntimeError('no')\n"
        "odd = Odd({'a': [1]})\n"
        "print(float('nan'))"
    )
    result = a_session(hostile)
    assert result["status"] == "ok" and result["stdout"].strip() == "nan"
    assert result["stderr"] == ""


WIDE = (
    "import pandas as pd\n"
    "t = pd.DataFrame({'name': ['Kardiologie', 'Urologie', 'Total'], '2010': [3, 1, 4]})"
)
SUM_OF_NONE = "so the result is 0 (the sum of no rows): a filter selected no rows."


def test_a_sum_of_no_rows_names_the_filter_that_matched_none(a_session: Runner) -> None:
    """Seen: 0 (co2 in 2007) and 0.0 (doctors in 2010), each answered after the
    zero-result message, from filters that matched no row."""
    notes = a_session.notes_after(
        WIDE, "t2010 = t[t['name'] == '2010']\nprint(t2010['2010'].sum())"
    )
    assert notes == [
        "t2010 has 0 rows (t['name'] == '2010' matches no row ('2010' is the name of a "
        f"column)), {SUM_OF_NONE} Print len() after each filter and the values it compares with."
    ]
    notes = a_session.notes_after(WIDE, "print(t[t['name'] == '2010']['2010'].sum())")
    assert notes[0].startswith(
        f"t['name'] == '2010' matches no row ('2010' is the name of a column), {SUM_OF_NONE}"
    )
    notes = a_session.notes_after(
        WIDE, "rest = t[t['name'] != 'Total']\nprint(rest[rest['name'] == 7]['2010'].sum())"
    )
    assert notes[0].startswith(f"rest['name'] == 7 matches no row, {SUM_OF_NONE}")


def test_no_note_for_a_zero_that_rows_add_up_to(a_session: Runner) -> None:
    assert a_session.notes_after(WIDE, "print((t['2010'] - t['2010']).sum())") == []
    assert a_session.notes_after(WIDE, "print(len(t[t['name'] == 'x']))") == []
    assert a_session.notes_after(WIDE, "print(t[t['name'] == 'Urologie']['2010'].sum() - 1)") == []
