"""What a person does with the pages, through clicks and file pickers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import TEST_DATA


@pytest.fixture(scope="module")
def a_console(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    context = a_browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto(f"{a_static_server}/console.html")
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    yield page
    context.close()


def run_cell(page: Any, code: str) -> Any:
    page.locator("#code").fill(code)
    before = page.locator(".cell").count()
    page.get_by_role("button", name="Run (Shift+Enter)").click()
    cell = page.locator(".cell").first
    page.wait_for_function(
        "(n) => document.querySelectorAll('.cell .meta').length > n", arg=before, timeout=60_000
    )
    return cell


def test_a_person_uploads_a_csv_computes_charts_and_downloads(a_console: Any) -> None:
    page = a_console
    page.locator("#upload").set_input_files(str(TEST_DATA / "messy" / "simple.csv"))
    page.locator("#file-list").get_by_text("/data/simple.csv").wait_for()

    cell = run_cell(page, "df = read_table('/data/simple.csv')\ndf.head()")
    assert cell.locator("table.dataframe").count() == 1

    cell = run_cell(
        page,
        "import matplotlib.pyplot as plt\n"
        "df.iloc[:, -1].astype(str).value_counts().plot.bar(title='Counts')\n"
        "df.to_csv('/output/copy.csv', index=False)",
    )
    assert cell.locator("img.figure").count() == 1
    assert "Counts" in (cell.locator("img.figure").get_attribute("alt") or "")

    with page.expect_download() as download_info:
        cell.get_by_role("button", name="copy.csv").click()
    saved = Path(download_info.value.path())
    original = (TEST_DATA / "messy" / "simple.csv").read_text(errors="replace")
    assert saved.read_text().splitlines()[1:3] != []
    assert len(saved.read_text().splitlines()) == len(
        [line for line in original.splitlines() if line.strip()]
    )


def test_errors_and_html_in_data_show_as_text(a_console: Any) -> None:
    page = a_console
    cell = run_cell(
        page,
        "import pandas as pd\n"
        "pd.DataFrame({'a': ['<img src=x onerror=\"window.pwned=1\">', '<b>bold</b>']})",
    )
    table = cell.locator("table.dataframe")
    assert "<img src=x" in table.inner_text()
    assert table.locator("img, b").count() == 0
    assert page.evaluate("() => window.pwned") is None

    cell = run_cell(page, "def f():\n    return 1/0\nf()")
    error = cell.locator("pre.error").inner_text()
    assert "ZeroDivisionError" in error and "Cell line 3" in error
    assert error.count("division by zero") == 1 and error.startswith("ZeroDivisionError")


def test_a_hostile_file_name_is_listed_as_text(a_console: Any, tmp_path: Path) -> None:
    page = a_console
    name = '<img src=x onerror="window.pwned=2">.csv'
    path = tmp_path / "safe.csv"
    path.write_text("a\n1\n")
    page.locator("#upload").set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": path.read_bytes()}]
    )
    page.locator("#file-list").get_by_text(name, exact=False).wait_for()
    assert page.locator("#file-list img").count() == 0
    assert page.evaluate("() => window.pwned") is None


@pytest.fixture(scope="module")
def a_chat(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    context = a_browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto(f"{a_static_server}/index.html")
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    yield page
    context.close()


def test_a_person_queries_the_uploaded_table_in_sql(a_chat: Any, tmp_path: Path) -> None:
    page = a_chat
    sales = tmp_path / "sales.csv"
    sales.write_text("region,price,qty\nEast,10,1\nWest,20,2\nEast,30,3\nNorth,5,4\n")
    page.locator("#upload").set_input_files(str(sales))
    page.locator("#file-list").get_by_text("sales.csv").wait_for()
    page.get_by_text("SQL over your tables").click()

    page.locator("#sql").fill(
        "SELECT region, SUM(qty) AS n FROM sales GROUP BY region ORDER BY region"
    )
    page.get_by_role("button", name="Run SQL").click()
    table = page.locator(".turn.sql").last.locator("table.dataframe")
    table.wait_for(timeout=60_000)
    rows = [line.split("\t") for line in table.inner_text().splitlines()]
    assert [row[-2:] for row in rows[1:]] == [["East", "4"], ["North", "4"], ["West", "2"]]

    # A mistake comes back as the error, saying which tables and columns there are.
    page.locator("#sql").fill("SELECT nope FROM sales")
    page.get_by_role("button", name="Run SQL").click()
    error = page.locator(".turn.sql").nth(1).locator("pre.error")
    error.wait_for(timeout=60_000)
    assert "nope" in error.inner_text() and "region" in error.inner_text()
    # Said once: the traceback's last line, the same message, is not shown again.
    assert error.inner_text().count("Tables you can query") == 1


def test_a_person_imports_a_script_and_exports_the_session(a_chat: Any, tmp_path: Path) -> None:
    page = a_chat
    script = tmp_path / "analysis.py"
    script.write_text("# %%\ntotal = 6 * 7\n\n# %%\nprint(total + 1)\n")
    page.locator("#import").set_input_files(str(script))
    note = page.locator(".note.import").last
    note.wait_for(timeout=60_000)
    assert "Imported analysis.py: 2 cells" in note.inner_text()
    assert page.evaluate("() => window.reckon.run('total')")["result"]["text"] == "42"

    with page.expect_download() as download:
        page.get_by_role("button", name="Export notebook").click()
    assert download.value.suggested_filename == "reckon-session.ipynb"
    notebook = json.loads(Path(download.value.path()).read_text())
    assert notebook["nbformat"] == 4
    assert "total = 6 * 7" in "".join("".join(c["source"]) for c in notebook["cells"])

    with page.expect_download() as download:
        page.get_by_role("button", name="Export script").click()
    assert download.value.suggested_filename == "reckon-session.py"
    exported = Path(download.value.path()).read_text()
    compile(exported, "exported.py", "exec")
    assert "total = 6 * 7" in exported

    # A file that is not a notebook: said so, and nothing changes.
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    page.locator("#import").set_input_files(str(broken))
    refused = page.locator(".note.import.status-error").last
    refused.wait_for(timeout=30_000)
    assert "broken.ipynb was not imported" in refused.inner_text()
    assert page.evaluate("() => window.reckon.run('total')")["result"]["text"] == "42"
