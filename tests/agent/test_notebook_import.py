"""Import a notebook or a script back: its cells run in order, enter the transcript,
and the model is told (in schema privacy, without the outputs); bad input is refused
and changes nothing."""

from __future__ import annotations

import ast
import json
from pathlib import Path

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


def test_in_schema_privacy_the_model_is_told_the_imported_code_but_not_its_output(
    executor: KernelExecutor,
) -> None:
    agent = Agent(DemoModel(), executor, privacy=Privacy.parse("schema"))
    reply = run(import_into(agent, "secret = 'Alice Smith'\nprint(secret)", name="p.py"))
    assert reply["status"] == "ok"
    told = agent.messages[0]["content"]
    assert "print(secret)" in told and "output not shown: schema privacy" in told
    assert "Alice Smith'\nprint" in told and "stdout" not in told
