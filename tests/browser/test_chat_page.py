"""The chat page as a new user meets it (issue #15): the first screen, an upload with
example questions, wide tables inside the window, scrolling to the answer, keys, no
CSP violations, the favicon, code, charts and copy buttons, the model picker, a
reload in the middle of an ask.

The tests go on in one page (`a_chat`), each from where the last left it. Numbers
tied to steps (grounding) are checked on a real demo answer here, and on a hand-made
outcome in test_chat_render.py; through a real relay in test_chat_relay.py.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest

from .helpers import last_answer, no_overflow

COLUMNS = [
    "date",
    "region",
    "product",
    "channel",
    *[f"metric_{i}" for i in range(1, 13)],
    "revenue",
    "units",
]


def wide_csv(rows: int = 40) -> bytes:
    """18 columns: a table far wider than the chat column."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for r in range(rows):
        metrics = [round((r * 37 + i * 11) % 997 + 0.25, 2) for i in range(12)]
        date = f"2024-{1 + r % 12:02d}-{1 + r % 28:02d}"
        region = ["North", "South", "East", "West"][r % 4]
        product, channel = ["alpha", "beta", "gamma"][r % 3], ["web", "store"][r % 2]
        writer.writerow([date, region, product, channel, *metrics, 1000 + r * 123.5, 1 + r % 50])
    return out.getvalue().encode()


def ask_by_typing(page: Any, question: str) -> Any:
    """Type the question, press Enter, wait for its answer; returns the answer element."""
    before = page.locator("#messages .answer[class*='status-']").count()
    page.locator("#question").fill(question)
    page.locator("#question").press("Enter")
    page.wait_for_function(
        "(n) => document.querySelectorAll(\"#messages .answer[class*='status-']\").length > n",
        arg=before,
        timeout=120_000,
    )
    page.locator("#ask:not([disabled])").wait_for(timeout=30_000)
    return last_answer(page)


def in_view(page: Any, locator: Any) -> bool:
    box = locator.bounding_box()
    height = page.evaluate("() => window.innerHeight")
    return bool(box) and box["y"] < height and box["y"] + min(box["height"], 40) > 0


@pytest.fixture(scope="module")
def a_wide_csv(tmp_path_factory: Any) -> Path:
    path: Path = tmp_path_factory.mktemp("upload") / "wide.csv"
    path.write_bytes(wide_csv())
    return path


def test_the_first_screen_welcomes_and_the_favicon_is_served(
    a_chat: Any, a_static_server: str
) -> None:
    page = a_chat
    welcome = page.get_by_role("region", name="Welcome")
    assert welcome.is_visible()
    text = welcome.inner_text()
    assert "in this browser" in text and "nothing is uploaded" in text and "Drop" in text
    assert page.locator("link[rel=icon]").get_attribute("href") == "favicon.svg"
    reply = page.request.get(f"{a_static_server}/favicon.svg")
    assert reply.status == 200 and b"<svg" in reply.body()
    console = page.request.get(f"{a_static_server}/console.html").text()
    assert '<link rel="icon" href="favicon.svg"' in console
    # The header is one line at 1280 px: every item shares the first item's row.
    tops = page.evaluate(
        """() => [...document.querySelector('.bar').children]
          .filter((c) => c.offsetParent)
          .map((c) => c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)"""
    )
    assert max(tops) - min(tops) < 8, tops


@pytest.mark.slow
def test_an_upload_shows_name_size_shape_and_example_questions(
    a_chat: Any, a_wide_csv: Path
) -> None:
    page = a_chat
    page.locator("#upload").set_input_files(str(a_wide_csv))
    row = page.locator("#file-list li.file").filter(has_text="wide.csv")
    row.locator(".file-shape").filter(has_text="40 rows × 18 columns").wait_for()
    assert row.locator(".file-name").inner_text() == "wide.csv"
    assert re.fullmatch(r"\d+(\.\d)? KB", row.locator(".file-size").inner_text())
    # Name and size are apart on screen, not run together.
    name, size = row.locator(".file-name").bounding_box(), row.locator(".file-size").bounding_box()
    assert name and size and size["x"] >= name["x"] + name["width"]

    questions = page.locator("#suggestions button").all_inner_texts()
    assert questions == [
        "Summarize wide.csv",
        "Total revenue by region",
        "Line chart of revenue over date",
        "Average metric_1 by region",
    ]
    page.locator("#suggestions button", has_text="Summarize wide.csv").click()
    page.locator(".question", has_text="Summarize wide.csv").wait_for()
    answer = last_answer(page)
    answer.wait_for(timeout=120_000)
    assert "40 rows" in answer.inner_text()
    assert page.locator("#suggestions").is_hidden()
    assert page.get_by_role("region", name="Welcome").is_hidden()


