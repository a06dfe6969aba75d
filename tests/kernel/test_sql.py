"""run_sql: the uploaded tables as DuckDB views over the files (tables for what DuckDB
cannot read in place), created on demand; read_table's columns=/where= pushdown; and
SQLite where DuckDB is missing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from reckon.kernel import Kernel as Session
from reckon.kernel import _sql, read_table, run_sql, sql_tables, table_name


@pytest.fixture
def a_data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "sales 2024.csv").write_text(
        "region,product,price,qty\nEast,a,10.5,1\nWest,b,20,2\nEast,c,30,3\nNorth,a,5,4\n"
    )
    # A messy one: cp1252, semicolons, decimal commas.
    (data / "prices.csv").write_bytes("städte;preis\nKöln;1,5\nBonn;2,25\n".encode("cp1252"))
    return data


@pytest.mark.parametrize(
    ("file_name", "table"),
    [
        pytest.param("sales 2024.csv", "sales_2024", id="spaces"),
        pytest.param("Q3=+é.xlsx", "q3", id="symbols"),
        pytest.param("2024.csv", "t_2024", id="leading-digit"),
        pytest.param("data.csv.gz", "data", id="compressed"),
    ],
)
def test_table_names_come_from_file_names(file_name: str, table: str) -> None:
    assert table_name(file_name) == table


def test_group_by_over_an_uploaded_csv(a_data_dir: Path) -> None:
    frame = run_sql(
        "SELECT region, SUM(price) AS total FROM sales_2024 GROUP BY region ORDER BY total DESC",
        data_dir=str(a_data_dir),
    )
    expected = pd.read_csv(a_data_dir / "sales 2024.csv").groupby("region")["price"].sum()
    assert list(frame["region"]) == list(expected.sort_values(ascending=False).index)
    assert frame["total"].tolist() == sorted(expected.tolist(), reverse=True)


def test_messy_files_get_sensible_types(a_data_dir: Path) -> None:
    frame = run_sql(
        "SELECT SUM(preis) AS s, MAX(städte) AS c FROM prices", data_dir=str(a_data_dir)
    )
    assert frame["s"].iloc[0] == pytest.approx(3.75)
    assert frame["c"].iloc[0] == "Köln"


def test_a_changed_file_is_loaded_again(a_data_dir: Path) -> None:
    path = a_data_dir / "sales 2024.csv"
    assert run_sql("SELECT COUNT(*) AS n FROM sales_2024", data_dir=str(a_data_dir))["n"][0] == 4
    path.write_text(path.read_text() + "South,d,1,1\n")
    assert run_sql("SELECT COUNT(*) AS n FROM sales_2024", data_dir=str(a_data_dir))["n"][0] == 5


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param(
            "SELECT nope FROM sales_2024", 'Referenced column "nope" not found', id="column"
        ),
        pytest.param("SELECT * FROM salez", "Table with name salez does not exist", id="table"),
        pytest.param("SELEC 1", "syntax error", id="syntax"),
    ],
)
def test_errors_name_the_tables_and_columns(a_data_dir: Path, query: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        run_sql(query, data_dir=str(a_data_dir))
    text = str(caught.value)
    assert "sales_2024 (sales 2024.csv): region, product, price, qty" in text
    assert "prices (prices.csv)" in text


def test_like_on_dates_is_told_to_compare_dates(tmp_path: Path) -> None:
    """Seen in a real-model run: ``date LIKE '2024-02-%'`` on a column read as dates,
    the same query twice."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "sales.csv").write_text("date,sales\n2024-01-30,5\n2024-02-02,7\n2024-02-27,1\n")
    query = "SELECT SUM(sales) AS s FROM sales WHERE date LIKE '2024-02-%'"
    with pytest.raises(ValueError, match="this column holds") as caught:
        run_sql(query, data_dir=str(data))
    assert "date >= '2024-02-01' AND date < '2024-03-01'" in str(caught.value)
    told = "SELECT SUM(sales) AS s FROM sales WHERE date >= '2024-02-01' AND date < '2024-03-01'"
    assert run_sql(told, data_dir=str(data))["s"][0] == 8


def test_the_session_has_run_sql_and_shows_a_table(a_data_dir: Path, tmp_path: Path) -> None:
    session = Session(data_dir=str(a_data_dir), output_dir=str(tmp_path / "out"))
    result = asyncio.run(session.run("run_sql('SELECT product, qty FROM sales_2024 LIMIT 2')"))
    assert result["status"] == "ok", result["error"]
    assert result["result"]["type"] == "DataFrame"
    assert "<table" in result["result"]["html"]
    failed = asyncio.run(session.run("run_sql('SELECT x FROM sales_2024')"))
    assert failed["status"] == "error"
    assert 'Referenced column "x" not found' in failed["error"]["message"]
    assert "Tables you can query" in failed["error"]["message"]


def test_sql_tables_lists_table_files(a_data_dir: Path) -> None:
    (a_data_dir / "notes.pdf").write_bytes(b"%PDF-1.4")
    assert set(sql_tables(str(a_data_dir))) == {"sales_2024", "prices"}


