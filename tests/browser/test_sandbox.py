"""The Python sandbox in a real browser: runs, streams, errors, figures, files,
timeouts, restarts, output caps and a first look at the sandbox's walls.

Every test gets a fresh namespace (`reckon` fixture); files under /data persist for
the whole session, so each test uses its own file names.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support import TEST_DATA

from .helpers import (
    Canary,
    a_canary,
    a_console,
    a_site_with_its_headers,
    call,
    page_call,
    read_file,
    run,
    run_streamed,
    upload_bytes,
    upload_file_object,
    write_file,
)

pytestmark = pytest.mark.browser

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def ok(result: dict[str, Any]) -> dict[str, Any]:
    """The result, after checking the run succeeded (with the error shown if not)."""
    assert result["status"] == "ok", result.get("error") or result
    return result


# 1. State across runs ----------------------------------------------------------------


def test_variables_imports_and_functions_persist_across_runs(reckon: Any) -> None:
    ok(run(reckon, "import math\nx = 41"))
    ok(run(reckon, "def grow(v):\n    return v + 1"))
    result = ok(run(reckon, "grow(x) + math.floor(0.5)"))
    assert result["result"]["text"] == "42"


def test_reset_forgets_the_namespace(reckon: Any) -> None:
    ok(run(reckon, "forgotten = 1"))
    assert call(reckon, "reset")["status"] == "ok"
    result = run(reckon, "forgotten")
    assert result["status"] == "error"
    assert result["error"]["type"] == "NameError"


# 2. Print streaming --------------------------------------------------------------------


def test_prints_stream_while_the_cell_runs(reckon: Any) -> None:
    code = "import time\nfor i in range(5):\n    print('line', i)\n    time.sleep(0.2)"
    out = run_streamed(reckon, code)
    result, chunks, elapsed = ok(out["result"]), out["chunks"], out["elapsed"]
    assert result["stdout"] == "".join(f"line {i}\n" for i in range(5))
    stdout_chunks = [c for c in chunks if c["name"] == "stdout"]
    assert len(stdout_chunks) > 1, chunks
    assert "".join(c["text"] for c in stdout_chunks) == result["stdout"]
    # The first line left the sandbox long before the run ended (~1 s of sleeps).
    assert stdout_chunks[0]["t"] < elapsed - 500, (stdout_chunks, elapsed)
    assert "line 0" in stdout_chunks[0]["text"]


# 3. Tracebacks --------------------------------------------------------------------------

OUR_TRACES = ("reckon", "_pyodide", "pyodide/", "/lib/python", "<exec>", 'File "/')


def test_runtime_error_traceback_shows_only_the_cell(reckon: Any) -> None:
    code = "def ratio(a, b):\n    return a / b\n\nx = 1\nratio(x, 0)\n"
    result = run(reckon, code)
    assert result["status"] == "error"
    error = result["error"]
    assert error["type"] == "ZeroDivisionError"
    assert error["message"] == "division by zero"
    assert error["line"] == 2
    traceback = error["traceback"]
    assert "Cell line 5, in <module>" in traceback
    assert "Cell line 2, in ratio" in traceback
    assert "return a / b" in traceback
    assert traceback.rstrip().endswith("ZeroDivisionError: division by zero")
    for ours in OUR_TRACES:
        assert ours not in traceback, traceback


def test_library_error_keeps_only_the_innermost_library_frame(reckon: Any) -> None:
    result = run(reckon, "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf['missing']")
    assert result["status"] == "error"
    error = result["error"]
    assert error["type"] == "KeyError"
    assert "Cell line 3, in <module>" in error["traceback"]
    assert "reckon" not in error["traceback"]
    assert error["traceback"].count('File "') <= 1, error["traceback"]


def test_syntax_error_names_the_line(reckon: Any) -> None:
    result = run(reckon, "x = 1\nif x == 1\n    print(x)\n")
    assert result["status"] == "error"
    error = result["error"]
    assert error["type"] == "SyntaxError"
    assert error["line"] == 2
    assert "Cell line 2" in error["traceback"]
    assert "if x == 1" in error["traceback"]
    for ours in OUR_TRACES:
        assert ours not in error["traceback"], error["traceback"]


def test_the_session_goes_on_after_errors(reckon: Any) -> None:
    ok(run(reckon, "kept = 'still here'"))
    assert run(reckon, "1/0")["status"] == "error"
    assert run(reckon, "raise SystemExit(3)")["status"] == "error"
    assert ok(run(reckon, "kept"))["result"]["text"] == "'still here'"


# 4. Trailing value ---------------------------------------------------------------------


def _is_int_42(value: dict[str, Any] | None) -> None:
    assert value is not None
    assert value["type"] == "int"
    assert value["text"] == "42"
    assert not value.get("html")


def _is_dataframe(value: dict[str, Any] | None) -> None:
    assert value is not None
    assert value["type"] == "DataFrame"
    assert "<table" in value["html"]
    assert "</table>" in value["html"]
    assert "Galway" in value["text"]
    assert "Galway" in value["html"]


def _is_nothing(value: dict[str, Any] | None) -> None:
    assert value is None


TRAILING = {
    "int": ("6 * 7", _is_int_42),
    "dataframe-html": (
        "import pandas as pd\npd.DataFrame({'place': ['Galway', 'Berkeley'], 't': [1, 6]})",
        _is_dataframe,
    ),
    "semicolon-suppresses": ("x = 42\nx;", _is_nothing),
    "assignment-has-none": ("y = 42", _is_nothing),
    "none-is-not-shown": ("None", _is_nothing),
}


@pytest.mark.parametrize(("code", "check"), TRAILING.values(), ids=TRAILING.keys())
def test_trailing_value(
    reckon: Any, code: str, check: Callable[[dict[str, Any] | None], None]
) -> None:
    check(ok(run(reckon, code))["result"])


def test_top_level_await(reckon: Any) -> None:
    result = ok(run(reckon, "import asyncio\nawait asyncio.sleep(0.01)\n5"))
    assert result["result"]["text"] == "5"


# 5. Figures ------------------------------------------------------------------------------

FIGURES = {
    "line": (
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3], [3.0, 9.5, 17.5], label='A')\n"
        "plt.title('Sales by month')\nplt.xlabel('month')\nplt.ylabel('sales')\n",
        "Sales by month",
    ),
    "bar": (
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\nax.bar(['north', 'south'], [4, 7])\n"
        "ax.set_title('Units per region');\n",
        "Units per region",
    ),
}


@pytest.mark.parametrize(("code", "title"), FIGURES.values(), ids=FIGURES.keys())
def test_figure_comes_back_as_png_with_a_description(reckon: Any, code: str, title: str) -> None:
    result = ok(run(reckon, code))
    assert len(result["figures"]) == 1, result["figures"]
    figure = result["figures"][0]
    png = base64.b64decode(figure["png"], validate=True)
    assert png.startswith(PNG_MAGIC)
    assert figure["width"] > 0
    assert figure["height"] > 0
    assert title in figure["description"]
    # Figures are closed after the run: the next run shows none.
    assert ok(run(reckon, "1"))["figures"] == []


# 6. Files ----------------------------------------------------------------------------------


def test_write_then_read_gives_back_every_byte_value(reckon: Any) -> None:
    data = bytes(range(256)) * 4
    reply = write_file(reckon, "/data/every-byte.bin", data)
    assert reply["status"] == "ok", reply
    assert reply["size"] == len(data)
    assert read_file(reckon, "/data/every-byte.bin") == data
    # Python in the sandbox sees the same bytes.
    code = "open('/data/every-byte.bin', 'rb').read() == bytes(range(256)) * 4"
    assert ok(run(reckon, code))["result"]["text"] == "True"


def test_a_file_written_by_a_cell_is_reported_and_readable(reckon: Any) -> None:
    call(reckon, "deleteFile", "/output/result.csv")  # left over from an earlier run, if any
    code = (
        "import pandas as pd\n"
        "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}).to_csv('/output/result.csv', index=False)"
    )
    result = ok(run(reckon, code))
    entries = [f for f in result["files"] if f["path"] == "/output/result.csv"]
    assert len(entries) == 1, result["files"]
    assert entries[0]["change"] == "created"
    content = read_file(reckon, "/output/result.csv")
    assert entries[0]["size"] == len(content)
    assert content.decode().splitlines() == ["a,b", "1,x", "2,y"]
    # Writing it again is a modification.
    again = ok(run(reckon, code.replace("[1, 2]", "[3, 4]")))
    assert [(f["path"], f["change"]) for f in again["files"]] == [
        ("/output/result.csv", "modified")
    ]
    listed = call(reckon, "listFiles", "/output")
    assert "/output/result.csv" in [f["path"] for f in listed]


def test_reading_a_missing_file_is_an_error(reckon: Any) -> None:
    body = """
      try { await window.reckon.readFile("/data/no such file.csv"); return "read"; }
      catch (err) { return String(err.message); }
    """
    message = page_call(reckon, body)
    assert message != "read"
    assert "no such file" in message


ODD_NAMES = ["ventes 2024 =+ é.csv", "Ünïcødé 数据 (copie).csv", "a+b=c & d's.csv"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_file_names_work_everywhere(reckon: Any, name: str) -> None:
    text = "mois,ventes\njanvier,10\nfévrier,12\nmars,9\n"
    path = f"/data/{name}"
    assert write_file(reckon, path, text.encode())["status"] == "ok"
    listed = call(reckon, "listFiles", "/data")
    entries = [f for f in listed if f["name"] == name]
    assert len(entries) == 1, [f["name"] for f in listed]
    assert entries[0]["path"] == path
    assert entries[0]["size"] == len(text.encode())
    assert read_file(reckon, path).decode() == text
    code = (
        f"import pandas as pd\ndf = pd.read_csv({path!r})\n"
        f"df.to_csv({'/output/' + name!r}, index=False)\n"
        "(df.shape, df['ventes'].sum(), df['mois'][1])"
    )
    result = ok(run(reckon, code))
    assert result["result"]["text"] == "((3, 2), np.int64(31), 'février')"
    assert f"/output/{name}" in [f["path"] for f in result["files"]]
    assert read_file(reckon, f"/output/{name}").decode() == text
    inspected = call(reckon, "inspect", path)
    assert inspected["status"] == "ok", inspected
    assert inspected["rows"] == 3


# 7. Uploads ----------------------------------------------------------------------------------

# What a French spreadsheet exports: cp1252, ';' between fields, decimal commas.
SALES_CSV = "région;units;price\nNîmes;4;2,5\nsud;7;3,0\nest;1;9,75\n".encode("cp1252")


def _check_sales_upload(reckon: Any, info: dict[str, Any], name: str) -> None:
    assert info["status"] == "ok", info
    assert info["path"] == f"/data/{name}"
    assert info["size"] == len(SALES_CSV)
    assert info["kind"] == "table"
    assert info["rows"] == 3
    assert info["columns"] == [
        {"name": "région", "dtype": "object"},
        {"name": "units", "dtype": "int64"},
        {"name": "price", "dtype": "float64"},
    ]
    check = "(df.shape, df['région'][0], float(df['price'].sum()))"
    expected = "((3, 3), 'Nîmes', 15.25)"
    code = f"df = read_table({info['path']!r})\n{check}"
    assert ok(run(reckon, code))["result"]["text"] == expected
    # The call inspect suggests (for the model's code) reads it the same way.
    code = f"import pandas as pd\ndf = {info['read_with']}\n{check}"
    assert ok(run(reckon, code))["result"]["text"] == expected


def test_upload_bytes_then_read_in_a_cell(reckon: Any) -> None:
    name = "ventes sud =+ é.csv"
    _check_sales_upload(reckon, upload_bytes(reckon, name, SALES_CSV), name)


def test_upload_a_file_object_then_read_in_a_cell(reckon: Any) -> None:
    name = "ventes fichier =+ é.csv"
    _check_sales_upload(reckon, upload_file_object(reckon, name, SALES_CSV), name)
    assert read_file(reckon, f"/data/{name}") == SALES_CSV


def test_upload_keeps_only_the_base_name(reckon: Any) -> None:
    info = upload_bytes(reckon, "../../etc/sneaky.csv", b"a,b\n1,2\n")
    assert info["status"] == "ok", info
    assert info["path"] == "/data/sneaky.csv"


# 8. Real messy uploads -------------------------------------------------------------------

MESSY_FILES = sorted(
    p
    for p in [*(TEST_DATA / "csv-spectrum" / "csvs").iterdir(), *(TEST_DATA / "messy").iterdir()]
    if p.name != "LICENSE"
)


def _upload_name(source: Path) -> str:
    return f"{source.parent.name}-{source.name}"


def _column_count(info: dict[str, Any]) -> int:
    """How many columns inspect found: it lists at most 50 and says so in a note."""
    for note in info.get("notes", []):
        if found := re.match(r"(\d+) columns; only the first (\d+) are listed", note):
            assert len(info["columns"]) == int(found[2])
            return int(found[1])
    return len(info["columns"])


@pytest.mark.parametrize(
    "source", MESSY_FILES, ids=[p.relative_to(TEST_DATA).as_posix() for p in MESSY_FILES]
)
def test_messy_upload_is_inspected_or_explained(reckon: Any, source: Path) -> None:
    name = _upload_name(source)
    info = upload_bytes(reckon, name, source.read_bytes())
    assert info["path"] == f"/data/{name}"
    assert info["size"] == source.stat().st_size
    assert info["status"] in ("ok", "error"), info
    if info["status"] == "error":
        assert isinstance(info["message"], str)
        assert info["message"].strip(), info
        return
    assert info["kind"] in ("table", "text"), info
    if info["kind"] == "table":
        assert info["rows"] >= 0
        assert all(isinstance(c["name"], str) and c["dtype"] for c in info["columns"]), info
        # The suggested call really reads it, to the shape inspect reported.
        code = f"import pandas as pd\n({info['read_with']}).shape"
        shape = (info["rows"], _column_count(info))
        assert ok(run(reckon, code))["result"]["text"] == repr(shape)


def test_the_sandbox_works_after_all_messy_uploads(reckon: Any) -> None:
    present = {f["name"] for f in call(reckon, "listFiles", "/data")}
    for source in MESSY_FILES:  # normally all there already, from the test above
        if _upload_name(source) not in present:
            upload_bytes(reckon, _upload_name(source), source.read_bytes())
    present = {f["name"] for f in call(reckon, "listFiles", "/data")}
    assert {_upload_name(p) for p in MESSY_FILES} <= present
    assert ok(run(reckon, "sum(range(10))"))["result"]["text"] == "45"


KNOWN_SHAPES = {
    "messy/simple.csv": (6, 3),
    "messy/simple.xlsx": (6, 3),
    "messy/simple.xls": (6, 3),
    "messy/simple.ssv": (6, 3),
    "messy/simple.psv": (28, 6),
    "messy/simple.zip": (6, 3),
    "messy/example.tsv": (140, 17),
    "csv-spectrum/csvs/simple.csv": (1, 3),
}


@pytest.mark.parametrize(("relative", "shape"), KNOWN_SHAPES.items(), ids=KNOWN_SHAPES.keys())
def test_read_table_gives_the_known_shape(
    reckon: Any, relative: str, shape: tuple[int, int]
) -> None:
    source = TEST_DATA / relative
    name = f"known-{source.parent.name}-{source.name}"
    info = upload_bytes(reckon, name, source.read_bytes())
    assert info["status"] == "ok", info
    assert (info["rows"], len(info["columns"])) == shape
    result = ok(run(reckon, f"read_table({info['path']!r}).shape"))
    assert result["result"]["text"] == repr(shape)


CSV_SPECTRUM = sorted((TEST_DATA / "csv-spectrum" / "csvs").glob("*.csv"))


@pytest.mark.parametrize("source", CSV_SPECTRUM, ids=[p.name for p in CSV_SPECTRUM])
def test_read_table_matches_the_csv_spectrum_rows(reckon: Any, source: Path) -> None:
    """Each csv-spectrum file must parse to the rows its json/ twin lists (as text)."""
    expected = json.loads((source.parent.parent / "json" / f"{source.stem}.json").read_text())
    name = f"spectrum-{source.name}"
    assert upload_bytes(reckon, name, source.read_bytes())["status"] == "ok"
    code = (
        "import json\n"
        f"df = read_table('/data/{name}', dtype=str, keep_default_na=False)\n"
        "print(json.dumps(df.to_dict('records')))"
    )
    assert json.loads(ok(run(reckon, code))["stdout"]) == expected


# 9-10. Timeouts, interrupts and restarts ---------------------------------------------------


@pytest.fixture(scope="module")
def an_isolated_page(a_browser: Any, a_built_site: Any) -> Iterator[Any]:
    """A second page, served with the build's headers (COOP/COEP, as `reckon serve`
    does), so the sandbox frame is cross-origin isolated and interrupts are soft."""
    with (
        a_site_with_its_headers(a_built_site) as url,
        a_console(a_browser, url, deadline_s=90) as (page, ready),
    ):
        assert ready["crossOriginIsolated"] is True, ready
        yield page


@pytest.fixture(params=["plain-server", "isolated"])
def either_page(request: pytest.FixtureRequest) -> Any:
    """The session's page (plain static server: hard interrupts) or the isolated one."""
    if request.param == "plain-server":
        return request.getfixturevalue("reckon")
    page = request.getfixturevalue("an_isolated_page")
    call(page, "reset")
    return page


