"""run_sql on DuckDB-wasm in a real browser: an upload queried in place through the
JS API, read_table's pushdown, a parse error, a query over DuckDB's memory limit, and
no network for DuckDB (the canary sees nothing).

Files under /data persist for the whole session, so each test uses its own names.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .helpers import ok, page_call, run, upload_file_object

pytestmark = pytest.mark.browser


def run_sql(page: Any, query: str) -> dict[str, Any]:
    """`window.reckon.runSql(query)`, the documented JS call."""
    body = "return await withDeadline(window.reckon.runSql(arg), deadlineMs, 'runSql');"
    result: dict[str, Any] = page_call(page, body, query, deadline_s=120)
    return result


SALES = "region,product,price,qty\nEast,a,10.5,1\nWest,b,20,2\nEast,c,30,3\nNorth,a,5,4\n"


def test_an_uploaded_csv_is_queried_in_place_by_duckdb(reckon: Any) -> None:
    reply = upload_file_object(reckon, "duck sales.csv", SALES.encode())
    assert reply["status"] == "ok", reply
    result = ok(run_sql(reckon, "SELECT region, SUM(qty) AS n, median(price) AS m FROM "
                                "duck_sales GROUP BY region ORDER BY region"))  # fmt: skip
    assert result["result"]["type"] == "DataFrame"
    lines = [line.split()[1:] for line in result["result"]["text"].splitlines()[1:]]
    assert [(r, int(n), float(m)) for r, n, m in lines] == [
        ("East", 4, 20.25), ("North", 4, 5.0), ("West", 2, 20.0)]  # fmt: skip
    # DuckDB read the File the page mounted: registered by reference, a view over it.
    check = (
        "from reckon.kernel import _sql\n"
        "db = _sql._database()\n"
        "print(_sql.sql_engine(), db.loaded['duck_sales'][3], "
        "_sql._database().engine.query(\"SELECT version() AS v\")['v'][0])"
    )
    out = ok(run(reckon, check))["stdout"].split()
    assert out[:2] == ["DuckDB", "VIEW"] and out[2].startswith("v1.")


def test_a_spreadsheet_column_of_numbers_and_text_is_queried_as_text(reckon: Any) -> None:
    # The table reaches DuckDB through Arrow, which takes one type per column: a real
    # spreadsheet's column of numbers and codes was refused whole, and with it every
    # query that so much as named the file's table.
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in [("item", "code"), ("a", 12), ("b", "X-7"), ("c", None)]:
        sheet.append(row)
    data = io.BytesIO()
    book.save(data)
    reply = upload_file_object(reckon, "mixed codes.xlsx", data.getvalue())
    assert reply["status"] == "ok", reply
    result = ok(run_sql(reckon, "SELECT item, code FROM mixed_codes ORDER BY item"))
    rows = [line.split()[1:] for line in result["result"]["text"].splitlines()[1:]]
    assert rows[:2] == [["a", "12"], ["b", "X-7"]], result["result"]["text"]


def test_read_table_pushes_columns_and_filters_down(reckon: Any) -> None:
    rows = "".join(
        f"{i},{'East' if i % 3 else 'West'},{i * 0.5},{'x' * 20}\n" for i in range(50_000)
    )
    reply = upload_file_object(reckon, "pushdown.csv", ("id,region,price,note\n" + rows).encode())
    assert reply["status"] == "ok", reply
    code = (
        "df = read_table('/data/pushdown.csv', columns=['id', 'price'], "
        "where=\"region = 'West' AND price >= 24000\")\n"
        "print(list(df.columns), len(df), int(df['id'].min()))"
    )
    assert ok(run(reckon, code))["stdout"].strip() == "['id', 'price'] 667 48000"


def test_parquet_and_json_lines_are_tables_read_by_read_table(reckon: Any) -> None:
    code = (
        "import pandas as pd\n"
        "frame = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1.5, 2.0, 3.0]})\n"
        "frame.to_parquet('/data/duck_parts.parquet')\n"
        "frame.to_json('/data/duck_lines.jsonl', orient='records', lines=True)\n"
        "p = run_sql('SELECT k, SUM(v) AS s FROM duck_parts GROUP BY k ORDER BY k')\n"
        "j = run_sql(\"SELECT COUNT(*) AS n FROM duck_lines WHERE k = 'a'\")\n"
        "from reckon.kernel import _sql\n"
        "kinds = [_sql._database().loaded[t][3] for t in ('duck_parts', 'duck_lines')]\n"
        "print(p.to_dict('records'), int(j['n'][0]), kinds)\n"
        "import numpy as np\n"
        "wide = pd.DataFrame({f'c{i}': np.arange(1000) * i for i in range(20)})\n"
        "wide.to_parquet('/data/duck_wide.parquet')\n"
        "w = run_sql('SELECT SUM(c3) AS s FROM duck_wide WHERE c1 < 10')\n"
        "print(int(w['s'][0]), _sql._database().engine.columns('duck_wide'))"
    )
    out = ok(run(reckon, code))["stdout"].strip().splitlines()
    # The sandbox's DuckDB has no Parquet or JSON extension and loads none.
    assert out[0] == "[{'k': 'a', 's': 4.5}, {'k': 'b', 's': 2.0}] 2 ['TABLE', 'TABLE']"
    # pyarrow reads only the columns the query names, straight from the file.
    assert out[1] == "135 ['c1', 'c3']"
    # DuckDB's own advice (INSTALL parquet; SET autoinstall_known_extensions=1) cannot
    # work here: the error says what does.
    failed = run_sql(reckon, "SELECT * FROM read_parquet('/data/duck_parts.parquet')")
    message = failed["error"]["message"]
    assert failed["status"] == "error" and "INSTALL" not in message, message
    assert "parquet extension cannot be loaded here" in message and "duck_parts" in message


def test_a_file_duckdb_cannot_parse_says_what_to_do(reckon: Any) -> None:
    rows = "".join(f"{i},{i * 2}\n" for i in range(30_000))
    reply = upload_file_object(reckon, "late bad.csv", ("id,value\n" + rows + "1,oops\n").encode())
    assert reply["status"] == "ok", reply
    result = run_sql(reckon, "SELECT SUM(value) AS s FROM late_bad")
    assert result["status"] == "error"
    message = result["error"]["message"]
    assert "SQL error (DuckDB)" in message and "all_varchar = true" in message, message
    assert "late_bad (late bad.csv): id, value" in message
    fixed = ok(run_sql(reckon, "SELECT COUNT(*) AS n FROM read_csv('/data/late bad.csv', "
                               "all_varchar = true)"))  # fmt: skip
    assert "30001" in fixed["result"]["text"]


# A second Sandbox on the page (the real frame and worker) whose DuckDB may use 24 MB.
SMALL_SANDBOX = """
  const { Sandbox } = await import("./sandbox/client.js");
  window.small = new Sandbox({ sqlMemoryLimitMB: 24 });
  await withDeadline(window.small.ready(), deadlineMs, "small sandbox");
