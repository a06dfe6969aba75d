"""Schema privacy over the whole request (issue 32, P4): every string that reaches the
model is filtered, also fields no part of the filter was written for: a value as the
name of a type or an error, a figure's label, a file's name, a result's status, the
fields a compromised sandbox fills or makes up, the question and imported code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reckon.agent import Agent
from reckon.agent.export._import import import_into
from reckon.agent.privacy._privacy import Privacy
from support import ScriptedModel

from .helpers import answer, code_reply, model_steps, run
from .privacy_kit import FreshScanExecutor, leaked

PEOPLE = "name,ssn,city\nCornelius Ashdown,555-01-2345,Vladivostok\nBob Quist,555-02-1111,Omsk\n"
SECRETS = ["Cornelius Ashdown", "555-01-2345", "Vladivostok", "Omsk", "Bob Quist"]
LOAD = "import pandas as pd\ndf = pd.read_csv('/data/people.csv')\n"


@pytest.fixture
def executor(tmp_path: Path) -> FreshScanExecutor:
    executor = FreshScanExecutor(tmp_path)
    executor.upload("people.csv", PEOPLE)
    return executor


def schema_agent(model: ScriptedModel, executor: Any) -> Agent:
    return Agent(model, executor, privacy=Privacy.parse("schema"), max_failures=9)


@pytest.mark.parametrize(
    "cell",
    [
        pytest.param("type(df['city'][0], (), {})()", id="a-value-as-a-type-name"),
        pytest.param("raise type(df['city'][1], (Exception,), {})('x')", id="an-error-type"),
        pytest.param("import matplotlib.pyplot as plt\nplt.plot([1, 2])\n"
                     "plt.gca().set_xlabel(df['name'][0])", id="a-figure-label"),
        pytest.param("open('/output/' + df['ssn'][0] + '.txt', 'w').write('x')",
                     id="a-file-name"),
        pytest.param("a = df['name'].tolist()", id="assigned-values"),
    ],
)  # fmt: skip
def test_what_a_cell_turns_a_value_into_is_filtered(executor: FreshScanExecutor, cell: str) -> None:
    code = (LOAD + cell).replace("/data/", str(executor.data_dir) + "/")
    model = ScriptedModel([code_reply(code), *[answer("Done.")] * 3])
    outcome = run(schema_agent(model, executor).ask("q", environment=executor.environment()))
    assert outcome["status"] == "ok", outcome
    shown = json.dumps(model_steps(outcome)[0]["result"], ensure_ascii=False)
    assert any(value in shown for value in SECRETS)  # the page does get the value
    assert leaked(model, SECRETS) == []


class CompromisedSandbox:
    """The sandbox answers as data, and a cell that took it over can make that data
    anything: here each field of its results, known or not, carries a value."""

    def __init__(self, executor: FreshScanExecutor) -> None:
        self.executor = executor

    async def scan(self, code: str) -> dict[str, Any]:
        return await self.executor.scan(code)  # the fresh worker: out of the cell's reach

    async def interrupt(self) -> None:
        await self.executor.interrupt()

    async def run(self, code: str) -> dict[str, Any]:
        result = await self.executor.run(code)
        return {
            **result,
            "status": "Vladivostok",
            "duration_ms": "Omsk",
            "result": {"type": "Cornelius Ashdown", "text": "x", "html": "<b>Bob Quist</b>"},
            "error": {"type": "555-01-2345", "message": "m", "line": "Omsk"},
            "files": [{"path": "/output/a.txt", "change": "Bob Quist", "size": "Omsk"}],
            "figures": [{"description": "a", "png": "Vladivostok", "title": "Omsk"}],
            "assigned": [{"name": "Vladivostok", "type": "Omsk", "text": "1"}],
            "restarted": "Cornelius Ashdown",
        }


def test_fields_a_compromised_sandbox_fills_are_filtered(executor: FreshScanExecutor) -> None:
    model = ScriptedModel([code_reply("print(1)"), *[answer("Done.")] * 3])
    sandbox = CompromisedSandbox(executor)
    outcome = run(schema_agent(model, sandbox).ask("q", environment=executor.environment()))
    assert outcome["status"] == "ok", outcome
    assert len(model.requests) >= 2
    assert leaked(model, SECRETS) == []


def test_the_question_and_imported_code_are_filtered_too(executor: FreshScanExecutor) -> None:
    model = ScriptedModel([answer("Done.")])
    agent = schema_agent(model, executor)
    script = f"# %%\nwho = 'Cornelius Ashdown'\nprint({str(executor.data_dir)!r})\n"
    imported = run(import_into(agent, script, name="old.py"))
    assert imported["status"] == "ok", imported
    outcome = run(agent.ask("how many rows say Vladivostok?", environment=executor.environment()))
    assert outcome["status"] == "ok", outcome
    assert leaked(model, SECRETS) == []
    assert "how many rows say [hidden]?" in json.dumps(model.requests[0].messages)
