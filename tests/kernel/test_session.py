from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable

import pytest
from kernel_helpers import Runner


def test_variables_and_imports_persist_between_runs(a_session: Runner) -> None:
    assert a_session("import math\nx = 41")["status"] == "ok"
    result = a_session("x + 1 + math.floor(0.5)")
    assert result["status"] == "ok"
    assert result["result"] == {"type": "int", "text": "42"}


def test_namespace_looks_like_a_script_with_read_table(a_session: Runner) -> None:
    result = a_session("(__name__, callable(read_table))")
    assert result["result"]["text"] == "('__main__', True)"


@pytest.mark.parametrize(
    "cell",
    [
        pytest.param("__builtins__ = {'len': lambda x: 0}", id="assigned"),
        pytest.param(
            "class Back:\n    namespace = globals()\n"
            "    def __del__(self):\n        self.namespace['__builtins__'] = {}\n"
            "__builtins__ = Back()",
            id="put-back-by-a-finalizer",
        ),
    ],
)
def test_every_run_starts_with_the_real_builtins(a_session: Runner, cell: str) -> None:
    """Reckon's hidden privacy scan reaches its own namespace through them."""
    a_session(cell)
    result = a_session("import builtins\n(__builtins__ is builtins, len('abc'))")
    assert result["result"]["text"] == "(True, 3)"


def test_reset_forgets_variables(a_session: Runner) -> None:
    a_session("x = 1")
    a_session.session.reset()
    assert a_session("x")["error"]["type"] == "NameError"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("1 + 1", {"type": "int", "text": "2"}, id="trailing-expression"),
        pytest.param("1 + 1;", None, id="semicolon-suppresses"),
        pytest.param("1 + 1;  # quiet", None, id="semicolon-before-comment"),
        pytest.param("x = 1", None, id="assignment-shows-nothing"),
        pytest.param("None", None, id="none-shows-nothing"),
        pytest.param("'a;b'", {"type": "str", "text": "'a;b'"}, id="semicolon-in-string"),
    ],
)
def test_trailing_expression_is_the_result(
    a_session: Runner, code: str, expected: dict[str, str] | None
) -> None:
    result = a_session(code)
    assert result["status"] == "ok"
    assert result["result"] == expected


def test_dataframe_result_has_text_and_html(a_session: Runner) -> None:
    result = a_session("import pandas as pd\npd.DataFrame({'price': [1.5, 2.5]})")
    assert result["result"]["type"] == "DataFrame"
    assert "price" in result["result"]["text"]
    assert "<table" in result["result"]["html"]


def test_series_result_is_rendered_as_a_table(a_session: Runner) -> None:
    result = a_session("import pandas as pd\npd.Series([1, 2], name='n')")
    assert result["result"]["type"] == "Series"
    assert "<table" in result["result"]["html"]


def test_long_repr_is_capped_with_a_note(a_session: Runner) -> None:
    text = a_session("'x' * 100_000")["result"]["text"]
    assert len(text) < 30_000
    assert "more characters not shown" in text


def test_printing_streams_in_batches_before_the_end(a_session_with: Callable[..., Runner]) -> None:
    runner = a_session_with(stream_interval=0.02)
    result = runner("import time\nfor i in range(5):\n    print(i)\n    time.sleep(0.05)")
    assert result["stdout"] == "0\n1\n2\n3\n4\n"
    stdout_events = [text for name, text in runner.events if name == "stdout"]
    assert len(stdout_events) >= 3
    assert "".join(stdout_events) == result["stdout"]


def test_stderr_is_captured_separately(a_session: Runner) -> None:
    result = a_session("import sys\nprint('oops', file=sys.stderr)")
    assert result["stderr"] == "oops\n"
    assert result["stdout"] == ""


def test_output_over_the_cap_is_cut_with_a_note(a_session_with: Callable[..., Runner]) -> None:
    runner = a_session_with(output_limit=1000)
    result = runner("print('y' * 5000)")
    assert result["truncated"] is True
    assert result["stdout"].startswith("y" * 1000)
    assert "[output truncated: 4,001 more characters not shown" in result["stdout"]
    assert "/output" in result["stdout"]
    # The live view still gets everything: the cap is for what the result keeps.
    streamed = "".join(text for name, text in runner.events if name == "stdout")
    assert streamed == "y" * 5000 + "\n"