def test_a_wide_table_stays_inside_the_window(a_chat: Any) -> None:
    page = a_chat
    ask_by_typing(page, "summarize the data")
    table = page.locator("#messages .turn").last.locator(".table-wrap table.dataframe")
    assert table.count() == 1
    scroll, inner = no_overflow(page)
    assert scroll <= inner, (scroll, inner)
    wrap = table.locator("xpath=..")
    assert wrap.evaluate("(w) => w.scrollWidth > w.clientWidth")  # it scrolls in its own box
    assert table.locator("thead").evaluate("(t) => getComputedStyle(t).position") == "sticky"
    for button in ("#ask", "#stop"):
        box = page.locator(button).bounding_box()
        assert box and box["x"] + box["width"] <= inner
    # Numbers are right-aligned by class (pandas' style attributes are dropped) ...
    cell = table.locator("td.num").first
    assert cell.evaluate("(td) => getComputedStyle(td).textAlign") == "right"
    assert table.locator("[style]").count() == 0
    # ... and no table so far broke the page's CSP.
    assert page.evaluate("() => window.__csp") == []
    # The newest answer is in view after it arrives.
    assert in_view(page, last_answer(page))
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        scroll, inner = no_overflow(page)
        assert scroll <= inner, (scroll, inner)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_numbers_of_a_demo_answer_link_to_their_step(a_chat: Any) -> None:
    page = a_chat
    answer = last_answer(page)
    links = answer.locator("button.num-link")
    assert links.count() >= 10
    assert "step 1" in (links.first.get_attribute("title") or "")
    links.nth(3).click()
    step = page.locator("#messages .turn").last.locator("details.step").first
    assert step.evaluate("(d) => d.open && d.classList.contains('flash')")


def test_an_answer_says_how_it_was_computed_and_links_that_step(
    a_chat: Any, tmp_path: Path
) -> None:
    page = a_chat
    ask_by_typing(page, "Total revenue by region")
    answer = last_answer(page)
    method = answer.locator(".answer-method")
    method.wait_for(timeout=120_000)
    assert "'revenue' per 'region', summed" in method.inner_text()
    # Reckon's own table load is not one of the person's steps.
    turn = page.locator("#messages .turn").last
    code_steps = turn.locator("details.step-code").count()
    loads = turn.locator("details.step-code summary", has_text="Reckon loaded a table").count()
    shown = f"{code_steps - loads} step" + ("" if code_steps - loads == 1 else "s")
    assert shown in answer.locator(".answered-by").inner_text()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        method.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"method-{width}.png"))
        box = method.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
    page.set_viewport_size({"width": 1280, "height": 900})
    method.locator("button.method-step").click()
    opened = turn.locator("details.step.flash")
    assert opened.evaluate("(d) => d.open") and "groupby" in opened.inner_text()


def test_enter_sends_and_shift_enter_is_a_new_line(a_chat: Any) -> None:
    page = a_chat
    box = page.locator("#question")
    box.click()
    box.press_sequentially("tell me")
    box.press("Shift+Enter")
    box.press_sequentially("a story")
    assert box.input_value() == "tell me\na story"
    before = page.locator(".question").count()
    box.press("Enter")
    page.locator(".question").nth(before).wait_for()
    assert page.locator(".question").nth(before).inner_text() == "tell me\na story"
    assert box.input_value() == ""
    answer = last_answer(page)
    page.wait_for_function(
        """(n) => document.querySelectorAll('.question').length === n
          && !document.querySelector('#ask').disabled""",
        arg=before + 1,
    )
    answer = last_answer(page)
    # The demo model's list of what it can do: its arithmetic stays literal.
    text = answer.inner_text()
    assert "17*23+4" in text and "2**100" in text and "x**2" in text
    assert answer.locator("em, strong").count() == 0
    assert in_view(page, answer)


