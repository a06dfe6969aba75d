from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import KernelExecutor


@pytest.fixture
def executor(tmp_path: Path) -> KernelExecutor:
    return KernelExecutor(tmp_path)
