"""A cell that compares a column with the text of a missing value says so in its stderr
(reckon.kernel._missing_note; "How many attractions have parking information?":
``df[df['停車資訊'] != 'nan']`` kept every row, 382 where 95 cells are filled in)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_helpers import Runner

# 4 rows, 1 with parking information; 'name' has nothing missing.
SETUP = (
    "df = pd.DataFrame({'停車資訊': ['lot', None, float('nan'), None],"
    " 'name': ['a', 'b', 'c', 'nan']})"
)


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        ("print(len(df[df['停車資訊'] != 'nan']))", "nan"),
        ("print((df['停車資訊'] == 'None').sum())", "None"),
        ("print(len(df[df.停車資訊 != '']))", ""),
        ("print(len(df[\"nan\" != df['停車資訊']]))", "nan"),
    ],
)
def test_a_column_compared_with_the_text_of_a_missing_value_names_notna(
    a_session: Runner, cell: str, text: str
) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok"
    assert (
        f"holds the text {text!r}: its 3 empty cells (of 4) are missing values"
        in (result["stderr"])
    )
    assert ".notna()" in result["stderr"]


@pytest.mark.parametrize(
    "cell",
    [
        "print((df['停車資訊'].str.strip() != '').mean() * 100)",
        "print(len(df[df['停車資訊'].str.strip().str.lower() == '']))",
    ],
)
def test_text_taken_through_str_methods_keeps_missing_values_missing(
    a_session: Runner, cell: str
) -> None:
    # Seen: df[col].str.strip() != '' counted every row as filled in (100.0%), where a
    # cell holding only spaces is also empty and most are missing.
    assert a_session(SETUP.replace("'lot', None", "'lot', '  '"))["status"] == "ok"
    result = a_session(cell)
    assert result["status"] == "ok"
    assert (
        "has 2 missing values (NaN) of 4 cells, and .str methods keep them NaN"
        in (result["stderr"])
    )
    assert ".notna()" in result["stderr"]


def test_no_note_where_the_column_holds_that_text_or_misses_nothing(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    cells = (
        "print(len(df[df['name'] != 'nan']))",  # a real cell 'nan' (and none missing)
        "print(len(df[df['停車資訊'].notna()]))",
        "print(len(df[df['停車資訊'] != 'lot']))",
        "x = 'nan'\nprint(x == 'nan')",
        "print(len(df[df['name'].str.strip() != '']))",  # nothing missing
        "print(len(df[df['停車資訊'].fillna('').str.strip() != '']))",
    )
    for cell in cells:
        result = a_session(cell)
        assert result["status"] == "ok" and result["stderr"] == "", cell


def test_a_cell_that_fails_has_no_note(a_session: Runner) -> None:
    assert a_session(SETUP)["status"] == "ok"
    result = a_session("print(len(df[df['停車資訊'] != 'nan']))\n1 / 0")
    assert result["status"] == "error" and "Reckon: no cell" not in result["stderr"]


NULL_CSV = Path(__file__).parent.parent / "data" / "messy" / "null.csv"


@pytest.mark.parametrize(
    ("cell", "named"),
    [
        pytest.param("print(df[df[1] == 'null'][0].sum())", "df[1]", id="a-numbered-column"),
        pytest.param("print((df == 'null').sum().sum())", "df", id="the-whole-table"),
        pytest.param(
            "print(df.apply(lambda row: row.isin(['null']).sum(), axis=1).sum())",
            "df",
            id="a-lambdas-row",
        ),
    ],
)
def test_the_text_null_that_pandas_read_as_missing_says_how_to_keep_it(
    a_session: Runner, cell: str, named: str
) -> None:
    # A file with no header whose cells are written 'null' or left empty.
    notes = a_session.notes_after(f"df = pd.read_csv({str(NULL_CSV)!r}, header=None)", cell)
    [note] = [n for n in notes if n.startswith("no cell of")]
    assert note.startswith(f"no cell of {named} holds the text 'null'")
    assert note.endswith(
        "pandas reads the text 'null' in a file as missing too; to tell cells written 'null' "
        "from empty ones, read the file with pd.read_csv(path, keep_default_na=False, "
        "na_values=[''])."
    )
    # Read as the note says, the cells written 'null' are there.
    kept = a_session(
        f"df = pd.read_csv({str(NULL_CSV)!r}, header=None, keep_default_na=False, "
        "na_values=[''])\nprint((df == 'null').sum().sum(), df.isna().sum().sum())"
    )
    assert kept["stdout"] == "9 4\n" and "notes" not in kept
