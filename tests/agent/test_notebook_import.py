"""Import a notebook or a script back: its cells run in order, enter the transcript,
and the model is told (in schema privacy, without the outputs); bad input is refused
and changes nothing."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from reckon.agent import (
    Agent,
    DemoModel,
    Transcript,
    export_notebook,
    export_script,
    import_cells,
    replay_cells,
)
from reckon.agent.export._import import import_into
from reckon.agent.privacy._privacy import Privacy
from support import ScriptedModel

from .helpers import KernelExecutor, answer, run


def test_cells_come_back_from_a_notebook_and_from_a_script(
    a_finished_session: tuple[KernelExecutor, Transcript],
) -> None:
    _, transcript = a_finished_session
    expected = [c.strip("\n") for c in replay_cells(transcript)]
    from_notebook = import_cells(export_notebook(transcript))
    from_script = import_cells(export_script(transcript))
    assert [c.strip("\n") for c in from_notebook] == expected
    assert [c.strip("\n") for c in from_script] == expected


def test_a_pip_line_is_commented_out_in_a_script_and_comes_back_on_import() -> None:
    code = (
        "%pip install /data/tool-1.0-py3-none-any.whl\nimport tool\n!pip install /data/b.whl\n"
        "open('/data/x.csv')"
    )
    transcript = {"asks": [{"question": "q", "answer": "a", "steps": [
        {"kind": "code", "code": code, "result": {"status": "ok"}}]}]}  # fmt: skip
    script = export_script(transcript)
    ast.parse(script)  # a %pip line as it is would be a SyntaxError
    assert "# %pip install /data/tool-1.0-py3-none-any.whl" in script
    assert "open('data/x.csv')" in script  # the rest of the cell's paths are portable
    assert import_cells(script) == [code]


def test_a_broken_notebook_gives_a_clear_message() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        import_cells("{not json")


def test_a_plain_script_is_one_cell() -> None:
    assert import_cells("import pandas as pd\nx = pd.read_csv('data/a.csv')\n") == [
        "import pandas as pd\nx = pd.read_csv('/data/a.csv')"
    ]


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
    last = transcript.asks[-1]["question"]
    assert reply == {"status": "ok", "question": last, "cells": cells, "ok": cells,
                     "failed": 0, "asks": len(transcript.asks), "conversation": True}  # fmt: skip
    assert "df" in fresh.session.namespace and "result" in fresh.session.namespace
    assert fresh.codes == import_cells(text)
    assert replay_cells(agent.transcript) == import_cells(text)

    # The conversation came back whole: its questions and answers, each with its cells.
    def words(t: Transcript) -> list[tuple[str, str, str]]:
        return [(a["question"], a["status"], a["answer"]) for a in t.asks]

    assert words(agent.transcript) == words(transcript)

    def ran(a: dict[str, Any]) -> int:
        return sum(1 for s in a["steps"] if s["kind"] == "code" and s["result"]["status"] == "ok")

    assert [ran(a) for a in transcript.asks] == [len(a["steps"]) for a in agent.transcript.asks]
    run(agent.ask("what is loaded?", environment=fresh.environment()))
    told = "\n".join(str(m.get("content")) for m in model.requests[0].messages)
    assert "I imported session.ipynb" in told
    assert "groupby('region')" in told  # the code that ran is in the context
    assert all(a["question"] in told and a["answer"] in told for a in transcript.asks)
    again = json.loads(export_notebook(agent.transcript))
    assert again["cells"][2]["source"] == [f"## {transcript.asks[0]['question']}"]


def test_a_notebook_with_a_cell_of_no_ask_is_imported_as_cells(
    a_finished_session: tuple[KernelExecutor, Transcript], tmp_path: Path
) -> None:
    """Edited in Jupyter (a code cell added there), it is no longer the conversation
    Reckon exported: its cells are imported as one ask named after the file."""
    _, transcript = a_finished_session
    notebook = json.loads(export_notebook(transcript))
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None,
                              "outputs": [], "source": ["added = 1"]})  # fmt: skip
    fresh = KernelExecutor(tmp_path / "fresh")
    fresh.data_dir.mkdir(parents=True, exist_ok=True)
    for path in a_finished_session[0].data_dir.iterdir():
        (fresh.data_dir / path.name).write_bytes(path.read_bytes())
    agent = Agent(DemoModel(), fresh)
    reply = run(import_into(agent, json.dumps(notebook), name="edited.ipynb"))
    assert reply["asks"] == 1 and reply["question"] == "Imported edited.ipynb"
    assert reply["conversation"] is False
    assert [a["question"] for a in agent.transcript.asks] == ["Imported edited.ipynb"]
    assert "added" in fresh.session.namespace


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


def test_in_schema_privacy_the_model_is_told_the_imported_code_but_not_its_output(
    executor: KernelExecutor,
) -> None:
    agent = Agent(DemoModel(), executor, privacy=Privacy.parse("schema"))
    reply = run(import_into(agent, "secret = 'Alice Smith'\nprint(secret)", name="p.py"))
    assert reply["status"] == "ok"
    told = agent.messages[0]["content"]
    assert "print(secret)" in told and "output not shown: schema privacy" in told
    assert "Alice Smith'\nprint" in told and "stdout" not in told