def test_the_live_stream_has_its_own_larger_cap(a_session_with: Callable[..., Runner]) -> None:
    runner = a_session_with(output_limit=1000, stream_limit=3000)
    result = runner("for i in range(1000):\n    print('line', i)\nprint('after')")
    assert result["status"] == "ok"
    assert result["truncated"] is True
    streamed = "".join(text for name, text in runner.events if name == "stdout")
    assert streamed.startswith("line 0\nline 1\n")
    assert streamed.endswith("[live output stopped here; the cell goes on]\n")
    assert len(streamed) < 3100
    assert "after" not in streamed


def test_a_hundred_thousand_lines_all_stream(a_session: Runner) -> None:
    result = a_session("for i in range(100_000):\n    print('line', i)")
    streamed = "".join(text for name, text in a_session.events if name == "stdout")
    lines = streamed.splitlines()
    assert len(lines) == 100_000
    assert lines[-1] == "line 99999"
    assert result["truncated"] is True  # the result itself stays small


def test_real_streams_come_back_after_an_error(a_session: Runner) -> None:
    import sys

    before = sys.stdout
    a_session("print('a')\n1/0")
    assert sys.stdout is before


def test_error_in_a_cell_function_shows_only_cell_frames(a_session: Runner) -> None:
    a_session("def ratio(a, b):\n    return a / b")
    result = a_session("x = 1\nratio(x, 0)")
    error = result["error"]
    assert result["status"] == "error"
    assert error["type"] == "ZeroDivisionError"
    assert error["message"] == "division by zero"
    assert error["line"] == 2
    assert "Cell line 2, in <module>" in error["traceback"]
    assert "return a / b" in error["traceback"]
    assert "reckon" not in error["traceback"]
    assert error["traceback"].endswith("ZeroDivisionError: division by zero")


def test_pandas_key_error_keeps_the_innermost_library_frame(a_session: Runner) -> None:
    result = a_session("import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf['nope']")
    error = result["error"]
    assert error["type"] == "KeyError"
    assert error["line"] == 3
    lines = error["traceback"].splitlines()
    assert sum("pandas" in line and line.strip().startswith("File") for line in lines) == 1
    assert "raise KeyError" in error["traceback"]
    assert "library frame" in error["traceback"]


@pytest.mark.parametrize(
    ("code", "kind", "line"),
    [
        pytest.param("x = 1\ny = (2 +\n", "SyntaxError", 2, id="unclosed-paren"),
        pytest.param("if True:\nprint(1)", "IndentationError", 2, id="indentation"),
        pytest.param("x = 1\nx ===== 2", "SyntaxError", 2, id="bad-operator"),
    ],
)
def test_syntax_errors_name_the_line_with_a_caret(
    a_session: Runner, code: str, kind: str, line: int
) -> None:
    error = a_session(code)["error"]
    assert error["type"] == kind
    assert error["line"] == line
    assert f"Cell line {line}" in error["traceback"]
    assert "^" in error["traceback"]


@pytest.mark.parametrize("line", ["!ls -la", "%timeit x = 1", "!conda install statsmodels"])
def test_a_shell_command_or_magic_says_why_it_cannot_run(a_session: Runner, line: str) -> None:
    error = a_session(f"import pandas as pd\n{line}\nprint(1)")["error"]
    assert error["type"] == "SyntaxError" and error["line"] == 2
    assert "no network" in error["message"] and "import directly" in error["message"]
    assert "%pip install /data/<file>.whl" in error["message"]
    assert "no network" in error["traceback"]


@pytest.mark.parametrize("line", ["!pip install pyjanitor", "%pip install -q statsmodels"])
def test_pip_install_of_a_package_not_shipped_says_why_and_what_to_do(
    a_session: Runner, line: str
) -> None:
    error = a_session(f"import pandas as pd\n{line}\nprint(1)")["error"]
    assert error["type"] == "InstallError" and error["line"] == 2
    assert "no network" in error["message"] and "%pip install /data/<file>.whl" in error["message"]


def test_an_ordinary_syntax_error_has_no_shell_hint(a_session: Runner) -> None:
    assert "shell" not in a_session("x = (1 +")["error"]["message"]


