"""read_table tidies a table as an analyst would (reckon.kernel.tables._tidy), and
never turns text into NaN: table-driven, one id per case, through the public reader."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.kernel import read_table
from reckon.kernel._inspect import inspect
from support import QUESTION_SETS, TEST_DATA

REAL = QUESTION_SETS / "real"


def written(tmp_path: Path, text: str, name: str = "t.csv", encoding: str = "utf-8") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return str(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('a,b\nx,"1,234"\ny,"-5,000.5"\n', [1234, -5000.5], id="comma-thousands"),
        pytest.param("a;b\nx;1 414\ny;-1 352\n", [1414, -1352], id="space-thousands"),
        pytest.param("a;b\nx;1\u00a0414\ny;2\u202f000\n", [1414, 2000], id="nbsp-thousands"),
        pytest.param("a,b\nx,73'400\ny,1'000\n", [73400, 1000], id="apostrophe-thousands"),
        pytest.param("a,b\nx,(1200)\ny,300\n", [-1200, 300], id="accounting-negative"),
        pytest.param("a,b\nx,$12.50\ny,$3\n", [12.5, 3], id="currency"),
        pytest.param("a,b\nx,12.5%\ny,3%\n", [12.5, 3], id="percent"),
        pytest.param("a,b\nx,- 1\ny, 2\n", [-1, 2], id="sign-apart"),
        pytest.param("a;b\nx;2.830\ny;.\nz;379\n", [2830, math.nan, 379], id="dot-thousands"),
        pytest.param("a,b\nx,****\ny,-28\nz,n/a\n", [math.nan, -28, math.nan], id="markers"),
    ],
)
def test_numbers_as_people_write_them(tmp_path: Path, text: str, expected: list[float]) -> None:
    frame = read_table(written(tmp_path, text))
    values = frame["b"].tolist()
    assert pd.api.types.is_numeric_dtype(frame["b"])
    assert len(values) == len(expected)
    for value, want in zip(values, expected, strict=True):
        assert (math.isnan(value) and math.isnan(want)) or value == want


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a,b\nx,12\ny,twelve\n", id="a-word-among-numbers"),
        pytest.param("a;b;c\nx;007;1\ny;1 234;2\nz;5;3\n", id="leading-zero-code"),
        pytest.param("a;b;c\nx;123456789012345678;1\ny;1 234;2\nz;5;3\n", id="eighteen-digit-id"),
        pytest.param("a,b\nx,12%\ny,3\n", id="some-percent"),
        pytest.param("a,b\nx,2010-11\ny,2011-12\n", id="financial-year"),
        pytest.param("a,b\nx,09:00\ny,17:30\n", id="time-of-day"),
        # Mixed ways that fit no one order of day and month: read neither way round.
        pytest.param("a,b\nx,24/06/2012\ny,06/24/12\n", id="mixed-orders"),
    ],
)
def test_text_that_is_not_all_numbers_or_dates_stays_text(tmp_path: Path, text: str) -> None:
    path = written(tmp_path, text)
    frame = read_table(path)
    assert frame["b"].dtype == object
    assert frame["b"].tolist() == read_table(path, tidy=False)["b"].astype(str).tolist()


@pytest.mark.parametrize(
    ("values", "first", "dayfirst"),
    [
        pytest.param(["2012-06-22 00:00:00", "2012-06-22 01:00:00"], "2012-06-22", False, id="iso"),
        pytest.param(["Jan 1 2000", "Feb 3 2001"], "2000-01-01", False, id="month-name"),
        # A call centre's export pads the day with a space: "Apr  3" beside "Apr 13".
        pytest.param(
            ["Apr 13  2017 12:00:00 AM", "Apr 13  2017 08:15:00 PM", "Apr  3  2017 1:00:00 AM"],
            "2017-04-13",
            False,
            id="padded",
        ),
        pytest.param(["1 January 2000", "3 February 2001"], "2000-01-01", False, id="day-month"),
        pytest.param(["01/07/2012", "24/06/2012"], "2012-07-01", True, id="day-first"),
        pytest.param(["06/24/2012", "07/01/2012"], "2012-06-24", False, id="month-first"),
        # Two systems' ways in one column, each read in its own, month first throughout.
        pytest.param(["12/07/2011 20:32", "8/24/11 14:06"], "2011-12-07", False, id="mixed"),
        pytest.param(["24/06/2012", "05/06/12 10:00"], "2012-06-24", True, id="mixed-day-first"),
    ],
)
def test_dates_become_dates(tmp_path: Path, values: list[str], first: str, dayfirst: bool) -> None:
    path = written(tmp_path, "when,n\n" + "".join(f'"{v}",{i}\n' for i, v in enumerate(values)))
    frame = read_table(path)
    assert pd.api.types.is_datetime64_any_dtype(frame["when"])
    assert str(frame["when"].iloc[0].date()) == first
    notes = " ".join(inspect(path)["notes"])
    assert "dates parsed in 'when'" in notes
    assert ("day before month" in notes) is dayfirst


def test_a_header_over_several_lines_names_each_column_by_its_last(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        ",,Budget by region,,\n"
        ",,region,region,region\n"
        ",,North,South,East\n"
        "NR.,Item,,,\n"
        "1,Taxes,10,20,30\n"
        "2,Fees,1,2,3\n",
    )
    frame = read_table(path)
    assert list(frame.columns) == ["NR.", "Item", "North", "South", "East"]
    assert frame["South"].tolist() == [20, 2]
    assert "the header spans" in " ".join(inspect(path)["notes"])


def test_a_header_line_of_codes_units_or_formulas_does_not_name_the_columns(
    tmp_path: Path,
) -> None:
    path = written(
        tmp_path,
        ",,'A','B','C',\n"
        "SERIES,,ALL BONDS ISSUED,ALL BONDS REDEEMED,BONDS OUTSTANDING,WEIGHT\n"
        ",,,(A - C) OR (F + I),(A - B),(kg)\n"
        "Series 'E',E,100,90,10,1.5\n"
        "Series 'EE',EE,200,150,50,2.5\n",
    )
    frame = read_table(path)
    assert list(frame.columns)[2:] == [
        "ALL BONDS ISSUED", "ALL BONDS REDEEMED", "BONDS OUTSTANDING", "WEIGHT"
    ]  # fmt: skip
    assert frame["BONDS OUTSTANDING"].tolist() == [10, 50]


def test_a_report_sheet_is_named_by_its_names_not_its_legend() -> None:
    frame = read_table(str(TEST_DATA / "messy" / "large.xlsx"), sheet="Report")
    assert "BONDS OUTSTANDING" in frame.columns  # line breaks made spaces, as in a header
    assert not [c for c in frame.columns if str(c).startswith("(A")]
    top = frame[frame["SERIES"] != "GRAND TOTALS"]["BONDS OUTSTANDING"].idxmax()
    assert frame.iloc[:, 1][top] == "EE"
    # The percentages below the table, after two blank lines, are a table of their own.
    assert frame["SERIES"].iloc[-2] == "GRAND TOTALS" and len(frame) == 15
    assert all(frame[c].dtype == "float64" for c in frame.columns[2:])


REPORT = "name,a,b,c\nx,1,2,3\ny,4,5,6\nz,7,8,9\ntotal,12,15,18\n,,,\n"


@pytest.mark.parametrize(
    ("below", "rows"),
    [
        pytest.param("Shares of:,,,all\nx of total,,,0.25\n", 4, id="a-table-of-its-own"),
        pytest.param("w,1,,3\n", 5, id="numbers-from-its-first-line"),
        pytest.param("Later,,,\nw,1,2,3\n", 6, id="a-section-using-every-column"),
    ],
)
def test_a_block_below_a_blank_line_is_left_out_only_when_it_is_another_table(
    tmp_path: Path, below: str, rows: int
) -> None:
    path = written(tmp_path, REPORT + below)
    frame = read_table(path)
    assert len(frame) == rows and frame["name"].iloc[3] == "total"
    said = "a table of their own (from 'Shares of:')" in " ".join(inspect(path)["notes"])
    assert said is (rows == 4)
    if rows == 4:
        assert frame["c"].tolist() == [3, 6, 9, 18]


def test_a_block_headed_notes_below_a_table_of_text_is_left_out(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        "item,description\na,first\nb,second\nc,third\nd,fourth\n,\n"
        "Notes:,\n1. From a guide,\nhttp://example.org/guide,\n",
    )
    assert read_table(path)["item"].tolist() == ["a", "b", "c", "d"]
    assert "3 line(s) of notes below the table left out" in inspect(path)["notes"]
    book = read_table(str(TEST_DATA / "messy" / "bian-anal-mca-2005-dols-eng-1011-0312-tab3.xlsm"))
    assert len(book) == 10 and book["Data item"].iloc[-1] == "Reviews_conducted"


def test_header_lines_whose_last_names_repeat_are_joined(tmp_path: Path) -> None:
    path = written(tmp_path, "item,north,south\n,total,total\nx,1,2\ny,3,4\n")
    assert list(read_table(path).columns) == ["item", "north total", "south total"]


def test_notes_below_a_blank_line_are_left_out_and_said(tmp_path: Path) -> None:
    path = written(tmp_path, "name,n\nx,1\ny,2\n,\nSource: a survey.,\nNote: rounded,\n")
    frame = read_table(path)
    assert frame["name"].tolist() == ["x", "y"] and frame["n"].dtype == "int64"
    assert "2 line(s) of notes below the table left out" in inspect(path)["notes"]


@pytest.mark.parametrize(
    ("text", "columns", "said"),
    [
        # A trailing delimiter on every line (weird_head_padding.csv: 'Unnamed: 10').
        pytest.param("name;n;\nx;1;\ny;2;\n", ["name", "n"], True, id="trailing-delimiter"),
        # A spacer column between two blocks (large.xlsx's data sheet: 'Unnamed: 4').
        pytest.param(
            "name;n;;city\nx;1;;Oslo\ny;2;;Bergen\n", ["name", "n", "city"], True, id="spacer"
        ),
        # Kept: an unnamed column with values, a named empty one, the columns of no rows.
        pytest.param(
            ";1985;1993\nChirurgie;1;2\nThorax;3;4\n",
            ["Unnamed: 0", "1985", "1993"],
            False,
            id="unnamed-with-values",
        ),
        pytest.param("name,n,note\nx,1,\ny,2,\n", ["name", "n", "note"], False, id="named-empty"),
        pytest.param("name,n,\n", ["name", "n", "Unnamed: 2"], False, id="no-rows"),
    ],
)
def test_an_empty_column_without_a_name_is_left_out(
    tmp_path: Path, text: str, columns: list[str], said: bool
) -> None:
    path = written(tmp_path, text)
    assert list(read_table(path).columns) == columns
    assert ("1 empty column(s) without a name left out" in inspect(path)["notes"]) == said


def test_a_last_row_with_missing_values_is_data(tmp_path: Path) -> None:
    path = written(tmp_path, "name,age,city\nAnn,31,Oslo\nBob,,\n")
    assert read_table(path)["name"].tolist() == ["Ann", "Bob"]


def test_padding_goes_from_names_and_values_not_from_inside(tmp_path: Path) -> None:
    path = written(tmp_path, ' kind ,n\n"NHS Facilities   ",1\n"two\nlines",2\n')
    frame = read_table(path)
    assert list(frame.columns) == ["kind", "n"]
    assert frame["kind"].tolist() == ["NHS Facilities", "two\nlines"]


def test_tidy_false_reads_the_file_as_written(tmp_path: Path) -> None:
    path = written(tmp_path, 'a,b\nx,"1,234"\ny,****\n')
    assert read_table(path, tidy=False)["b"].tolist() == ["1,234", "****"]


@pytest.mark.parametrize(
    ("name", "column", "check"),
    [
        pytest.param("mixedGLB.csv", "J-D", lambda s: s.isna().sum() == 1, id="glb-asterisks"),
        pytest.param(
            "weird_head_padding.csv", "2010", lambda s: s.sum() == 17818, id="doctors-dot-thousands"
        ),
        pytest.param(
            "begrotingsanalyse-2011.csv", "Flevoland", lambda s: 387881 in list(s), id="provinces"
        ),
        pytest.param("example.tsv", "hour", pd.api.types.is_datetime64_any_dtype, id="tsv-dates"),
    ],
)
def test_real_messy_files_read_as_they_mean(name: str, column: str, check: Any) -> None:
    frame = read_table(str(REAL / name))
    assert check(frame[column])


def test_every_tidied_read_with_line_reproduces_the_table() -> None:
    files = sorted(p for p in (TEST_DATA / "messy").iterdir() if p.suffix in {".csv", ".tsv"})
    tidied = 0
    for path in files:
        info = inspect(str(path))
        if info["status"] != "ok" or not info["read_with"].startswith("read_table("):
            continue
        tidied += 1
        frame = eval(info["read_with"], {"read_table": read_table})
        assert len(frame) == info["rows"], path.name
        assert [str(c) for c in frame.columns][:50] == [c["name"] for c in info["columns"]]
    assert tidied >= 3
