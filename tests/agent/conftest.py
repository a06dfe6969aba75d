from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import FakeUpstream, Script, a_fake_upstream

from .helpers import KernelExecutor

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
