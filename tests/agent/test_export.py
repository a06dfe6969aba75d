"""Export a session to .ipynb / .py: paths made portable, a valid notebook with the
questions, cells, outputs and answers, which runs again on CPython, also where Reckon
is not installed."""

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
    export_notebook,
    export_script,
    portable_paths,
    replay_cells,
    sandbox_paths,
)
from reckon.agent.export._import import import_into
from reckon.kernel import Kernel as Session

from .helpers import KernelExecutor, run


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
        "print('qty:', run_sql('SELECT region, SUM(qty) AS n FROM sales GROUP BY region "
        "ORDER BY region').set_index('region')['n'].to_dict())\n"
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


def test_a_cell_s_host_tool_calls_are_in_its_metadata_with_big_arguments_sized() -> None:
    """Each call's name, arguments and status; arguments over 10,000 characters of JSON
    only by their size; a cell that called no tool has no ``tools`` key."""
    big = {"ids": list(range(5000))}
    calls = [
        {"call": 1, "runId": 3, "name": "get_orders", "args": {"month": 3}, "status": "ok",
         "size": 66, "ms": 1},
        {"call": 2, "runId": 3, "name": "lookup", "args": big, "status": "timeout", "size": 0,
         "ms": 30000, "message": "lookup: no answer within 30 s"},
    ]  # fmt: skip
    steps = [
        {"kind": "code", "index": 0, "code": "x = 1", "result": {"status": "ok", "stdout": ""}},
        {"kind": "code", "index": 1, "code": "rows = await tools.get_orders(month=3)",
         "result": {"status": "ok", "stdout": "", "tools": calls}},
    ]  # fmt: skip
    notebook = json.loads(export_notebook({"asks": [{"question": "q", "steps": steps}]}))
    nbformat.validate(nbformat.from_dict(notebook))
    plain, tooled = [c["metadata"]["reckon"] for c in notebook["cells"][2:] if "step" in
                     c["metadata"].get("reckon", {})]  # fmt: skip
    assert "tools" not in plain
    assert tooled["tools"] == [
        {"name": "get_orders", "status": "ok", "args": {"month": 3}},
        {"name": "lookup", "status": "timeout", "args_chars": len(json.dumps(big)),
         "message": "lookup: no answer within 30 s"},
    ]  # fmt: skip