def test_busy_loop_times_out_and_keeps_state(reckon: Any) -> None:
    ok(run(reckon, "before = 'kept'"))
    started = time.monotonic()
    result = run(reckon, "n = 0\nwhile True:\n    n += 1", timeout_ms=1500)
    assert time.monotonic() - started < 4
    assert result["status"] == "timeout", result
    assert result["restarted"] is False
    assert result["error"]["type"] == "KeyboardInterrupt"
    assert "timeoutMs" in result["error"]["message"]
    assert ok(run(reckon, "before, n > 0"))["result"]["text"] == "('kept', True)"


def test_sleep_times_out_and_keeps_state(reckon: Any) -> None:
    ok(run(reckon, "before = 'kept'"))
    started = time.monotonic()
    result = run(reckon, "import time\ntime.sleep(30)", timeout_ms=1500)
    assert time.monotonic() - started < 4
    assert result["status"] == "timeout", result
    assert result["restarted"] is False
    assert ok(run(reckon, "before"))["result"]["text"] == "'kept'"


def test_cell_that_swallows_the_interrupt_is_ended_by_a_restart(either_page: Any) -> None:
    page = either_page
    assert upload_bytes(page, "survives restart.csv", b"a,b\n1,2\n")["status"] == "ok"
    ok(run(page, "lost = 1"))
    swallow = (
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
    )
    started = time.monotonic()
    result = run(page, swallow, timeout_ms=1500, deadline_s=15)
    # 1.5 s limit + 3 s grace, then a new worker (a few seconds to boot).
    assert time.monotonic() - started < 15
    assert result["status"] == "timeout", result
    assert result["restarted"] is True
    # The next run works, with the uploaded file still there, and the variables
    # rebuilt by replaying the successful cells (persistence is on by default).
    after = run(page, "open('/data/survives restart.csv').read()", deadline_s=60)
    assert ok(after)["result"]["text"] == repr("a,b\n1,2\n")
    assert ok(run(page, "lost"))["result"]["text"] == "1"


