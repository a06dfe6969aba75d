"""A month picked by the wrong number, on the chat page (#31): Reckon runs the model's
cell put right as a step of its own, labelled as Reckon's, and the answer's number is
traced to it. A scripted model behind `reckon serve` plays the small model's slip."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

from .helpers import a_chat_page_with, last_answer
from .playlist_kit import Playlist


def weather() -> str:
    """Daily rain over 2012: none in October, 3 mm a day in November (90 mm)."""
    days = [date(2012, 1, 1) + timedelta(days=n) for n in range(366)]
    rows = "".join(f"{d.isoformat()},{3.0 if d.month == 11 else 0.0}\n" for d in days)
    return "date,precipitation\n" + rows


def screenshots(page: Any, step: Any, stem: Path) -> None:
    """The step opened and in view at 1280 and 390 px, saved as STEM-WIDTH.png to look at."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        step.evaluate("(el) => { el.open = true; }")
        step.scroll_into_view_if_needed()
        page.screenshot(path=f"{stem}-{width}.png")
        print(f"{stem}-{width}.png")


def test_the_corrected_cell_is_a_step_of_its_own_and_the_answer_is_traced_to_it(
    a_browser: Any, a_playlist_site: str, a_playlist: tuple[Playlist, str], tmp_path: Path
) -> None:
    model, _ = a_playlist
    wrong = "print(df[df['date'].dt.month == 10]['precipitation'].sum())"
    model.queue = [("code", wrong), ("text", "It rained 0.0 mm in November.")]
    model.queue += [("text", "It rained 90.0 mm in November.")]
    viewport = {"width": 1280, "height": 900}
    with a_chat_page_with(a_browser, a_playlist_site, weather(), viewport=viewport) as page:
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
        screenshots(page, box, tmp_path / "correction")


def test_a_word_problem_worked_out_in_the_head_is_asked_again_as_a_program(
    a_browser: Any, a_playlist_site: str, a_playlist: tuple[Playlist, str], tmp_path: Path
) -> None:
    """No files: the model's first answer (numbers it did not compute) is set aside, the
    next call asks for a program in its place, and the answer is traced to its output."""
    model, _ = a_playlist
    # No number given (a word problem that gives two goes as a program from the start).
    question = "How many hours are there in a leap year?"
    model.queue = [("text", "There are 8760 hours."), ("code", "hours = 366 * 24\nprint(hours)")]
    model.queue += [("text", "There are 8784 hours.")]
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{a_playlist_site}/index.html")
        page.evaluate("() => window.reckon.ready()")
        page.locator("#question").fill(question)
        page.locator("#question").press("Enter")
        answer = last_answer(page)
        answer.wait_for(timeout=120_000)
        assert "8784 hours" in answer.inner_text()
        set_aside = page.locator("#messages details.step-recheck")
        assert "There are 8760 hours." in set_aside.inner_text()
        told = set_aside.locator(".recheck-told").inner_text()
        assert "Write a short Python program" in told and question in told
        code = page.locator("#messages details.step-code")
        assert code.count() == 1 and "366 * 24" in code.inner_text()
        index = code.get_attribute("data-step-index")
        link = answer.locator("button.num-link", has_text="8784")
        assert link.get_attribute("data-steps") == index
        assert not model.queue
        screenshots(page, set_aside, tmp_path / "draft")
    finally:
        context.close()


def test_an_answer_from_a_noted_output_goes_back_with_the_note_on_the_page(
    a_browser: Any, a_playlist_site: str, a_playlist: tuple[Playlist, str], tmp_path: Path
) -> None:
    """The kernel notes that no cell holds the text 'nan'; the answer resting on that
    output goes back once with the note, and the page shows what Reckon told the model."""
    model, _ = a_playlist
    read = "import pandas as pd\ndf = pd.read_csv('/data/sales.csv')\n"
    model.queue = [("code", read + "print(len(df[df['parking'] != 'nan']))")]
    # The second cell's lone output is the answer, read with no model call (_printed).
    model.queue += [("text", "@with_parking[5]"), ("code", "print(df['parking'].notna().sum())")]
    places = "name,parking\nTemple,north lot\nMuseum,\nFort,street\nGarden,\nPark,\n"
    viewport = {"width": 1280, "height": 900}
    with a_chat_page_with(a_browser, a_playlist_site, places, viewport=viewport) as page:
        page.locator("#question").fill(
            "How many places have parking? Answer as @with_parking[value]."
        )
        page.locator("#question").press("Enter")
        answer = last_answer(page)
        answer.wait_for(timeout=120_000)
        assert "@with_parking[2]" in answer.inner_text()
        by = answer.locator(".answered-by").inner_text()
        assert by.endswith("read from its code's output · 2 steps"), by
        recheck = page.locator("#messages details.step-recheck")
        assert recheck.count() == 1
        told = recheck.locator(".recheck-told").inner_text()
        assert "Reckon noted on the output of your last code: no cell of" in told
        assert not model.queue
        screenshots(page, recheck, tmp_path / "noted")
