"""<reckon-chat> in the shipped example page (same origin as the site): it embeds the
chat and draws a chart, keeps the host's styles out and its own in, runs SQL and
exports what was done, and shuts down when taken off the page.

`reckon serve` runs as a real process (site + relay, with a scripted model upstream
on loopback; the `a_widget_site` fixture). Host pages on another origin:
test_widget_hosts.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import PNG_MAGIC, page_call
from .widget_kit import (
    ask,
    events,
    figure_pngs,
    open_host_page,
    upload_sales,
    wait_ready,
    widget_call,
)

pytestmark = pytest.mark.browser


# --- the shipped example page, same origin as the site ---------------------------


@pytest.fixture(scope="module")
def an_example_page(a_browser: Any, a_widget_site: str) -> Iterator[Any]:
    context, page = open_host_page(a_browser, f"{a_widget_site}/examples/embed.html")
    wait_ready(page, "chat")
    yield page
    context.close()


@pytest.mark.slow
def test_the_example_embeds_the_chat_and_draws_a_chart(an_example_page: Any) -> None:
    page = an_example_page
    info = upload_sales(page, "chat")
    assert info["status"] == "ok" and info["rows"] == 4, info
    # The person's way: the widget's own file list, question box and Ask button.
    page.locator("reckon-chat #file-list").get_by_text("sales.csv").wait_for()
    page.locator("reckon-chat #question").fill("bar chart of price by region")
    page.locator("reckon-chat #ask").click()
    answer = page.locator("reckon-chat .answer.status-ok").first
    answer.wait_for(timeout=120_000)

    figure = page.locator("reckon-chat img.figure").first
    assert figure.get_attribute("src", timeout=1000).startswith("data:image/png;base64,")  # type: ignore[union-attr]
    assert figure.evaluate("(img) => img.complete && img.naturalWidth > 0")
    # The events carry the same data as reckon.on(): the answer's steps hold the PNG.
    seen = events(page, "chat")
    assert [e["type"] for e in seen][:1] == ["ready"]
    assert {"ask", "step", "answer"} <= {e["type"] for e in seen}
    outcome = next(e["detail"] for e in seen if e["type"] == "answer")
    assert outcome["status"] == "ok" and outcome["answer"]
    pngs = figure_pngs(outcome)
    assert pngs and all(png.startswith(PNG_MAGIC) for png in pngs)
    # The host page's own listener (examples/host.js) heard them too.
    host_log = page.locator("#host-log").inner_text()
    assert "ready in" in host_log and "answer:" in host_log


def test_host_styles_stay_out_of_the_widget_and_its_styles_stay_in(an_example_page: Any) -> None:
    page = an_example_page
    look = page.evaluate(
        """() => {
          const root = document.getElementById("chat").shadowRoot;
          const style = (node) => getComputedStyle(node);
          return {
            askBackground: style(root.getElementById("ask")).backgroundColor,
            askFont: style(root.getElementById("ask")).fontFamily,
            boxFont: style(root.querySelector(".reckon-chat")).fontFamily,
            boxColor: style(root.querySelector(".reckon-chat")).color,
            hiddenDisplay: style(root.getElementById("rebuild")).display,
            mainBorder: style(root.querySelector("main")).borderTopStyle,
            widgetHeight: document.getElementById("chat").getBoundingClientRect().height,
            hostButton: style(document.querySelector("article > button.primary")).backgroundColor,
            hostAnswerSize: style(document.getElementById("host-log")).fontSize,
            sheets: root.adoptedStyleSheets.length,
          };
        }"""
    )
    assert look["askBackground"] == "rgb(37, 87, 214)"  # the widget's accent, not hot pink
    assert "Georgia" not in look["askFont"] and "Georgia" not in look["boxFont"]
    assert look["boxColor"] == "rgb(29, 31, 35)"
    assert look["hiddenDisplay"] == "none"  # the host's [hidden] override does not get in
    assert look["mainBorder"] != "dotted"
    assert abs(look["widgetHeight"] - 34 * 16) < 2  # height="34rem"
    # ...and the widget's rules (button.primary, .answer) do not get out.
    assert look["hostButton"] == "rgb(255, 105, 180)"
    assert look["hostAnswerSize"] == "30px"
    assert look["sheets"] == 2


def test_the_widget_runs_sql_and_exports_what_was_done(an_example_page: Any) -> None:
    page = an_example_page
    upload_sales(page, "chat")
    assert ask(page, "chat", "average price by region", "reckon-demo")["status"] == "ok"
    page.locator("reckon-chat summary").filter(has_text="SQL").click()
    page.locator("reckon-chat #sql").fill(
        "SELECT region, SUM(qty) AS n FROM sales GROUP BY region ORDER BY n DESC"
    )
    page.locator("reckon-chat #run-sql").click()
    table = page.locator("reckon-chat .turn.sql table.dataframe").last
    table.wait_for(timeout=60_000)
    rows = table.inner_text()
    assert "East" in rows and "North" in rows and "4" in rows

    with page.expect_download() as download:
        page.locator("reckon-chat #export-notebook").click()
    notebook = json.loads(Path(download.value.path()).read_text())
    assert download.value.suggested_filename.endswith(".ipynb")
    assert notebook["nbformat"] == 4
    sources = "\n".join("".join(cell["source"]) for cell in notebook["cells"])
    assert "average price by region" in sources

    with page.expect_download() as download:
        page.locator("reckon-chat #export-script").click()
    assert download.value.suggested_filename.endswith(".py")
    script = Path(download.value.path()).read_text()
    compile(script, "exported.py", "exec")
    assert "average price by region" in script


# --- shutting down -------------------------------------------------------------------


@pytest.mark.slow
def test_a_widget_taken_off_the_page_shuts_down_and_starts_again_when_put_back(
    a_browser: Any, a_widget_site: str
) -> None:
    context, page = open_host_page(a_browser, f"{a_widget_site}/examples/embed.html")
    try:
        wait_ready(page, "chat")
        frames = "() => document.querySelectorAll('iframe[title=\"Reckon sandbox\"]').length"
        assert page.evaluate(frames) == 1
        widget_call(page, "chat", "await withDeadline(chat.reckon.agent.ready(), deadlineMs, 'a');")
        assert len(page.workers) >= 2  # the sandbox's (in its frame) and the agent's

        # A move within the page keeps the same sandbox: its variable is still there.
        widget_call(page, "chat", "await chat.run('kept = 7');")
        moved = """
          const box = document.createElement("div");
          document.body.appendChild(box);
          box.appendChild(chat);
          await new Promise((resolve) => setTimeout(resolve, 0));
          return await withDeadline(chat.run("kept"), deadlineMs, "run after the move");
        """
        assert widget_call(page, "chat", moved)["result"]["text"] == "7"
        assert page.evaluate(frames) == 1

        widget_call(page, "chat", "window.__removed = chat; chat.remove();")
        page.wait_for_function(f"() => ({frames[6:]}) === 0")
        deadline = time.monotonic() + 10
        while page.workers and time.monotonic() < deadline:
            page.wait_for_timeout(50)  # Playwright drops a worker once it has ended
        assert page.workers == []

        again = """
          const chat = window.__removed;
          document.body.appendChild(chat);
          await withDeadline(chat.ready(), deadlineMs, "ready again");
          return await withDeadline(chat.run("kept if 'kept' in dir() else 'fresh'"),
                                    deadlineMs, "run");
        """
        assert page_call(page, again, deadline_s=180)["result"]["text"] == "'fresh'"
        assert page.evaluate(frames) == 1
    finally:
        context.close()