def test_restart_forgets_variables_and_keeps_uploads(reckon: Any) -> None:
    assert upload_bytes(reckon, "kept over restart.csv", b"x\n1\n2\n")["status"] == "ok"
    ok(run(reckon, "gone = 1"))
    assert call(reckon, "restart", deadline_s=60)["status"] == "ok"
    result = run(reckon, "gone")
    assert result["status"] == "error"
    assert result["error"]["type"] == "NameError"
    assert (
        ok(run(reckon, "read_table('/data/kept over restart.csv').shape"))["result"]["text"]
        == "(2, 1)"
    )


def test_interrupt_stops_a_running_cell(either_page: Any) -> None:
    page = either_page
    assert upload_bytes(page, "kept over interrupt.csv", b"a\n1\n")["status"] == "ok"
    ok(run(page, "before = 'set'"))
    # As the console does it: the Interrupt button does not wait for interrupt(); the
    # next cell starts as soon as the interrupted one has its result.
    body = """
      const [code, next] = arg;
      let started;
      const startedP = new Promise((resolve) => (started = resolve));
      const onStream = (name, text) => { if (text.includes("started")) started(); };
      const running = window.reckon.run(code, { timeoutMs: 60000, onStream });
      await withDeadline(startedP, deadlineMs, "the cell's first print");
      const interrupting = window.reckon.interrupt();
      const result = await withDeadline(running, deadlineMs, "the interrupted run");
      const after = await withDeadline(window.reckon.run(next), deadlineMs, "the next run");
      const interrupt = await withDeadline(interrupting, deadlineMs, "interrupt");
      return { interrupt, result, after };
    """
    code = "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.05)"
    after = "open('/data/kept over interrupt.csv').read()"
    out = page_call(page, body, [code, after], deadline_s=30)
    assert out["interrupt"]["running"] is True, out["interrupt"]
    result = out["result"]
    assert result["status"] == "interrupted", result
    # Soft (KeyboardInterrupt, state kept) only when the frame is cross-origin isolated;
    # otherwise the worker is replaced.
    soft = out["interrupt"]["soft"]
    assert result["restarted"] is (not soft)
    # The next run works, and sees the uploads (re-mounted if the worker was replaced).
    assert ok(out["after"])["result"]["text"] == repr("a\n1\n")
    kept = run(page, "before")
    assert kept["status"] == ("ok" if soft else "error"), kept
    assert call(page, "interrupt") == {"status": "ok", "running": False}


