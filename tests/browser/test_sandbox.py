"""The Python sandbox in a real browser: state across runs, streamed prints, tracebacks
that show only the cell, the trailing value, figures, and the output cap.

Every test gets a fresh namespace (`reckon` fixture); files under /data persist for
the whole session, so each test uses its own file names. The other sandbox modules:
test_sandbox_files.py (files and uploads), test_sandbox_restarts.py (timeouts,
interrupts, restarts), test_sandbox_walls.py (a first look at its walls).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from .helpers import (
    PNG_MAGIC,
    call,
    ok,
    run,
    run_streamed,
)

pytestmark = pytest.mark.browser


# State across runs ----------------------------------------------------------------


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


# Print streaming --------------------------------------------------------------------


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


# Tracebacks --------------------------------------------------------------------------

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


# Trailing value ---------------------------------------------------------------------


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


# Figures ------------------------------------------------------------------------------

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


# Output cap --------------------------------------------------------------------------


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
