"""Export a session to .ipynb / .py, run it again on CPython, import it back."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest

from reckon.agent import (
    Agent,
    DemoModel,
    Transcript,
    build_system_prompt,
    export_notebook,
    export_script,
    import_cells,
    portable_paths,
    replay_cells,
    sandbox_paths,
)
from reckon.agent._import import import_into
from reckon.agent._privacy import Privacy
from reckon.eval._compare import compare_cell, normalize_text, table_values
from reckon.eval._eval import RunRecord, summarize
from reckon.eval._questions import Question
from reckon.eval._report import build_report, write_report
from reckon.eval._reproduce import reproduce_notebook
from reckon.kernel import Kernel as Session

from .helpers import KernelExecutor, ScriptedModel, answer, run


@pytest.mark.parametrize(
    ("code", "portable"),
    [
        pytest.param("pd.read_csv('/data/a b.csv')", "pd.read_csv('data/a b.csv')", id="single"),
        pytest.param('open("/output/x.png", "wb")', 'open("output/x.png", "wb")', id="double"),
        pytest.param("f'/data/{name}'", "f'data/{name}'", id="f-string"),
        pytest.param("r'/data/x'", "r'data/x'", id="raw"),
        pytest.param("x = '/etc/data/x'", "x = '/etc/data/x'", id="not-a-prefix"),
        pytest.param("# read /data/x.csv\nx = 1", "# read /data/x.csv\nx = 1", id="comment"),
        pytest.param("s = '''\n/data/x\n'''", "s = '''\n/data/x\n'''", id="multiline-kept"),
        pytest.param("def f(:\n  '/data/x'", "def f(:\n  '/data/x'", id="broken-code-kept"),
    ],
)
def test_paths_are_made_portable_only_inside_string_literals(code: str, portable: str) -> None:
    assert portable_paths(code) == portable
    if portable != code:
        assert sandbox_paths(portable) == code


@pytest.fixture
def a_finished_session(executor: KernelExecutor) -> tuple[KernelExecutor, Transcript]:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(
        {
            "region": ["East", "West", "North", "East", "West", "North"] * 3,
            "price": [float(i % 7 + 1) for i in range(18)],
            "qty": [i % 4 + 1 for i in range(18)],
        }
    )
    frame.to_csv(executor.data_dir / "sales.csv", index=False)
    agent = Agent(DemoModel(), executor)
    for question in (
        "summarize the data",
        "average price by region",
        "bar chart of qty by region",
        "what is 17*23+4",
    ):
        outcome = run(agent.ask(question, environment=executor.environment()))
        assert outcome["status"] == "ok", outcome
    return executor, agent.transcript


def test_the_notebook_is_valid_and_holds_questions_cells_outputs_and_answers(
    a_finished_session: tuple[KernelExecutor, Transcript],
) -> None:
    _, transcript = a_finished_session
    text = export_notebook(transcript)
    notebook = nbformat.reads(text, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert len(code) == 1 + len(replay_cells(transcript))  # the setup cell, then each ok cell
    assert "## average price by region" in markdown
    assert all(ask["answer"].splitlines()[0] in markdown for ask in transcript.asks)
    kinds = {o.output_type for c in code for o in c.outputs}
    assert {"stream", "display_data"} <= kinds
    pngs = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert pngs and pngs[0]["data"]["image/png"].startswith("iVBOR")


def test_the_exported_notebook_reproduces_on_cpython(
    a_finished_session: tuple[KernelExecutor, Transcript], tmp_path: Path
) -> None:
    """Run every exported cell in a fresh CPython session and compare its outputs."""
    _, transcript = a_finished_session
    notebook = json.loads(export_notebook(transcript))
    fresh = Session(data_dir=str(tmp_path / "fresh-data"), output_dir=str(tmp_path / "fresh-out"))
    compared = matched = 0
    differences: list[str] = []
    for cell in notebook["cells"][1:]:
        if cell["cell_type"] != "code":
            continue
        result: dict[str, Any] = asyncio.run(fresh.run("".join(cell["source"])))
        assert result["status"] == "ok", result["error"]
        for output in cell["outputs"]:
            compared += 1
            if output["output_type"] == "stream":
                same = "".join(output["text"]) == result[output["name"]]
            elif output["output_type"] == "execute_result":
                same = "".join(output["data"]["text/plain"]) == result["result"]["text"]
            else:  # a figure: the same description (pixels may differ by font hinting)
                descriptions = [f["description"] for f in result["figures"]]
                same = "".join(output["data"]["text/plain"]) in descriptions
            matched += same
            if not same:
                differences.append(f"cell {cell['execution_count']}: {output['output_type']}")
    assert compared >= 6
    assert matched == compared, differences


def test_cells_come_back_from_a_notebook_and_from_a_script(
    a_finished_session: tuple[KernelExecutor, Transcript],
) -> None:
    _, transcript = a_finished_session
    expected = [c.strip("\n") for c in replay_cells(transcript)]
    from_notebook = import_cells(export_notebook(transcript))
    from_script = import_cells(export_script(transcript))
    assert [c.strip("\n") for c in from_notebook] == expected
    assert [c.strip("\n") for c in from_script] == expected


def test_a_broken_notebook_gives_a_clear_message() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        import_cells("{not json")


def test_a_plain_script_is_one_cell() -> None:
    assert import_cells("import pandas as pd\nx = pd.read_csv('data/a.csv')\n") == [
        "import pandas as pd\nx = pd.read_csv('/data/a.csv')"
    ]


# Reproducibility, measured: the exported notebook runs again in a fresh CPython
# process (nothing pre-loaded; the export's setup cell must provide what it uses).


def test_reproduce_notebook_matches_every_cell_of_a_demo_session(
    a_finished_session: tuple[KernelExecutor, Transcript],
) -> None:
    executor, transcript = a_finished_session
    report = reproduce_notebook(export_notebook(transcript), data_dir=executor.data_dir)
    assert report["differences"] == []
    assert report["cells"] == len(replay_cells(transcript)) and report["share"] == 1.0
    assert report["outputs"] >= 6 and report["outputs_matched"] == report["outputs"]


@pytest.mark.parametrize(
    ("planted", "why"),
    [
        pytest.param("import random\nprint(random.random())", "randomness", id="random"),
        pytest.param("import numpy as np\nnp.random.rand(3)", "randomness", id="numpy-value"),
        pytest.param("import datetime\nprint(datetime.datetime.now())", "time", id="now"),
        pytest.param("import uuid\nprint(uuid.uuid4())", "randomness", id="uuid"),
        pytest.param("import os\nprint(os.getpid())", "environment", id="pid"),
    ],
)
def test_reproduce_notebook_names_the_cell_that_differs_and_why(
    a_finished_session: tuple[KernelExecutor, Transcript], planted: str, why: str
) -> None:
    executor, transcript = a_finished_session
    # Run the planted cell "in the browser" (here: the test's kernel) as an imported cell.
    agent = Agent(DemoModel(), executor)
    agent.transcript = transcript
    reply = run(import_into(agent, planted, name="planted.py"))
    assert reply["status"] == "ok", reply
    report = reproduce_notebook(export_notebook(transcript), data_dir=executor.data_dir)
    assert report["cells"] == len(replay_cells(transcript))
    assert report["matched"] == report["cells"] - 1 and report["share"] < 1.0
    (difference,) = report["differences"]
    assert why in difference["why"]
    assert difference["cell"] == report["cells"]  # the last code cell (0 is the setup)


def test_a_seeded_random_cell_reproduces(executor: KernelExecutor) -> None:
    agent = Agent(DemoModel(), executor)
    code = "import numpy as np\nrng = np.random.default_rng(0)\nprint(rng.normal(size=3))"
    assert run(import_into(agent, code, name="seeded.py"))["status"] == "ok"
    report = reproduce_notebook(export_notebook(agent.transcript), data_dir=executor.data_dir)
    assert (report["share"], report["differences"]) == (1.0, [])


def test_a_cell_that_fails_on_cpython_is_reported(executor: KernelExecutor) -> None:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    (executor.data_dir / "only-here.csv").write_text("a\n1\n")
    agent = Agent(DemoModel(), executor)
    path = str(executor.data_dir / "only-here.csv")
    code = f"import pandas as pd\nprint(len(pd.read_csv({path!r})))"
    assert run(import_into(agent, code, name="x.py"))["status"] == "ok"
    # Reproduced without the input file: the cell fails there, and the report says so.
    notebook = export_notebook(agent.transcript).replace(str(executor.data_dir), "/nowhere")
    report = reproduce_notebook(notebook)
    (difference,) = report["differences"]
    assert difference["output"] == "run" and "FileNotFoundError" in difference["why"]


def test_tables_compare_by_value_and_figures_by_size_and_description() -> None:
    html = "<table><tr><th></th><th>x</th></tr><tr><th>0</th><td>1.50</td></tr></table>"
    size = {"image/png": {"width": 640, "height": 480}}
    value = {"text/plain": ["     x\n0  1.50"], "text/html": [html]}
    figure = {"image/png": "iVBOR", "text/plain": ["Figure 1: bar chart"]}
    cell = {
        "source": ["df"],
        "outputs": [
            {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": value},
            {"output_type": "display_data", "metadata": size, "data": figure},
        ],
    }
    drawn = {"width": 640, "height": 480, "description": "Figure 1: bar chart"}
    table = {"text": "x\n0 1.5", "html": html.replace("1.50", "1.5")}
    same_values = {"status": "ok", "result": table, "figures": [drawn]}
    assert compare_cell(cell, same_values) == (2, [])
    tight_box = {**same_values, "figures": [{**drawn, "width": 642}]}  # text extents: +-px
    assert compare_cell(cell, tight_box) == (2, [])
    other = {
        **same_values,
        "figures": [{"width": 800, "height": 480, "description": "Figure 1: bar chart"}],
    }
    matched, (difference,) = compare_cell(cell, other)
    assert matched == 1 and "width 640 vs 800" in difference["why"]
    addresses = normalize_text("<object at 0x7f3a2b1c9d80>  \n/data/x.csv")
    assert addresses == normalize_text("<object at 0x55d0c0ffee00>\ndata/x.csv")
    assert table_values(html) == [["", "x"], ["0", "1.50"]]


# Import: the cells run in order, enter the transcript, and the model is told.


def test_importing_a_notebook_runs_its_cells_and_tells_the_model(
    a_finished_session: tuple[KernelExecutor, Transcript], tmp_path: Path
) -> None:
    executor, transcript = a_finished_session
    text = export_notebook(transcript)
    fresh = KernelExecutor(tmp_path / "fresh")
    fresh.data_dir.mkdir(parents=True, exist_ok=True)
    for path in executor.data_dir.iterdir():
        (fresh.data_dir / path.name).write_bytes(path.read_bytes())
    model = ScriptedModel([answer("df is still loaded.")])
    agent = Agent(model, fresh)
    reply = run(import_into(agent, text, name="session.ipynb"))
    cells = len(replay_cells(transcript))
    assert reply == {"status": "ok", "question": "Imported session.ipynb", "cells": cells,
                     "ok": cells, "failed": 0}  # fmt: skip
    assert "df" in fresh.session.namespace and "result" in fresh.session.namespace
    assert fresh.codes == import_cells(text)
    assert replay_cells(agent.transcript) == import_cells(text)
    run(agent.ask("what is loaded?", environment=fresh.environment()))
    told = "\n".join(str(m.get("content")) for m in model.requests[0].messages)
    assert "I imported session.ipynb" in told and "average price by region" not in told
    assert "groupby('region')" in told  # the code that ran is in the context
    assert json.loads(export_notebook(agent.transcript))["cells"][2]["source"] == [
        "## Imported session.ipynb"
    ]


def test_an_imported_cell_that_fails_is_counted(executor: KernelExecutor) -> None:
    agent = Agent(DemoModel(), executor)
    reply = run(import_into(agent, "x = 1\n# %%\n1/0\n# %%\ny = x + 1\n", name="s.py"))
    assert (reply["status"], reply["cells"], reply["ok"], reply["failed"]) == ("error", 3, 2, 1)
    assert "cell 2, ZeroDivisionError" in reply["message"]
    assert executor.session.namespace["y"] == 2


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("\x89PNG\r\n\x1a\n\x00\x00junk", "binary", id="binary"),
        pytest.param('{"nbformat": 3, "cells": []}', "nbformat 3", id="nbformat-3"),
        pytest.param('{"rows": [1, 2]}', "not a Jupyter notebook", id="other-json"),
        pytest.param("{broken", "not valid JSON", id="broken-json"),
        pytest.param("region,price\nEast,1 2\n", "neither a notebook nor valid Python", id="csv"),
        pytest.param("   \n", "empty", id="empty"),
        pytest.param(
            '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}',
            "no code cells",
            id="no-cells",
        ),
    ],
)
def test_bad_input_is_refused_with_what_to_do_and_changes_nothing(
    executor: KernelExecutor, text: str, says: str
) -> None:
    agent = Agent(DemoModel(), executor)
    reply = run(import_into(agent, text, name="upload"))
    assert reply["status"] == "error" and says in reply["message"]
    assert ".ipynb" in reply["message"] or "Jupyter" in reply["message"]
    assert executor.codes == [] and agent.transcript.asks == [] and agent.messages == []


def test_the_system_prompt_asks_for_seeds_and_no_clock() -> None:
    prompt = build_system_prompt({"files": []})
    assert "seed" in prompt and "datetime.now()" in prompt


def test_the_eval_report_has_the_cpython_column_and_each_difference(tmp_path: Path) -> None:
    question = Question("q1", "pick a random number", expected="@x[1]")
    same = RunRecord("q1", 1, "ok", cpython_cells=2, cpython_matched=2)
    differs = RunRecord("q1", 2, "ok", cpython_cells=2, cpython_matched=1)
    differs.cpython_differences = [
        {"cell": 2, "output": "stdout", "why": "it uses randomness without a fixed seed"}
    ]
    summary = summarize([question], [same, differs])
    assert summary["reproducibility_vs_cpython"] == 0.75
    assert summary["per_question"][0]["cpython"] == 0.75
    setup = {"questions_file": "q.jsonl", "repeat": 2, "model": "reckon-demo", "upstream": None,
             "started": "now", "wall_seconds": 1.0}  # fmt: skip
    report = build_report([question], [same, differs], summary, setup=setup)
    _, markdown = write_report(report, tmp_path)
    text = markdown.read_text()
    assert "| reproducibility vs CPython (exported notebook cells that match) | 75.0% |" in text
    assert "- q1, run 2, cell 2 (stdout): it uses randomness without a fixed seed" in text
    assert json.loads((tmp_path / "report.json").read_text())["runs"][1]["cpython_matched"] == 1


def test_in_schema_privacy_the_model_is_told_the_imported_code_but_not_its_output(
    executor: KernelExecutor,
) -> None:
    agent = Agent(DemoModel(), executor, privacy=Privacy.parse("schema"))
    reply = run(import_into(agent, "secret = 'Alice Smith'\nprint(secret)", name="p.py"))
    assert reply["status"] == "ok"
    told = agent.messages[0]["content"]
    assert "print(secret)" in told and "output not shown: schema privacy" in told
    assert "Alice Smith'\nprint" in told and "stdout" not in told


# Plain CPython: the exported script and notebook run where only pandas is installed.

PLAIN_SCRIPT = """\
import runpy, sys
sys.modules["reckon"] = None  # plain CPython: \"import reckon\" fails
names = runpy.run_path("session.py", run_name="__main__")
print("read_table from", names["read_table"].__module__)
"""
PLAIN_NOTEBOOK = """\
import json, sys
sys.modules["reckon"] = None
names = {"__name__": "__main__"}
for cell in json.load(open("session.ipynb"))["cells"]:
    if cell["cell_type"] == "code":
        exec("".join(cell["source"]), names)
