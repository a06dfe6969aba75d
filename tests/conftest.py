"""Test-session ordering: the browser layer runs last.

Playwright's sync API keeps an event loop running in the main thread while its
browser is open, which would break the CPython layers' `asyncio.run`; so those
run first, and the browser (one per session) starts after them.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: "tests/browser/" in item.nodeid.replace("\\", "/"))
