"""Reproducibility, measured: the exported notebook runs again in a fresh CPython
process, cell by cell; what differs is named with its cause, and the eval report
carries the CPython column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reckon.agent import (
    Agent,
    DemoModel,
    Transcript,
    build_system_prompt,
    export_notebook,
    replay_cells,
)
from reckon.agent.export._import import import_into
from reckon.eval._eval import RunRecord, summarize
from reckon.eval._questions import Question
from reckon.eval._report import build_report, write_report
from reckon.reproduce import compare_cell, normalize_text, reproduce_notebook, table_values

from .helpers import KernelExecutor, run

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