# 11. Output cap --------------------------------------------------------------------------


def test_huge_output_is_truncated(reckon: Any) -> None:
    code = "for i in range(20_000):\n    print(f'{i:08d}' + 'y' * 41)"  # 1,000,000 chars
    result = ok(run(reckon, code))
    assert result["truncated"] is True
    assert len(result["stdout"]) < 1_000_000 // 5
    assert result["stdout"].startswith("00000000yyyy")
    assert result["stdout"].endswith("]")
    last = result["stdout"].rsplit("\n", 1)[-1]
    assert last.startswith("[output truncated:"), last
    assert "/output" in last


def test_small_output_is_not_truncated(reckon: Any) -> None:
    result = ok(run(reckon, "print('hello')"))
    assert result["truncated"] is False
    assert result["stdout"] == "hello\n"


# 12. Isolation smoke tests -------------------------------------------------------------------

PROBES = {
    "fetch-canary": """
import js
try:
    resp = await js.fetch("{canary}/fetch")
    print("REACHED", resp.status)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "fetch-own-site": """
import js
try:
    resp = await js.fetch("{site}/build-info.json")
    print("REACHED", resp.status)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "xhr-sync-canary": """
import js
try:
    xhr = js.XMLHttpRequest.new()
    xhr.open("GET", "{canary}/xhr", False)
    xhr.send()
    print("REACHED", xhr.status)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "importScripts-canary": """
import js
try:
    js.importScripts("{canary}/script.js")
    print("REACHED")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "websocket-canary": """
import asyncio, js
try:
    ws = js.WebSocket.new("ws://127.0.0.1:{canary_port}/ws")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
else:
    done = asyncio.get_running_loop().create_future()
    ws.onopen = lambda ev: done.done() or done.set_result("REACHED")
    ws.onerror = lambda ev: done.done() or done.set_result("BLOCKED onerror")
    ws.onclose = lambda ev: done.done() or done.set_result("BLOCKED onclose")
    print(await asyncio.wait_for(done, 5))
""",
    "document": """
import js
try:
    print("REACHED", js.document.title)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "localStorage": """
import js
try:
    js.localStorage.setItem("reckon-probe", "1")
    print("REACHED")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "indexedDB": """
import asyncio, js
try:
    request = js.indexedDB.open("reckon-probe")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
else:
    done = asyncio.get_running_loop().create_future()
    request.onsuccess = lambda ev: done.done() or done.set_result("REACHED")
    request.onerror = lambda ev: done.done() or done.set_result("BLOCKED onerror")
    print(await asyncio.wait_for(done, 5))
""",
}


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    with a_canary() as server:
        yield server


