"""A run_sql query whose ``column = 'text'`` matches no row says so in the cell's notes,
with values the column does hold, and the sheet to read when the text names one
(reckon.kernel._sql_note; seen: a sheet's name filtered as a year, NaN, a made-up total)."""

from __future__ import annotations

import shutil
from pathlib import Path

from kernel_helpers import Runner

MESSY = Path(__file__).parent.parent / "data" / "messy"
SALES = "region,product,qty\nEast,a,1\nWest,b,2\nEast,c,3\nNorth Sea,a,4\n"


def _with_sales(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "sales.csv").write_text(SALES)


def test_a_filter_on_a_value_spelt_otherwise_names_the_columns_values(
    a_session: Runner, tmp_path: Path
) -> None:
    _with_sales(tmp_path)
    result = a_session("""run_sql("SELECT COUNT(*) AS n FROM sales WHERE region = 'north sea'")""")
    assert result["status"] == "ok" and result["result"]["text"].split()[-1] == "0"
    [note] = result["notes"]
    assert note.startswith("region = 'north sea' matches no row of sales;")
    # The one spelt like it comes first, before the rest in their order.
    assert note.endswith("'region' holds values such as 'North Sea', 'East', 'West'.")
    assert "[Reckon: region = 'north sea' matches no row" in result["stderr"]


def test_a_sum_of_no_rows_on_a_workbook_names_the_sheet_to_read(
    a_session: Runner, tmp_path: Path
) -> None:
    shutil.copy(MESSY / "large.ods", tmp_path / "data" / "large.ods")
    result = a_session(
        'run_sql("SELECT SUM(\\"Number of Offences\\") FROM large '
        'WHERE \\"Financial Year\\" = \'2010-11\'")'
    )
    assert result["status"] == "ok" and "NaN" in result["result"]["text"]
    [note] = result["notes"]
    assert "'Financial Year' holds values such as '2007/08'" in note
    path = str(tmp_path / "data" / "large.ods")
    assert (
        "'2010-11' is a sheet of large.ods, and the SQL table large is its first sheet "
        f"only: read_table({path!r}, sheet='2010-11') reads that one." in note
    )
    # Read as the note says, the sheet holds the rows.
    reread = a_session(f"read_table({path!r}, sheet='2010-11')['Number of Offences'].sum()")
    assert reread["result"]["text"] == "np.int64(4150916)" and not reread.get("notes")


def test_a_query_that_finds_rows_or_filters_no_column_has_no_note(
    a_session: Runner, tmp_path: Path
) -> None:
    _with_sales(tmp_path)
    for query in (
        "SELECT SUM(qty) AS q FROM sales WHERE region = 'East'",
        "SELECT region, SUM(qty) AS q FROM sales GROUP BY region",
        # Nothing matched, but the text is compared with no column of the table.
        "SELECT COUNT(*) AS n FROM sales WHERE 'a' = 'b'",
    ):
        result = a_session(f'run_sql("{query}")')
        assert result["status"] == "ok" and "notes" not in result, query


def test_a_failed_cell_leaves_no_note_to_the_next(a_session: Runner, tmp_path: Path) -> None:
    _with_sales(tmp_path)
    failed = a_session("""run_sql("SELECT COUNT(*) FROM sales WHERE region = 'Mars'")\n1 / 0""")
    assert failed["status"] == "error"
    after = a_session("""run_sql("SELECT COUNT(*) AS n FROM sales WHERE region = 'West'")""")
    assert after["status"] == "ok" and "notes" not in after
