"""Test-session ordering: the browser layer runs last, and all of it is marked `browser`.

Playwright's sync API keeps an event loop running in the main thread while its
browser is open, which would break the CPython layers' `asyncio.run`; so those
run first, and the browser (one per session) starts after them.
"""

from __future__ import annotations

import pytest


def _in_browser_layer(item: pytest.Item) -> bool:
    return "tests/browser/" in item.nodeid.replace("\\", "/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _in_browser_layer(item):
            # So `-m 'not browser'` leaves out every test of the layer (tests/README.md).
            item.add_marker(pytest.mark.browser)
    items.sort(key=_in_browser_layer)