def test_a_column_with_spaces_written_with_underscores_gets_its_quoted_name(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "simple.psv").write_text("Year|First time buyers\n2001|10\n2002|20\n")
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT AVG(First_time_buyers) FROM simple", data_dir=str(data))
    text = str(caught.value)
    assert 'Did you mean "First time buyers"?' in text
    # The listing shows each name as a query must write it.
    assert 'simple (simple.psv): Year, "First time buyers"' in text
    fixed = run_sql('SELECT AVG("First time buyers") AS m FROM simple', data_dir=str(data))
    assert fixed["m"][0] == 15


def test_duckdb_has_the_functions_sqlite_lacked(a_data_dir: Path) -> None:
    frame = run_sql(
        "SELECT median(qty) AS m, stddev_samp(price) AS s FROM sales_2024",
        data_dir=str(a_data_dir),
    )
    assert frame["m"][0] == 2.5
    assert frame["s"][0] == pytest.approx(pd.Series([10.5, 20, 30, 5]).std())


@pytest.fixture
def on_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine where DuckDB is missing (a sandbox whose DuckDB did not load)."""
    monkeypatch.setattr(_sql, "_db", _sql._Database(_sql._SQLite(), "no DuckDB here"))


def test_without_duckdb_sqlite_answers(a_data_dir: Path, on_sqlite: None) -> None:
    assert _sql.sql_engine() == "SQLite"
    frame = run_sql("SELECT COUNT(*) AS n FROM sales_2024", data_dir=str(a_data_dir))
    assert frame["n"][0] == 4
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT median(qty) FROM sales_2024", data_dir=str(a_data_dir))
    assert 'SQLite has no median(); compute it in Python with pandas instead (df["column"]' \
        ".median())" in str(caught.value)  # fmt: skip
    assert "no DuckDB here" in str(caught.value)
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT nope FROM sales_2024", data_dir=str(a_data_dir))
    assert "Did you mean" not in str(caught.value)  # nothing close: no guess


# DuckDB reads clean files in place; messy ones go through read_table -----------------


def test_a_clean_csv_is_a_view_over_the_file_and_a_messy_one_a_table(a_data_dir: Path) -> None:
    run_sql("SELECT * FROM sales_2024, prices", data_dir=str(a_data_dir))
    loaded = _sql._database().loaded
    assert loaded["sales_2024"][3] == "VIEW"  # scanned as queries run, never loaded whole
    assert loaded["prices"][3] == "TABLE"  # cp1252 and decimal commas: read_table read it


def test_a_query_may_name_a_file_by_its_path(a_data_dir: Path) -> None:
    path = a_data_dir / "sales 2024.csv"
    frame = run_sql(f"SELECT COUNT(*) AS n FROM read_csv('{path}')", data_dir=str(a_data_dir))
    assert frame["n"][0] == 4


def test_junk_lines_and_decimal_commas_read_in_place(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "report.csv").write_text(
        "Exported by ShopTool\n\nwhen;region;amount\n2024-01-01;East;1,5\n2024-01-02;West;2,25\n"
    )
    frame = run_sql("SELECT SUM(amount) AS s, COUNT(*) AS n FROM report", data_dir=str(data))
    assert frame["s"][0] == pytest.approx(3.75)
    assert frame["n"][0] == 2
    # Small, and tidied by read_table (its dates are dates): SQL gets that same table.
    assert _sql._database().loaded["report"][3] == "TABLE"
    kinds = run_sql('SELECT typeof("when") AS t FROM report LIMIT 1', data_dir=str(data))
    assert "TIMESTAMP" in kinds["t"][0]


def test_sql_sees_the_table_pandas_sees_and_backticks_quote_names(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "doctors.csv").write_text(
        "title line\n\n;2009;2010\nSurgery;1.613;2.003\nRadiology;.;379\n\nSource: x\n"
    )
    frame = run_sql("SELECT SUM(`2010`) AS total FROM doctors", data_dir=str(data))
    assert frame["total"][0] == 2382
    assert run_sql("SELECT COUNT(*) AS n FROM doctors", data_dir=str(data))["n"][0] == 2


def test_a_row_duckdb_cannot_parse_gets_a_message_that_says_what_to_do(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = "".join(f"{i},{i * 2}\n" for i in range(30_000))  # past DuckDB's type sample
    (data / "late.csv").write_text("id,value\n" + rows + "30000,not a number\n")
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT SUM(value) FROM late", data_dir=str(data))
    text = str(caught.value)
    assert "all_varchar = true" in text and "ignore_errors = true" in text
    assert "late (late.csv): id, value" in text
    fixed = run_sql(
        f"SELECT COUNT(*) AS n FROM read_csv('{data / 'late.csv'}', all_varchar = true)",
        data_dir=str(data),
    )
    assert fixed["n"][0] == 30_001


def test_a_file_that_is_no_table_gets_read_tables_message(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "broken.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT * FROM broken", data_dir=str(data))
    assert "broken.xlsx" in str(caught.value)


# read_table(columns=, where=): the engine scans the file, the frame holds the answer --


def test_read_table_pushes_columns_and_a_filter_down(a_data_dir: Path) -> None:
    path = str(a_data_dir / "sales 2024.csv")
    frame = read_table(path, columns=["region", "price"], where="price > 20 AND region = 'East'")
    assert list(frame.columns) == ["region", "price"]
    assert frame.to_dict("records") == [{"region": "East", "price": 30.0}]
    # Messy files too (read_table loads them, the filter runs in DuckDB).
    messy = read_table(str(a_data_dir / "prices.csv"), columns=["preis"], where="preis > 2")
    assert messy["preis"].tolist() == [2.25]


def test_read_table_pushdown_errors_name_the_columns(a_data_dir: Path) -> None:
    with pytest.raises(ValueError) as caught:
        read_table(str(a_data_dir / "sales 2024.csv"), columns=["prize"])
    assert "sales 2024.csv has the columns: region, product, price, qty" in str(caught.value)
    with pytest.raises(ValueError, match="cannot be combined"):
        read_table(str(a_data_dir / "sales 2024.csv"), where="qty > 1", sep=";")


def test_a_spreadsheet_column_of_numbers_and_text_is_queried_as_text(a_data_dir: Path) -> None:
    # Real spreadsheets mix types in a column; one type per column is all Arrow and
    # DuckDB take, and the table used to be refused whole ("Expected bytes, got a 'int'").
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in [("item", "code", "n"), ("a", 12, 1), ("b", "X-7", 2), ("c", None, 3)]:
        sheet.append(row)
    book.save(a_data_dir / "mixed.xlsx")
    frame = run_sql("SELECT item, code FROM mixed ORDER BY item", data_dir=str(a_data_dir))
    assert frame["code"].tolist()[:2] == ["12", "X-7"] and pd.isna(frame["code"].iloc[2])


def test_a_word_that_names_an_unreadable_file_does_not_fail_a_query_that_needs_none(
    a_data_dir: Path,
) -> None:
    # `s` is an alias here, and also the name of a file that cannot be read.
    (a_data_dir / "s.xlsx").write_bytes(b"not a spreadsheet")
    query = "SELECT SUM(price) AS s FROM sales_2024"
    assert run_sql(query, data_dir=str(a_data_dir))["s"].tolist() == [65.5]
    with pytest.raises(ValueError, match=r"s \(.*s\.xlsx\) could not be loaded"):
        run_sql("SELECT * FROM s", data_dir=str(a_data_dir))


# Parquet where the engine cannot scan it (DuckDB-wasm, SQLite): only needed columns ---


@pytest.mark.parametrize(
    ("text", "needed"),
    [
        pytest.param(
            "SELECT region, SUM(qty) FROM t GROUP BY region", ["region", "qty"], id="named"
        ),
        pytest.param('SELECT "Unit Price" * qty FROM t', ["qty", "Unit Price"], id="quoted"),
        pytest.param("SELECT COUNT(*) FROM t", ["region"], id="rows-only"),
        pytest.param("SELECT * FROM t WHERE qty > 1", ["region", "qty", "Unit Price"], id="star"),
        pytest.param("SELECT t.* FROM t", ["region", "qty", "Unit Price"], id="t-star"),
        pytest.param("SELECT REGION FROM t", ["region"], id="case"),
        pytest.param(None, ["region", "qty", "Unit Price"], id="everything"),
    ],
)
def test_a_query_needs_the_columns_it_names(text: str | None, needed: list[str]) -> None:
    from reckon.kernel._sql_columns import needed_columns

    assert needed_columns(text, ["region", "qty", "Unit Price"]) == needed


def test_parquet_is_loaded_a_few_columns_at_a_time(tmp_path: Path, on_sqlite: None) -> None:
    data = tmp_path / "data"
    data.mkdir()
    pd.DataFrame({"region": ["E", "W", "E"], "qty": [1, 2, 3], "note": ["x", "y", "z"]}).to_parquet(
        data / "orders.parquet"
    )
    db = _sql._database()
    frame = run_sql("SELECT region, SUM(qty) AS n FROM orders GROUP BY region ORDER BY region",
                    data_dir=str(data))  # fmt: skip
    assert frame.to_dict("records") == [{"region": "E", "n": 4}, {"region": "W", "n": 2}]
    assert db.engine.columns("orders") == ["region", "qty"]
    # A later query that needs more loads them; the table still answers the first.
    assert run_sql("SELECT note FROM orders WHERE qty = 2", data_dir=str(data))["note"][0] == "y"
    assert db.engine.columns("orders") == ["region", "qty", "note"]
    # A wrong column lists every column of the file, loaded or not.
    (data / "orders.parquet").unlink()
    pd.DataFrame({"region": ["E"], "qty": [5], "note": ["w"]}).to_parquet(data / "orders.parquet")
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT nope FROM orders", data_dir=str(data))
    assert "orders (orders.parquet): region, qty, note" in str(caught.value)
    assert db.engine.columns("orders") == ["region"]  # the new file: what that query named
    assert read_table(str(data / "orders.parquet"), columns=["note"], where="qty > 1")[
        "note"
    ].tolist() == ["w"]
