"""A cell that looks for a missing-value marker that reading made NaN says so
(reckon.kernel._marker_note; "how many cells hold a missing value written as
asterisks?": ``df.isin(['*']).sum().sum()`` printed 0 where mixedGLB.csv has 13)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_helpers import Runner

GLB = "Year,Jan,Feb,Mar\n1880,-30,****,-10\n1881,-20,-10,*****\n1882,*****,5,\n1883,1,2,3\n"


def setup(tmp_path: Path) -> str:
    path = tmp_path / "glb.csv"
    path.write_text(GLB)
    return f"df = read_table({str(path)!r})"


@pytest.mark.parametrize(
    ("cell", "name", "count"),
    [
        ("print(df.isin(['*']).sum().sum())", "df", "df.isna().sum().sum()"),
        ("print((df == '****').sum().sum())", "df", "df.isna().sum().sum()"),
        (
            "print(df['Feb'].astype(str).str.contains('*', regex=False).sum())",
            "df['Feb']",
            "df['Feb'].isna().sum()",
        ),
        ("print((df['Mar'] == '*****').sum())", "df['Mar']", "df['Mar'].isna().sum()"),
    ],
)
def test_a_marker_looked_for_after_reading_made_it_nan_is_noted(
    a_session: Runner, tmp_path: Path, cell: str, name: str, count: str
) -> None:
    notes = a_session.notes_after(setup(tmp_path), cell)
    assert len(notes) == 1 and notes[0].startswith(f"no cell of {name} holds the text "), notes
    assert f"Count them with {count}; read_table(path, tidy=False)" in notes[0]


@pytest.mark.parametrize(
    "cell",
    [
        "print(df.isna().sum().sum())",
        "raw = read_table(PATH, tidy=False)\nprint(raw.isin(['****', '*****']).sum().sum())",
        "print(df['Year'].astype(str).str.split('-').str[0].head(1))",
        "t = pd.DataFrame({'a': ['x', '-'], 'b': [1, None]})\nprint((t['a'] == '-').sum())",
    ],
)
def test_no_note_where_the_marker_is_there_or_not_looked_for(
    a_session: Runner, tmp_path: Path, cell: str
) -> None:
    start = setup(tmp_path)
    path = start.split("(", 1)[1].rstrip(")")
    assert a_session.notes_after(start, cell.replace("PATH", path)) == []
