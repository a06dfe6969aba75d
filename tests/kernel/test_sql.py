"""run_sql: the uploaded tables as SQLite tables, created on demand."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from reckon.kernel import Kernel as Session
from reckon.kernel import run_sql, sql_tables, table_name


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
        pytest.param("SELECT nope FROM sales_2024", "no such column: nope", id="column"),
        pytest.param("SELECT * FROM salez", "no such table: salez", id="table"),
        pytest.param("SELEC 1", "syntax error", id="syntax"),
    ],
)
def test_errors_name_the_tables_and_columns(a_data_dir: Path, query: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        run_sql(query, data_dir=str(a_data_dir))
    text = str(caught.value)
    assert "sales_2024 (sales 2024.csv): region, product, price, qty" in text
    assert "prices (prices.csv)" in text


def test_the_session_has_run_sql_and_shows_a_table(a_data_dir: Path, tmp_path: Path) -> None:
    session = Session(data_dir=str(a_data_dir), output_dir=str(tmp_path / "out"))
    result = asyncio.run(session.run("run_sql('SELECT product, qty FROM sales_2024 LIMIT 2')"))
    assert result["status"] == "ok", result["error"]
    assert result["result"]["type"] == "DataFrame"
    assert "<table" in result["result"]["html"]
    failed = asyncio.run(session.run("run_sql('SELECT x FROM sales_2024')"))
    assert failed["status"] == "error"
    assert "no such column: x" in failed["error"]["message"]
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


def test_a_function_sqlite_lacks_points_to_pandas(a_data_dir: Path) -> None:
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT median(qty) FROM sales_2024", data_dir=str(a_data_dir))
    assert 'SQLite has no median(); compute it in Python with pandas instead (df["column"]' \
        ".median())" in str(caught.value)  # fmt: skip
    with pytest.raises(ValueError) as caught:
        run_sql("SELECT nope FROM sales_2024", data_dir=str(a_data_dir))
    assert "Did you mean" not in str(caught.value)  # nothing close: no guess
