"""Export a session to .ipynb / .py, run it again on CPython, import it back."""

from __future__ import annotations

import asyncio
import json
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
    import_cells,
    portable_paths,
    replay_cells,
    sandbox_paths,
)
from reckon.kernel import Session

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