@pytest.mark.parametrize("probe", PROBES.values(), ids=PROBES.keys())
def test_the_sandbox_cannot_reach_out(
    reckon: Any, canary: Canary, a_static_server: str, probe: str
) -> None:
    code = probe.format(canary=canary.url, canary_port=canary.port, site=a_static_server)
    result = ok(run(reckon, code))
    assert result["stdout"].startswith("BLOCKED"), result["stdout"]
    assert canary.hits == []
    assert ok(run(reckon, "1 + 1"))["result"]["text"] == "2"


def test_the_canary_does_record_requests(canary: Canary) -> None:
    """The isolation tests would pass vacuously if the canary never recorded anything."""
    import urllib.request

    with urllib.request.urlopen(f"{canary.url}/control", timeout=5) as resp:
        assert resp.read() == b"canary"
    assert ("GET", "/control") in canary.hits
    canary.hits.clear()


REST_MANIFEST = """
import hashlib, importlib.metadata as md, json, os, sys
import pyodide_js
names = ("scipy", "scikit-learn", "pyarrow", "sympy", "seaborn", "pypdf", "joblib",
         "threadpoolctl", "mpmath", "openblas")
files = {}  # a digest of each top-level entry's files (bytes and names), bytecode aside
for top in (sys.prefix + "/lib/python3.12/site-packages", "/usr/lib", sys.prefix + "/share"):
    for root, dirs, found in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(found):
            path = os.path.join(root, name)
            key = top + "/" + os.path.relpath(path, top).split("/")[0]
            with open(path, "rb") as f:
                files.setdefault(key, hashlib.sha256()).update(path.encode() + f.read())
files = {key: h.hexdigest()[:16] for key, h in files.items()}
print(json.dumps({
    "loaded": {n: pyodide_js.loadedPackages.to_py().get(n) for n in names},
    "installer": {n: (md.distribution(n).read_text("INSTALLER"),
                      md.distribution(n).read_text("PYODIDE_SOURCE"))
                  for n in names if n != "openblas"},
    "files": files,
}))
"""
REST_IMPORTS = (
    "import scipy.stats, sklearn.linear_model, pyarrow, sympy, seaborn, pypdf, joblib, "
    "threadpoolctl, mpmath"
)


