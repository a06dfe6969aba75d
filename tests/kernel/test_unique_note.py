"""A cell that counts distinct values with the missing ones among them says so in its
stderr (reckon.kernel._unique_note; "How many distinct postal codes are there?":
``len(df['zip'].unique())`` printed 206 where ``nunique()`` is 205)."""

from __future__ import annotations

from kernel_helpers import Runner

# 205 postal codes, each on two rows, and 3 rows without one; 'city' has none missing.
SETUP = (
    "codes = [float(10000 + i) for i in range(205)] * 2 + [float('nan')] * 3\n"
    "df = pd.DataFrame({'zip': codes, 'city': ['Oslo', 'Rome'] * 206 + ['Oslo']})"
)
NOTE = (
    "[Reckon: len(df['zip'].unique()) counts the missing value too: df['zip'] has 3 "
    "missing, 205 distinct values without them (df['zip'].nunique()). Say which the "
    "question means.]\n"
)


def test_len_of_unique_with_missing_values_names_nunique(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("print(len(df['zip'].unique()))")
    assert result["status"] == "ok" and result["stdout"] == "206\n"
    assert result["stderr"] == NOTE
    assert result["notes"] == [NOTE.strip()[len("[Reckon: ") : -1]]
    # Worded around the number, the same count has the same note.
    worded = a_session("n = len(df['zip'].unique())\nprint(f'There are {n} distinct codes.')")
    assert worded["stderr"] == NOTE


def test_a_column_without_missing_values_has_no_note(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("print(len(df['city'].unique()))")
    assert result["stdout"] == "2\n" and result["stderr"] == "" and "notes" not in result


def test_the_count_without_missing_values_has_no_note(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    cells = (
        "print(df['zip'].nunique())",
        "print(len(df['zip'].dropna().unique()))",
        # Counted both ways, the nunique() one printed.
        "both = len(df['zip'].unique())\nprint(df['zip'].nunique())",
    )
    for cell in cells:
        result = a_session(cell)
        assert result["stdout"] == "205\n" and result["stderr"] == ""


def test_a_last_line_without_the_count_has_no_note(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("print(len(df['zip'].unique()))\nprint('done')")
    assert result["stdout"] == "206\ndone\n" and result["stderr"] == ""
    other = a_session("print(len(df['zip'].unique()))\nprint('rows:', len(df))")
    assert other["stdout"] == "206\nrows: 413\n" and other["stderr"] == ""


def test_len_of_a_set_counts_each_float_nan(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("print(len(set(df['zip'])))")
    # A set keeps each float NaN apart (NaN != NaN): 205 codes and 3 NaN.
    assert result["stdout"] == "208\n"
    assert result["stderr"] == (
        "[Reckon: len(set(df['zip'])) counts the missing values too, as 3: df['zip'] has "
        "3 missing, 205 distinct values without them (df['zip'].nunique()). Say which the "
        "question means.]\n"
    )


def test_a_series_bound_to_a_name_and_other_spellings(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("zips = df['zip']\nprint('distinct:', zips.unique().size)")
    assert result["stdout"] == "distinct: 206\n"
    assert result["stderr"].startswith("[Reckon: zips.unique().size counts the missing value")
    assert (
        "zips has 3 missing, 205 distinct values without them (zips.nunique())"
        in (result["stderr"])
    )
    shape = a_session("print(df.zip.drop_duplicates().shape[0])")
    assert shape["stderr"].startswith("[Reckon: df.zip.drop_duplicates().shape[0] counts")
    counts = a_session("print(len(df['zip'].value_counts(dropna=False)))")
    assert "(df['zip'].nunique())" in counts["stderr"]


def test_the_empty_note_and_this_one_both_appear(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(
        "none = df[df['zip'] < 0]\nprint(none['zip'].mean(), len(df['zip'].unique()))"
    )
    assert result["stdout"] == "nan 206\n"
    notes = result["stderr"].splitlines()
    assert [n[:25] for n in notes] == ["[Reckon: none has 0 rows,", "[Reckon: len(df['zip'].un"]


def test_a_series_that_raises_when_counted_leaves_the_run_as_it_was(
    a_session: Runner,
) -> None:
    # A cell's own objects may raise anywhere: the note is left out, the run stands.
    hostile = (
        "class Odd(pd.Series):\n"
        "    def nunique(self, dropna=True):\n"
        "        raise RuntimeError('no')\n"
        "odd = Odd([1.0, None, 1.0])\n"
        "print(len(odd.unique()))"
    )
    result = a_session(hostile)
    assert result["status"] == "ok" and result["stdout"] == "2\n" and result["stderr"] == ""
