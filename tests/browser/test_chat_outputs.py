"""The chat page's list of the files the analysis wrote follows the cells as they run:
a file a cell writes is listed while the ask is still under way, not only at its end
(the page lists the folders after each cell, and not after steps that run nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import a_chat_at
from .playlist_kit import Playlist

pytestmark = pytest.mark.browser

WRITE = "import pandas as pd\npd.DataFrame({'a': [1, 2]}).to_csv('/output/summary.csv')\nprint(2)"


@pytest.fixture(scope="module")
def a_chat_page(a_browser: Any, a_playlist_site: str) -> Iterator[Any]:
    with a_chat_at(a_browser, a_playlist_site) as page:
        yield page


def test_a_file_a_cell_wrote_is_listed_before_the_answer(
    a_chat_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    page = a_chat_page
    model, _ = a_playlist
    model.release.clear()
    model.queue = [("code", WRITE), ("held", "Two rows went to summary.csv: 2.")]
    page.evaluate(
        "() => { window.outcome = null; window.reckon.ask('Write the summary file',"
        " { model: 'scripted' }).then((o) => (window.outcome = o)); }"
    )
    written = page.locator("#output-list li.file").filter(has_text="summary.csv")
    try:
        written.wait_for(timeout=30_000)  # the answer is held until this is seen
        assert page.evaluate("() => window.outcome") is None
    finally:
        model.release.set()
    page.wait_for_function("() => window.outcome !== null")
    assert page.evaluate("() => window.outcome.status") == "ok"
    assert written.count() == 1