def test_the_background_install_leaves_what_load_package_leaves(
    a_browser: Any, a_static_server: str
) -> None:
    """The rest of the stack comes from web/sandbox-install.js in the background; a
    cell importing it first gets Pyodide's loadPackage. Both must leave the same files,
    records and native modules."""
    context = a_browser.new_context()
    try:
        manifests = []
        for first in ("imported at once", "installed in the background"):
            page = context.new_page()
            page.goto(f"{a_static_server}/console.html?snapshot=off")
            call(page, "ready", deadline_s=180)
            if first == "imported at once":  # before the worker's quiet time is up
                assert run(page, REST_IMPORTS, deadline_s=180)["status"] == "ok"
            else:  # an Arrow file's inspect waits for the background install
                call(page, "inspect", "/data/none.parquet", deadline_s=180)
            check = run(
                page,
                f"{REST_IMPORTS}\nimport numpy as np\n"
                "x = np.arange(5.0)\n"
                "m = sklearn.linear_model.LinearRegression().fit(x.reshape(-1, 1), 3 * x)\n"
                "print(scipy.stats.norm.cdf(0), round(float(m.coef_[0]), 6),"
                " pyarrow.array([1, 2]).sum().as_py(), sympy.diff(sympy.Symbol('x') ** 2))",
                deadline_s=120,
            )
            assert check["stdout"] == "0.5 3.0 3 2*x\n", check
            manifest = run(page, REST_MANIFEST, deadline_s=120)
            assert manifest["status"] == "ok", manifest
            manifests.append(json.loads(manifest["stdout"]))
            page.close()
        at_once, background = manifests
        assert set(background["loaded"].values()) == {"default channel"}, background["loaded"]
        recorded = background["installer"].values()
        assert all(v == ["pyodide.loadPackage", "pyodide"] for v in recorded), recorded
        assert background == at_once
    finally:
        context.close()
