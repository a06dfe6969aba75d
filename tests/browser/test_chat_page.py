"""The chat page as a new user meets it (issue #15): the first screen, an upload with
example questions, wide tables and long answers inside the window, scrolling to the
answer, keys, Markdown that leaves arithmetic alone, no CSP violations, the favicon,
code, charts and copy buttons, the model picker, a reload in the middle of an ask,
the phone layout; and, through a real relay, the waiting line, a model's thinking
and a model that cannot be reached.

Numbers tied to steps (grounding) are checked twice: on a real demo answer, and on a
hand-made outcome rendered by the page's own module (chat-turn.js).
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import (
    Script,
    Seen,
    a_model_server,
    an_unused_port,
    event_stream,
    reckon_serve,
)

# Every CSP violation the page reports, from the first byte on.
CSP_RECORDER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(`${e.violatedDirective} ${e.sourceFile}:${e.lineNumber}`), true);
"""
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


def no_overflow(page: Any) -> tuple[int, int]:
    sizes: tuple[int, int] = tuple(
        page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    )
    return sizes


def last_answer(page: Any) -> Any:
    return page.locator("#messages .answer[class*='status-']").last


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


@pytest.fixture(scope="module")
def a_chat(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    """The page at 1280x900 with the wide CSV uploaded through the file picker."""
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=a_static_server)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.add_init_script(CSP_RECORDER)
    page.goto(f"{a_static_server}/index.html")
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    yield page
    context.close()


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


def test_markdown_rules(a_chat: Any) -> None:
    out = a_chat.evaluate(
        """async () => {
          const { renderMarkdown } = await import("./markdown.js");
          const box = document.createElement("div");
          const render = (text) => {
            box.replaceChildren(renderMarkdown(text));
            return box.innerHTML;
          };
          return {
            math: render("what is 17*23+4, 2**100 or a*b*c?"),
            emphasis: render("**Total:** 5 and *some* words"),
            code: render("run `df[df.x*2 > 3]` and `a` then *b*"),
            escaped: render("\\\\*not italic\\\\*"),
            fence: render("```python\\nimport os  # x\\n```"),
            table: render("| a | b |\\n|---|--:|\\n| x | 1 |"),
          };
        }"""
    )
    assert out["math"] == "<p>what is 17*23+4, 2**100 or a*b*c?</p>"
    assert out["emphasis"] == "<p><strong>Total:</strong> 5 and <em>some</em> words</p>"
    assert (
        out["code"]
        == "<p>run <code>df[df.x*2 &gt; 3]</code> and <code>a</code> then <em>b</em></p>"
    )
    assert out["escaped"] == "<p>*not italic*</p>"
    assert '<span class="hl-kw">import</span>' in out["fence"] and 'class="hl-com"' in out["fence"]
    assert 'class="align-right"' in out["table"] and "table-wrap" in out["table"]


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


def test_grounding_thinking_and_waiting_render_from_an_outcome(a_chat: Any) -> None:
    out = a_chat.evaluate(
        """async () => {
          const { Turn } = await import("./chat-turn.js");
          const turn = new Turn({ question: "mean price by region?", model: "slow-model",
                                  save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          turn.waitFor("reading the prompt");
          await new Promise((r) => setTimeout(r, 1300));
          const waiting = turn.wait.hidden ? null : turn.wait.textContent;
          turn.addStep({ index: 0, kind: "thinking", text: "I should group by region first." });
          turn.addStep({ index: 1, kind: "code", code: "print(20)", model: "slow-model",
                         result: { status: "ok", stdout: "20\\n", stderr: "", result: null,
                                   figures: [], files: [], duration_ms: 3 } });
          const answer = "East averages **20.0**, and West 35.5; so 20.0 again.";
          const grounding = { numbers: [
            { text: "20.0", start: 16, end: 20, steps: [1], computed: true },
            { text: "35.5", start: 33, end: 37, steps: [], computed: false },
            { text: "20.0", start: 42, end: 46, steps: [1], computed: true },
          ], ungrounded: ["35.5"] };
          const steps = [{ index: 2, kind: "answer", text: answer, grounding }];
          const shown = turn.finish({ status: "ok", answer, steps });
          const links = [...shown.querySelectorAll("button.num-link")];
          links[1].click();
          const thinking = turn.element.querySelector("details.step-thinking");
          return {
            waiting, links: links.map((b) => [b.textContent, b.dataset.steps]),
            strong: shown.querySelector("strong").innerHTML,
            flagged: [...shown.querySelectorAll(".num-unverified")]
              .map((s) => [s.textContent, s.title]),
            note: shown.querySelector(".ungrounded-note").textContent,
            body: shown.querySelector(".answer-body").textContent,
            flash: turn.element.querySelector("[data-step-index='1']").classList.contains("flash"),
            thinking: [thinking.open, thinking.querySelector("summary").textContent],
            by: shown.querySelector(".answered-by").textContent,
          };
        }"""
    )
    assert re.fullmatch(r"Waiting for slow-model · reading the prompt · 1 s", out["waiting"])
    assert out["links"] == [["20.0", "1"], ["20.0", "1"]]
    assert out["strong"].startswith('<button type="button" class="num-link"')
    assert out["flagged"] == [["35.5", "Not computed: no step's output contains this number"]]
    assert out["note"] == "Not computed by any step: 35.5"
    assert out["body"] == "East averages 20.0, and West 35.5; so 20.0 again."
    assert out["flash"] is True
    assert out["thinking"] == [False, "Thinking"]
    assert "I should group" not in out["body"]
    assert out["by"].startswith("Answered by slow-model")