def test_top_level_await_works(a_session: Runner) -> None:
    result = a_session("import asyncio\nawait asyncio.sleep(0)\nawait asyncio.sleep(0, 'done')")
    assert result["status"] == "ok"
    assert result["result"]["text"] == "'done'"


@pytest.mark.parametrize(
    "cell",
    [
        "import asyncio\nawait asyncio.sleep(0)",
        "async def f():\n    return 1\nawait f()",
        "%pip install nothing-here",
    ],
)
def test_a_cell_that_may_await_is_left_to_the_event_loop(a_session: Runner, cell: str) -> None:
    assert a_session.session.run_now(cell) is None
    assert a_session.session.namespace.get("f") is None  # and nothing of it ran


def test_a_cell_run_at_once_gives_what_the_loop_gives(a_session: Runner) -> None:
    cell = "import os\nx = [1, 2]\nprint('hi')\nlen(x)"
    now = a_session.session.run_now(cell)
    looped = asyncio.run(a_session.session.run(cell))
    assert now is not None
    for result in (now, looped):
        assert (result["status"], result["stdout"], result["result"]) == (
            "ok",
            "hi\n",
            {"type": "int", "text": "2"},
        )
    assert set(now) == set(looped)


def test_keyboard_interrupt_is_interrupted_and_state_survives(a_session: Runner) -> None:
    result = a_session("kept = 5\nraise KeyboardInterrupt")
    assert result["status"] == "interrupted"
    assert result["error"]["type"] == "KeyboardInterrupt"
    assert result["error"]["message"] == "Execution interrupted"
    assert a_session("kept")["result"]["text"] == "5"


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        pytest.param("import sys\nsys.exit(2)", "SystemExit", id="system-exit"),
        pytest.param("raise MemoryError('big')", "MemoryError", id="memory-error"),
    ],
)
def test_fatal_looking_exceptions_are_plain_errors(a_session: Runner, code: str, kind: str) -> None:
    result = a_session(code)
    assert result["status"] == "error"
    assert result["error"]["type"] == kind
    assert a_session("1")["status"] == "ok"


def test_result_has_every_protocol_key(a_session: Runner) -> None:
    result = a_session("1")
    assert set(result) == {
        "status", "stdout", "stderr", "truncated", "result", "figures",
        "files", "error", "duration_ms", "restarted",
    }  # fmt: skip
    assert isinstance(result["duration_ms"], float)
    assert result["restarted"] is False


FIGURES = {
    "line": (
        "plt.plot([1, 2, 3], [4, 5, 7], label='Sales')\nplt.title('Sales by month')\n"
        "plt.xlabel('month')\nplt.ylabel('sales')",
        ["'Sales by month'", "x: month", "y: sales", "line 'Sales' (3 points", "y 4..7"],
    ),
    "bar": (
        "plt.bar(['Jan', 'Feb', 'Mar'], [3, 1, 2])\nplt.title('Orders')",
        ["'Orders'", "3 bars: Jan, Feb, Mar", "values 1..3"],
    ),
    "scatter": (
        "plt.scatter([1, 2, 3, 4], [2, 4, 6, 8])\nplt.xlabel('height')",
        ["scatter (4 points", "x: height"],
    ),
    "hist": (
        "plt.hist([1, 2, 2, 3, 3, 3, 4], bins=4)\nplt.suptitle('Spread')",
        ["Figure 1 'Spread'", "histogram (4 bins over 1..4"],
    ),
}


