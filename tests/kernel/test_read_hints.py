"""Errors of reading a table and of filtering its text carry their fix
(reckon.kernel._read_hints), through a real session: each seen with a small model
that failed three cells in a row on it."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from kernel_helpers import Runner


def _workbook(path: Path, titles: int) -> str:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "data"
    for line in ["2296 -- Piece information by series", "Report of 2020"][:titles]:
        sheet.append([line])
    sheet.append(["RptDate", "Series", "Pieces", "Value"])
    sheet.append(["2020-01-01", "A", 3, 1.5])
    sheet.append(["2020-01-02", "B", 4, 2.5])
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return str(path)


def _error(session: Runner, code: str) -> dict[str, object]:
    result = session(code)
    assert result["status"] == "error", result
    error: dict[str, object] = result["error"]
    return error


FARES = "d = pd.DataFrame({'票價': ['全票 100', None, '半票 50'], 'n': [1, 2, 3]})"


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        pytest.param(
            "d[d['票價'].str.contains('全票')]",
            "the column '票價' has 1 missing value (of 3), so the mask has NaN there too: pass "
            "na=False so that they count as no match: d['票價'].str.contains('全票', na=False)",
            id="contains",
        ),
        pytest.param(
            "m = d['票價'].str.startswith('全')\nd.loc[m, 'n'].sum()",
            "d['票價'].str.startswith('全', na=False)",
            id="startswith-on-an-earlier-line",
        ),
    ],
)
def test_a_text_filter_over_empty_cells_says_na_false(
    a_session: Runner, code: str, hint: str
) -> None:
    assert a_session(FARES)["status"] == "ok"
    error = _error(a_session, code)
    assert error["type"] == "ValueError" and hint in str(error["hint"])


def test_a_text_filter_without_empty_cells_runs(a_session: Runner) -> None:
    assert a_session(FARES.replace("None", "'兒童票 30'"))["status"] == "ok"
    assert a_session("print(len(d[d['票價'].str.contains('全票')]))")["stdout"] == "1\n"


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        pytest.param(
            "pd.read_table('{path}', sheet_name='data')",
            "pd.read_table is pandas' reader of text files and takes no sheet_name=; Reckon's "
            "read_table (no pd.) reads workbooks too and finds the header line: "
            "read_table('{path}', sheet='data')",
            id="pandas-read-table-with-sheet-name",
        ),
        pytest.param(
            "t = pd.read_table(\n    '{path}',\n    sheet='data',\n)",
            "read_table('{path}', sheet='data')",
            id="pandas-read-table-with-sheet",
        ),
        pytest.param(
            "pd.read_excel('{path}', sheet='data')",
            "pandas' read_excel calls it sheet_name: pd.read_excel('{path}', sheet_name='data'); "
            "or use Reckon's read_table('{path}', sheet='data') (no pd.)",
            id="read-excel-with-sheet",
        ),
    ],
)
def test_a_sheet_asked_of_the_wrong_reader_names_the_right_call(
    a_session: Runner, tmp_path: Path, code: str, hint: str
) -> None:
    path = _workbook(tmp_path / "data" / "large.xlsx", titles=0)
    error = _error(a_session, code.format(path=path))
    assert error["type"] == "TypeError" and hint.format(path=path) in str(error["hint"])
    assert a_session(f"t = read_table('{path}', sheet='data')")["status"] == "ok"


def test_another_unexpected_keyword_has_no_reader_hint(a_session: Runner, tmp_path: Path) -> None:
    path = _workbook(tmp_path / "data" / "large.xlsx", titles=0)
    error = _error(a_session, f"pd.read_excel('{path}', sheets='data')")
    assert error["type"] == "TypeError" and "hint" not in error


@pytest.mark.parametrize(
    ("read", "again"),
    [
        pytest.param(
            "pd.read_excel('{path}', sheet_name='data')",
            "pd.read_excel('{path}', sheet_name='data', header=2)",
            id="workbook",
        ),
        pytest.param(
            "pd.read_csv('{path}')", "pd.read_csv('{path}', header=2)", id="csv-with-a-title-line"
        ),
    ],
)
def test_a_header_below_title_lines_is_named_with_its_line(
    a_session: Runner, tmp_path: Path, read: str, again: str
) -> None:
    path = _workbook(tmp_path / "data" / "large.xlsx", titles=2)
    if "csv" in read:
        csv = tmp_path / "data" / "large.csv"
        csv.write_text(
            "2296 -- Piece information by series,,,\nReport of 2020,,,\n"
            "RptDate,Series,Pieces,Value\n2020-01-01,A,3,1.5\n"
        )
        path = str(csv)
    assert a_session(f"rows = {read.format(path=path)}")["status"] == "ok"
    error = _error(a_session, "rows['RptDate'].min()")
    sheet = ", sheet='data'" if "xlsx" in path else ""
    assert error["type"] == "KeyError" and error["hint"] == (
        "'RptDate' is in row 1 of rows, beside 'Series', 'Pieces', 'Value': the file's header "
        "is on a lower line than the first, and pandas took a line above it as the header. "
        f"Read it with Reckon's read_table (no pd.), which finds the header line: rows = "
        f"read_table('{path}'{sheet}); or {again.format(path=path)}"
    )
    for fixed in (again.format(path=path), f"read_table('{path}'{sheet})"):
        assert a_session(f"{fixed}['RptDate'].min()")["result"] is not None


def test_a_row_label_of_a_text_table_keeps_its_hint(a_session: Runner) -> None:
    # Every cell of the row 'Oslo' is text too, but the header above it is as full.
    made = a_session(
        "t = pd.DataFrame({'city': ['Oslo', 'Rome'], 'country': ['Norway', 'Italy'], "
        "'language': ['Norwegian', 'Italian']})"
    )
    assert made["status"] == "ok"
    error = _error(a_session, "t['Oslo']")
    assert "'Oslo' is not a column but a value of the column 'city'" in str(error["hint"])


def test_pandas_name_for_an_unnamed_column_says_how_pandas_reads_it(
    a_session: Runner, tmp_path: Path
) -> None:
    """Seen in a public benchmark question written against pd.read_csv: 'Unnamed: 8' of
    a file read_table had read below its title line, its empty columns left out."""
    path = tmp_path / "data" / "teams.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("TEAMS OF 2017,,,,\nWins,Name,,,Weight\n5,Ann,,,0.8\n3,Bo,,,\n2,Cy,,,\n")
    assert a_session(f"df = read_table('{path}')")["status"] == "ok"
    error = _error(a_session, "df['Unnamed: 4'].isna().mean()")
    assert error["type"] == "KeyError" and error["hint"] == (
        "df was read by Reckon's read_table, which finds the header line and leaves empty "
        "columns out; 'Unnamed: 4' is the name pandas gives a column when it reads the file "
        f"as written: df = pd.read_csv('{path}')"
    )
    assert a_session(f"pd.read_csv('{path}')['Unnamed: 4'].isna().sum()")["result"] is not None
    # A name no plain reading has either: the columns there are, as before.
    other = _error(a_session, "df['Unnamed: 9']")
    assert other["hint"].startswith("there is no column 'Unnamed: 9'")
