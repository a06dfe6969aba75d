"""Fixtures of the agent tests: the real kernel behind the executor, a small sales
table, a finished demo session, and the fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from reckon.agent import Agent, DemoModel, Transcript
from support import FakeUpstream, Script, a_fake_upstream

from .helpers import KernelExecutor, run

# What the fake upstream answers once a test's handlers are used up.
NO_SCRIPT_LEFT = Script(status=500, body=b'{"error": {"message": "no script left"}}', stream=False)


@pytest.fixture
def executor(tmp_path: Path) -> KernelExecutor:
    return KernelExecutor(tmp_path)


@pytest.fixture
def sales(executor: KernelExecutor) -> KernelExecutor:
    """A small sales.csv in the executor's data folder (units: North 14, South 12, East 3)."""
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    rows = ["region,units", "North,5", "South,12", "North,9", "East,3"]
    (executor.data_dir / "sales.csv").write_text("\n".join(rows) + "\n")
    return executor


@pytest.fixture
def a_finished_session(executor: KernelExecutor) -> tuple[KernelExecutor, Transcript]:
    """Four questions to the demo model over an 18-row sales.csv: the executor and the
    transcript (what test_export, test_reproduce and test_notebook_import start from)."""
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


@pytest.fixture(scope="module")
def an_upstream_server() -> Iterator[FakeUpstream]:
    """One fake OpenAI-compatible server on loopback per test module."""
    with a_fake_upstream() as server:
        yield server


@pytest.fixture
def upstream(an_upstream_server: FakeUpstream) -> FakeUpstream:
    """That server with no script left over and no requests recorded from another test."""
    an_upstream_server.reset(script=NO_SCRIPT_LEFT)
    return an_upstream_server