"""


def test_a_query_over_duckdbs_memory_limit_fails_cleanly(reckon: Any) -> None:
    page_call(reckon, SMALL_SANDBOX, deadline_s=120)
    try:
        body = "return await withDeadline(window.small.run(arg), deadlineMs, 'run')"
        # DuckDB is not loaded at boot, nor by a cell that does not run SQL.
        probe = "import importlib.util\nprint(importlib.util.find_spec('_reckon_duckdb'))"
        assert ok(page_call(reckon, body, probe))["stdout"].strip() == "None"
        # SQL from a cell that does not name run_sql: it loads now, the cell says to rerun.
        hidden = page_call(reckon, body, "globals()['run' + '_sql']('SELECT 1')")
        assert hidden["status"] == "error"
        assert "it is loaded now: run the cell again" in hidden["error"]["message"]
        again = page_call(reckon, body, "globals()['run' + '_sql']('SELECT 7 AS x')")
        assert ok(again)["result"]["text"].split()[-1] == "7"
        # Three million groups of strings: far more than 24 MB.
        query = (
            "SELECT s, COUNT(*) AS n FROM (SELECT i::VARCHAR AS s FROM range(3000000) t(i)) "
            "GROUP BY s ORDER BY n DESC LIMIT 1"
        )
        result = page_call(reckon, body, f"run_sql({query!r})", deadline_s=120)
        assert result["status"] == "error", result
        assert "Out of Memory" in result["error"]["message"], result["error"]["message"]
        assert re.search(r"/2[23]\.\d MiB used", result["error"]["message"]), result["error"]
        assert not result["restarted"]
        after = page_call(reckon, body, "run_sql('SELECT 41 + 1 AS answer')", deadline_s=60)
        assert ok(after)["result"]["text"].split()[-1] == "42"
        # The limit is locked: a cell cannot raise it.
        raised = page_call(reckon, body, "run_sql(\"SET memory_limit = '3GB'\")", deadline_s=60)
        assert raised["status"] == "error", raised
        assert "lock" in raised["error"]["message"].lower(), raised["error"]["message"]
    finally:
        page_call(reckon, "window.small.close(); return true;")


def test_a_long_query_stops_at_the_cells_deadline_and_the_session_goes_on(reckon: Any) -> None:
    ok(run(reckon, "kept = 41"))
    body = "return await withDeadline(window.reckon.run(arg, {timeoutMs: 2000}), deadlineMs, 'run')"
    # Billions of rows: minutes of work in one thread, stopped by the deadline.
    cell = "run_sql('SELECT SUM(i % 7) AS s FROM range(5000000000) t(i)')"
    result = page_call(reckon, body, cell, deadline_s=60)
    assert result["status"] == "timeout", result
    assert result["error"]["type"] == "KeyboardInterrupt", result["error"]
    assert result["restarted"] is False  # cancelled in DuckDB, not by replacing the worker
    assert result["duration_ms"] < 10_000, result["duration_ms"]
    assert ok(run(reckon, "kept + 1"))["result"]["text"] == "42"


def test_a_cell_cannot_swap_duckdbs_runtime_functions(reckon: Any) -> None:
    """DuckDB's compiled code calls DUCKDB_RUNTIME.<function>(Module, …): a cell that
    swapped one through `js` was handed DuckDB's module (found in a review)."""
    assert upload_file_object(reckon, "duck swap.csv", SALES.encode())["status"] == "ok"
    ok(run_sql(reckon, "SELECT COUNT(*) AS n FROM duck_swap"))
    attack = (
        "import js\n"
        "from pyodide.ffi import create_proxy\n"
        "seen = []\n"
        "spy = create_proxy(lambda *args: seen.append(len(args)) or 0)\n"
        "for target, key, value in ((js.DUCKDB_RUNTIME, 'readFile', spy),\n"
        "                           (js.DUCKDB_RUNTIME, 'openFile', spy),\n"
        "                           (js.globalThis, 'DUCKDB_RUNTIME', js.Object.new())):\n"
        "    try:\n"
        "        setattr(target, key, value)\n"
        "    except Exception as exc:\n"
        "        print('refused', key, type(exc).__name__)\n"
        "n = run_sql('SELECT SUM(qty) AS n FROM duck_swap')['n'][0]\n"
        "print('seen', len(seen), 'n', n)\n"
    )
    out = ok(run(reckon, attack))["stdout"]
    assert "seen 0 n 10" in out, out
