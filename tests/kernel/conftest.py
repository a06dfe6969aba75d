from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kernel_helpers import Runner


@pytest.fixture
def a_session(tmp_path: Path) -> Runner:
    return Runner(tmp_path)


@pytest.fixture
def a_session_with(tmp_path: Path) -> Callable[..., Runner]:
    return lambda **options: Runner(tmp_path, **options)