print("read_table from", names["read_table"].__module__)
"""


def test_the_export_runs_on_plain_cpython_without_reckon(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    sales = pd.DataFrame({"region": ["East", "West", "East"], "price": [2.5, 4.0, 1.5],
                          "qty": [1, 2, 3]})  # fmt: skip
    sales.to_csv(executor.data_dir / "sales.csv", sep=";", index=False)
    with pd.ExcelWriter(executor.data_dir / "book.xlsx") as writer:
        sales.head(2).to_excel(writer, sheet_name="North", index=False)
        sales.tail(1).to_excel(writer, sheet_name="South", index=False)
    agent = Agent(DemoModel(), executor)
    for question in ("sql: average price by region", "summarize sales.csv"):
        outcome = run(agent.ask(question, environment=executor.environment()))
        assert outcome["status"] == "ok", outcome
    data = str(executor.data_dir)  # the browser's /data
    cells = (
        f"book = read_table('{data}/book.xlsx', sheet=None)\n"
        "print('sheets:', book.groupby('sheet').size().to_dict())\n"
        "# %%\n"
        "print('qty:', run_sql('SELECT region, SUM(qty) AS n FROM sales GROUP BY region')"
        ".set_index('region')['n'].to_dict())\n"
        f"print('rows:', len(read_table('{data}/sales.csv')))\n"
    )
    reply = run(import_into(agent, cells, name="cells.py"))
    assert reply["status"] == "ok", reply
    codes = "\n".join(replay_cells(agent.transcript))
    assert "run_sql(" in codes and "read_table(" in codes
    plain = tmp_path / "plain"
    shutil.copytree(executor.data_dir, plain / "data")
    shutil.rmtree(executor.data_dir)  # only the copy next to the export is there to read
    # The browser's cells read /data/..., which the export writes as data/...
    (plain / "session.py").write_text(export_script(agent.transcript).replace(data, "data"))
    (plain / "session.ipynb").write_text(export_notebook(agent.transcript).replace(data, "data"))
    for runner in (PLAIN_SCRIPT, PLAIN_NOTEBOOK):
        done = subprocess.run(
            [sys.executable, "-c", runner], cwd=plain, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "sheets: {'North': 2, 'South': 1}" in done.stdout
        assert "qty: {'East': 4, 'West': 2}" in done.stdout and "rows: 3" in done.stdout
        assert "read_table from __main__" in done.stdout  # the stand-in, not reckon's
    assert sorted(p.name for p in plain.iterdir()) == ["data", "output", "session.ipynb",
                                                      "session.py"]  # fmt: skip