def test_a_long_answer_and_a_phone_screen_stay_inside_the_window(a_chat: Any) -> None:
    page = a_chat
    page.evaluate(
        """async () => {
          const { Turn } = await import("./chat-turn.js");
          const turn = new Turn({ question: "x".repeat(400), model: "m", save: () => {} });
          document.querySelector("#messages").appendChild(turn.element);
          const long = ["A very long answer.", "y".repeat(500), "`" + "z".repeat(300) + "`",
            "| " + Array.from({ length: 30 }, (_, i) => `column_${i}`).join(" | ") + " |",
            "|" + "---|".repeat(30),
            "| " + Array.from({ length: 30 }, (_, i) => i * 1000).join(" | ") + " |",
            "```python", "print('" + "w".repeat(400) + "')", "```",
            ...Array.from({ length: 60 }, (_, i) => `- point ${i}: ${"words ".repeat(20)}`),
          ].join("\\n");
          turn.finish({ status: "ok", answer: long, steps: [] });
        }"""
    )
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        scroll, inner = no_overflow(page)
        assert scroll <= inner, (width, scroll, inner)
    # On a phone the panel shows the files; the rest opens with its toggle.
    if page.locator("#tools-toggle").get_attribute("aria-expanded") == "true":
        page.locator("#tools-toggle").click()
    assert page.locator("#tools").is_hidden()
    page.locator("#tools-toggle").click()
    assert page.locator("#tools").is_visible()
    page.locator("#tools-toggle").click()
    box = page.locator("#ask").bounding_box()
    assert box and box["x"] + box["width"] <= 390
    page.set_viewport_size({"width": 1280, "height": 900})


# -- Through a real relay: a slow model that thinks, and a model that is not there. --


def slow_thinking(seen: Seen) -> Script:
    """An upstream that takes its time, then streams its thinking in <think> tags and
    a one-line answer."""
    parts = ["<think>The person asks ", "for a number.</think>", "The answer ", "is 4242."]
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in parts]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    reply = event_stream(chunks, model="slow")
    reply.delay_before_first = 2.5
    return reply


@pytest.fixture(scope="module")
def a_relay_with_two_models(tmp_path_factory: Any) -> Iterator[str]:
    """`reckon serve --config`: profile "slow" (a real upstream on loopback) and
    profile "gone" (a port where nothing listens)."""
    with a_model_server(slow_thinking, models=["slow"]) as upstream:
        config = tmp_path_factory.mktemp("relay") / "reckon.toml"
        config.write_text(
            "[[profile]]\n"
            'name = "slow"\n'
            f'base_url = "{upstream}"\n'
            'models = ["slow"]\n'
            'default = "slow"\n\n'
            "[[profile]]\n"
            'name = "gone"\n'
            f'base_url = "http://127.0.0.1:{an_unused_port()}/v1"\n'
            'models = ["ghost"]\n'
        )
        with reckon_serve("--config", str(config)) as served:
            yield served.url


@pytest.mark.slow
def test_a_slow_model_shows_the_wait_its_thinking_and_the_state_of_each_model(
    a_browser: Any, a_relay_with_two_models: str
) -> None:
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{a_relay_with_two_models}/index.html")
        page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
        assert page.locator("#model-name").inner_text() == "slow"
        page.locator("#model-chip").click()
        assert page.locator("#model").locator("option").all_inner_texts() == [
            "slow",
            "ghost",
            "reckon-demo (built-in demo)",
        ]
        assert "default" in page.locator("#model-list li[data-model='slow']").inner_text()
        assert (
            "offered by the relay"
            in page.locator("#model-list li[data-model='ghost']").inner_text()
        )

        # Asked once the agent is up, so the wait that shows is the model's.
        page.evaluate("() => window.reckon.agent.ready()")
        page.locator("#question").fill("what is the number?")
        started = time.monotonic()
        page.locator("#question").press("Enter")
        waiting = page.locator("#messages .turn").last.locator(".waiting")
        waiting.filter(
            has_text=re.compile(
                r"^Waiting for slow · reading the prompt \(≈[\d,]+ tokens\) · \d+ s$"
            )
        ).wait_for(timeout=10_000)
        answer = last_answer(page)
        answer.wait_for(timeout=120_000)
        assert time.monotonic() - started >= 2.5
        assert waiting.is_hidden()
        thinking = page.locator("#messages .turn").last.locator("details.step-thinking").first
        assert thinking.locator("summary").inner_text().startswith("Thinking")
        assert thinking.evaluate("(d) => d.open") is False
        assert "The person asks" in thinking.text_content()
        assert "The person asks" not in answer.inner_text() and "4242" in answer.inner_text()
        assert answer.locator(".answered-by").inner_text().startswith("Answered by slow")
        assert "available" in page.locator("#model-list li[data-model='slow']").inner_text()
        # No step computed 4242: the page says so.
        assert answer.locator(".num-unverified").inner_text() == "4242"

        page.locator("#model").select_option("ghost")
        assert page.locator("#model-name").inner_text() == "ghost"
        page.locator("#question").fill("and now?")
        page.locator("#question").press("Enter")
        last_answer(page).filter(has_text="ghost").or_(
            page.locator("#messages .answer.status-error")
        ).last.wait_for(timeout=120_000)
        page.locator("#model-list li[data-model='ghost'].state-unreachable").wait_for(
            timeout=30_000
        )
        assert "unreachable" in page.locator("#model-list li[data-model='ghost']").inner_text()
    finally:
        context.close()