def test_code_is_highlighted_collapsible_and_copyable(a_chat: Any) -> None:
    page = a_chat
    asked = page.locator(".question", has_text=re.compile("^summarize the data$"))
    turn = page.locator("#messages .turn").filter(has=asked).last
    block = turn.locator(".code-block").first
    assert block.locator(".hl-kw").count() > 0 and block.locator(".hl-str").count() > 0
    code = block.locator("pre").inner_text().strip()
    block.get_by_role("button", name="Hide").click()
    assert block.locator("pre").is_hidden()
    block.get_by_role("button", name="Show").click()
    assert block.locator("pre").is_visible()
    block.get_by_role("button", name="Copy").click()
    assert page.evaluate("() => navigator.clipboard.readText()").strip() == code
    answer = turn.locator(".answer[class*='status-']")
    answer.get_by_role("button", name="Copy answer").click()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied.startswith("wide.csv has 40 rows") and "metric_1" in copied


def test_a_chart_opens_large_and_esc_closes_it(a_chat: Any) -> None:
    page = a_chat
    ask_by_typing(page, "bar chart of revenue by region")
    figure = page.locator("#messages .turn").last.locator("img.figure")
    figure.click()
    dialog = page.locator("dialog.zoom[open]")
    dialog.wait_for()
    assert dialog.locator("img").get_attribute("src") == figure.get_attribute("src")
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached")


def test_settings_have_the_model_picker_and_answers_name_their_model(a_chat: Any) -> None:
    page = a_chat
    assert page.locator("#model-name").inner_text() == "reckon-demo"
    page.locator("#model-chip").click()
    picker = page.locator(".settings #model")
    assert picker.is_visible()
    assert picker.locator("option").all_inner_texts() == ["reckon-demo (built-in demo)"]
    state = page.locator("#model-list li[data-model='reckon-demo']")
    assert "default" in state.inner_text() and "built in" in state.inner_text()
    assert "No relay here" in page.locator("#model-note").inner_text()
    assert (
        last_answer(page).locator(".answered-by").inner_text().startswith("Answered by reckon-demo")
    )


def test_esc_stops_an_ask_that_waits(a_chat: Any) -> None:
    page = a_chat
    page.locator(".settings select[name=approval]").select_option("ask")
    page.locator(".settings .rc-status", has_text="next question").wait_for()
    page.locator("#question").fill("what is 6*7")
    page.locator("#question").press("Enter")
    page.locator("#messages .turn").last.locator(".rc-proposal").wait_for()
    page.locator("#question").press("Escape")
    page.locator("#messages .answer.status-stopped").last.wait_for()
    page.locator("#ask:not([disabled])").wait_for()


@pytest.mark.slow
def test_a_reload_keeps_shapes_and_offers_the_interrupted_question(a_chat: Any) -> None:
    page = a_chat
    page.locator("#question").fill("what is 6*7")
    page.locator("#question").press("Enter")
    page.locator("#messages .turn").last.locator(".rc-proposal").wait_for()
    page.reload()
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    note = page.locator(".note.interrupted")
    note.wait_for()
    assert note.locator("blockquote").inner_text() == "what is 6*7"
    row = page.locator("#file-list li.file").filter(has_text="wide.csv")
    row.locator(".file-shape").filter(has_text="40 rows × 18 columns").wait_for()
    # The page opens at the newest answer, not at the top.
    assert page.evaluate("() => document.scrollingElement.scrollTop") > 0
    note.get_by_role("button", name="Ask it again").click()
    answer = page.locator("#messages .answer.status-ok").filter(has_text=re.compile(r"= 42\b"))
    answer.wait_for(timeout=120_000)
    assert page.locator(".note.interrupted").count() == 0
    page.reload()
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    page.locator("#messages .question", has_text="what is 6*7").last.wait_for()
    assert page.locator(".note.interrupted").count() == 0
    assert page.evaluate("() => window.__csp") == []


def test_new_conversation_says_so_and_welcomes_again(a_chat: Any) -> None:
    page = a_chat
    page.get_by_role("button", name="New conversation").click()
    page.get_by_role("status").filter(has_text="new conversation").wait_for()
    assert "done" not in page.get_by_role("status").inner_text()
    assert page.get_by_role("region", name="Welcome").is_visible()
    assert page.locator(".question").count() == 0