@pytest.mark.parametrize(("code", "phrases"), FIGURES.values(), ids=FIGURES.keys())
def test_figures_are_rendered_and_described(
    a_session: Runner, code: str, phrases: list[str]
) -> None:
    result = a_session("import matplotlib.pyplot as plt\n" + code)
    assert result["status"] == "ok", result["error"]
    [figure] = result["figures"]
    assert base64.b64decode(figure["png"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert figure["width"] > 100 and figure["height"] > 100
    for phrase in phrases:
        assert phrase in figure["description"]
    assert a_session("plt.get_fignums()")["result"]["text"] == "[]"


def test_plt_show_is_quiet_and_still_captures(a_session: Runner) -> None:
    result = a_session(
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\nplt.plot([3, 4, 5])"
    )
    assert result["stderr"] == ""
    assert len(result["figures"]) == 2
    assert "2 points" in result["figures"][0]["description"]
    assert "3 points" in result["figures"][1]["description"]


def test_a_runs_figures_are_held_to_their_byte_limit(a_session: Runner) -> None:
    """Noise does not compress: five 1000x1000 px images are about 3 MB of PNG each, and
    the run keeps what fits in 8 MB; a figure of 100,000 px a side is not drawn (A1)."""
    result = a_session(
        "import numpy as np, matplotlib.pyplot as plt\n"
        "rng = np.random.default_rng(0)\n"
        "for _ in range(5):\n"
        "    fig = plt.figure(figsize=(10, 10))\n"
        "    fig.figimage(rng.integers(0, 255, (1000, 1000, 3), dtype=np.uint8))\n"
        "plt.figure(figsize=(1000, 1000))"
    )
    assert result["status"] == "ok", result["error"]
    sizes = [len(base64.b64decode(f["png"])) for f in result["figures"]]
    assert 1 <= len(sizes) < 5 and sum(sizes) <= 8 << 20, sizes
    assert "this run's figures would pass 8 MB of PNG" in result["stderr"], result["stderr"]
    assert "Figure 6 not drawn: 100000x100000 px" in result["stderr"], result["stderr"]


def test_no_figures_without_matplotlib_use(a_session: Runner) -> None:
    assert a_session("x = 1")["figures"] == []


def test_files_created_and_modified_under_output(a_session: Runner) -> None:
    target = a_session.output_dir / "sub" / "summary.csv"
    result = a_session(
        f"import os\nos.makedirs({str(target.parent)!r}, exist_ok=True)\n"
        f"open({str(target)!r}, 'w').write('a,b\\n')"
    )
    assert result["files"] == [{"path": str(target), "size": 4, "change": "created"}]
    result = a_session(f"open({str(target)!r}, 'a').write('1,2\\n')")
    assert result["files"] == [{"path": str(target), "size": 8, "change": "modified"}]
    assert a_session("1")["files"] == []


def test_links_under_output_are_not_files_the_cell_wrote(a_session: Runner) -> None:
    """A link to another file, a hard link and /output replaced by a link to a folder
    of other files are not reported: the page stores what `files` lists (M1)."""
    out = a_session.output_dir
    other = out.parent / "elsewhere"
    other.mkdir()
    (other / "upload.csv").write_text("x" * 50)
    result = a_session(
        f"import os\nos.symlink({str(other / 'upload.csv')!r}, {str(out / 'link.csv')!r})\n"
        f"os.symlink({str(other)!r}, {str(out / 'folder')!r})\n"
        f"os.link({str(other / 'upload.csv')!r}, {str(out / 'hard.csv')!r})\n"
        f"open({str(out / 'mine.csv')!r}, 'w').write('a')"
    )
    assert result["files"] == [{"path": str(out / "mine.csv"), "size": 1, "change": "created"}]
    result = a_session(
        f"import os, shutil\nshutil.rmtree({str(out)!r})\nos.symlink({str(other)!r}, {str(out)!r})"
    )
    assert result["status"] == "ok", result["error"]
    assert result["files"] == []


@pytest.mark.parametrize(
    ("code", "assigned"),
    [
        ("m = sum([1.5, 2.25])", [{"name": "m", "type": "float", "text": "3.75"}]),
        ("a, b = 1, 'x'", [{"name": "a", "type": "int", "text": "1"},
                           {"name": "b", "type": "str", "text": "'x'"}]),
        ("n: int = 4", [{"name": "n", "type": "int", "text": "4"}]),
        ("n = 4\nn += 1", [{"name": "n", "type": "int", "text": "5"}]),
        ("v = None", None),  # nothing to show
        ("m = 2\nprint(m)", None),  # it printed: the model sees that
        ("d = {}\nd['k'] = 1", None),  # not a plain name
        ("m = 2\nm", None),  # a trailing expression is the result instead
        ("m = 1 / 0", None),  # failed
    ],
)  # fmt: skip
def test_a_silent_cell_that_ends_with_an_assignment_shows_the_values(
    a_session: Runner, code: str, assigned: list[dict[str, str]] | None
) -> None:
    result = a_session(code)
    assert result.get("assigned") == assigned
