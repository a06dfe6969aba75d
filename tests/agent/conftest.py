from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import KernelExecutor
from .upstream import Upstream, serve


@pytest.fixture
def executor(tmp_path: Path) -> KernelExecutor:
    return KernelExecutor(tmp_path)


@pytest.fixture(scope="module")
def an_upstream_server() -> Iterator[Upstream]:
    """One fake OpenAI-compatible server on loopback per test module."""
    with serve() as server:
        yield server


@pytest.fixture
def upstream(an_upstream_server: Upstream) -> Upstream:
    """That server with no script left over and no payloads recorded from another test."""
    an_upstream_server.handlers.clear()
    an_upstream_server.payloads.clear()
    return an_upstream_server
