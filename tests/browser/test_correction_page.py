"""A month picked by the wrong number, on the chat page (#31): Reckon runs the model's
cell put right as a step of its own, labelled as Reckon's, and the answer's number is
traced to it. A scripted model behind `reckon serve` plays the small model's slip."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from .helpers import a_chat_page_with, last_answer
from .playlist_kit import Playlist, a_playlist_server, a_relay_of


def weather() -> str:
    """Daily rain over 2012: none in October, 3 mm a day in November (90 mm)."""
    days = [date(2012, 1, 1) + timedelta(days=n) for n in range(366)]
    rows = "".join(f"{d.isoformat()},{3.0 if d.month == 11 else 0.0}\n" for d in days)
    return "date,precipitation\n" + rows


@pytest.fixture(scope="module")
def a_playlist() -> Iterator[tuple[Playlist, str]]:
    with a_playlist_server() as pair:
        yield pair


@pytest.fixture(scope="module")
def a_served_site(a_playlist: tuple[Playlist, str]) -> Iterator[str]:
    with a_relay_of(a_playlist[1]) as site:
        yield site


def test_the_corrected_cell_is_a_step_of_its_own_and_the_answer_is_traced_to_it(
    a_browser: Any, a_served_site: str, a_playlist: tuple[Playlist, str], tmp_path: Path
) -> None:
    model, _ = a_playlist
    wrong = "print(df[df['date'].dt.month == 10]['precipitation'].sum())"
    model.queue = [("code", wrong), ("text", "It rained 0.0 mm in November.")]
    model.queue += [("text", "It rained 90.0 mm in November.")]
    viewport = {"width": 1280, "height": 900}
    with a_chat_page_with(a_browser, a_served_site, weather(), viewport=viewport) as page:
        page.locator("#question").fill("How much precipitation fell in November?")
        page.locator("#question").press("Enter")
        answer = last_answer(page)
        answer.wait_for(timeout=120_000)
        assert "90.0" in answer.inner_text()
        steps = page.locator("#messages details.step-code")
        heads = [steps.nth(i).locator("summary").inner_text() for i in range(steps.count())]
        fixed = [h for h in heads if "Reckon re-ran the cell, put right (ok)" in h]
        assert len(fixed) == 1, heads
        box = steps.filter(has_text="Reckon re-ran the cell, put right")
        assert "with 11 in place of 10" in box.inner_text()
        assert "dt.month == 11" in box.locator("pre").first.inner_text()
        told = page.locator("#messages details.step-recheck .recheck-told")
        assert "Reckon told the model:" in told.inner_text()
        assert "dt.month == 11" in told.locator("pre").first.inner_text()  # a code block
        index = box.get_attribute("data-step-index")
        link = answer.locator("button.num-link", has_text="90.0")
        assert link.get_attribute("data-steps") == index
        assert not model.queue  # the model wrote no cell after the recheck
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            box.scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / f"correction-{width}.png"))
            print(tmp_path / f"correction-{width}.png")
