"""<reckon-chat> in host pages on another origin than the site and the relay: two
widgets on one page with separate state, asking the demo model and a model through
the relay, attributes that follow changes, errors as events; and the origins the
relay does not allow, which can neither frame the pages nor use the widget.

`reckon serve` runs as a real process (site + relay, with a scripted model upstream
on loopback and `--allow-origin` for the host server; the `a_widget_site` fixture);
host pages are served by a plain static server on another port, which makes them
another origin.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import ROOT, ScriptedModel

from .helpers import PNG_MAGIC
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


# The host page's own CSP, as docs/javascript.md ("Widget") says a host with one must allow.
TWO_WIDGETS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Two widgets</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; \
script-src 'self' {site} 'wasm-unsafe-eval'; worker-src blob:; \
connect-src {site}; frame-src {site}; img-src data:; style-src 'self'">
<link rel="stylesheet" href="host.css">
<script type="module" src="{site}/reckon-chat.js"></script>
</head><body>
<reckon-chat id="one" session="one" height="20rem"></reckon-chat>
<reckon-chat id="two" theme="dark" relay="{site}/" height="300"></reckon-chat>
</body></html>
"""


@pytest.fixture(scope="module")
def a_host(a_widget_site: str, a_host_server: str, a_host_folder: Path) -> str:
    """The host pages that embed the widget from the relay, on the other origin."""
    folder = a_host_folder
    (folder / "two.html").write_text(TWO_WIDGETS.format(site=a_widget_site))
    strict = TWO_WIDGETS.format(site=a_widget_site).replace("worker-src blob:", "worker-src 'self'")
    (folder / "strict.html").write_text(strict)
    (folder / "host.css").write_text((ROOT / "web" / "examples" / "host.css").read_text())
    (folder / "frame.html").write_text(FRAMES_THE_PAGE.format(site=a_widget_site))
    return a_host_server


# --- two widgets on one page, on another origin than the site --------------------


@pytest.fixture(scope="module")
def a_two_widget_page(a_browser: Any, a_host: str) -> Iterator[Any]:
    context, page = open_host_page(a_browser, f"{a_host}/two.html")
    wait_ready(page, "one")
    wait_ready(page, "two")
    yield page
    context.close()


@pytest.mark.slow
def test_a_page_on_another_origin_embeds_and_asks_the_demo_model(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    assert page.evaluate("() => location.origin") != page.evaluate(
        "() => new URL(document.querySelector('script[type=module]').src).origin"
    )
    assert upload_sales(page, "one")["status"] == "ok"
    outcome = ask(page, "one", "bar chart of price by region", "reckon-demo")

    assert outcome["status"] == "ok", outcome
    pngs = figure_pngs(outcome)
    assert pngs and pngs[0].startswith(PNG_MAGIC)
    page.locator("#one img.figure").first.wait_for()
    assert page.locator("#two img.figure").count() == 0
    # Everything fit in the host's CSP (the policy docs/javascript.md gives for hosts).
    assert page.evaluate("() => window.__violations") == []


def test_a_page_on_another_origin_asks_a_model_through_the_relay(
    a_two_widget_page: Any, a_scripted_upstream: tuple[ScriptedModel, str]
) -> None:
    page = a_two_widget_page
    model, _ = a_scripted_upstream
    models = widget_call(page, "two", "return await chat.models();")
    assert models["models"] == ["scripted", "reckon-demo"]

    assert upload_sales(page, "two")["status"] == "ok"
    outcome = ask(page, "two", "What is the mean price?", "scripted")

    assert outcome["status"] == "ok", outcome
    assert "16.25" in outcome["answer"]
    assert model.requests and all(r["auth"] == "Bearer sk-test-secret" for r in model.requests)
    page.locator("#two .answer.status-ok").filter(has_text="16.25").wait_for()


def test_two_widgets_keep_separate_state(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    run = "return await withDeadline(chat.run(arg), deadlineMs, 'run');"
    assert widget_call(page, "one", run, "secret = 41")["status"] == "ok"
    other = widget_call(page, "two", run, "secret")
    assert other["status"] == "error" and other["error"]["type"] == "NameError"

    widget_call(page, "one", "return await chat.writeFile('/data/only-one.txt', 'one');")
    widget_call(page, "two", "return await chat.writeFile('/data/only-two.txt', 'two');")
    files = {
        widget: [
            f["name"] for f in widget_call(page, widget, "return await chat.listFiles('/data');")
        ]
        for widget in ("one", "two")
    }
    assert "only-two.txt" in files["two"] and "only-two.txt" not in files["one"]
    assert "only-one.txt" in files["one"] and "only-one.txt" not in files["two"]

    # Each conversation is its own: a widget's transcript has only what it was asked.
    for widget in ("one", "two"):
        asked = [e["detail"]["question"] for e in events(page, widget) if e["type"] == "ask"]
        transcript = widget_call(page, widget, "return (await chat.transcript()).asks;")
        assert [a["question"] for a in transcript] == asked

    # Persistence: "one" names a session and keeps it in its own database; "two" keeps nothing.
    saved = widget_call(page, "one", "return await chat.saved();")
    assert "/data/only-one.txt" in [f["path"] for f in saved["files"]]
    assert widget_call(page, "two", "return chat.reckon.persist === null;") is True
    names = page.evaluate("async () => (await indexedDB.databases()).map((d) => d.name)")
    assert "reckon-widget:one" in names and "reckon" not in names


def test_height_and_theme_come_from_the_attributes_and_follow_changes(
    a_two_widget_page: Any,
) -> None:
    page = a_two_widget_page
    look = """(id) => {
      const chat = document.getElementById(id);
      const box = chat.shadowRoot.querySelector(".reckon-chat");
      const background = getComputedStyle(box).backgroundColor;
      return { height: chat.getBoundingClientRect().height, background };
    }"""
    assert page.evaluate(look, "one") == {"height": 320, "background": "rgb(251, 251, 250)"}
    assert page.evaluate(look, "two") == {"height": 300, "background": "rgb(22, 24, 28)"}

    page.evaluate(
        "() => { const c = document.getElementById('two'); c.setAttribute('theme', 'light');"
        " c.setAttribute('height', '25rem'); }"
    )
    assert page.evaluate(look, "two") == {"height": 400, "background": "rgb(251, 251, 250)"}
    # A value that is not a length changes nothing, and cannot inject CSS.
    page.evaluate(
        "() => document.getElementById('two').setAttribute('height', '1px} * {color: red')"
    )
    assert page.evaluate(look, "two")["height"] == 576  # the default, 36rem
    page.evaluate(
        "() => { const c = document.getElementById('two'); c.setAttribute('theme', 'dark');"
        " c.setAttribute('height', '300'); }"
    )


def test_a_failed_ask_is_an_error_event_on_its_widget(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    before = len(events(page, "two"))
    outcome = ask(page, "two", "anything", "no-such-model")

    assert outcome["status"] != "ok"
    errors = [e for e in events(page, "two")[before:] if e["type"] == "error"]
    assert errors and errors[-1]["detail"]["message"] == outcome["message"]
    # The relay's own answer (an unknown model) was readable across origins.
    assert "Unknown model 'no-such-model'" in outcome["message"]
    assert not [e for e in events(page, "one") if e["type"] == "error"]


def test_a_widget_with_a_session_lists_its_conversations(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    run = "return await withDeadline(chat.run(arg), deadlineMs, 'run');"
    listed = "return await chat.conversations();"
    assert widget_call(page, "one", run, "mark = 1")["status"] == "ok"
    before = widget_call(page, "one", listed)
    assert before["status"] == "ok" and before["conversations"], before
    assert widget_call(page, "one", "return await chat.newConversation();")["status"] == "ok"
    assert widget_call(page, "one", run, "mark = 2")["status"] == "ok"
    after = widget_call(page, "one", listed)
    assert len(after["conversations"]) == len(before["conversations"]) + 1
    assert after["conversations"][0]["current"] is True
    # Its list is in its own shadow root, the new one marked open.
    page.wait_for_function(
        """(n) => document.getElementById("one").shadowRoot
              .querySelectorAll("#conversation-list .conversation-item").length === n""",
        arg=len(after["conversations"]),
    )
    page.locator("#one #conversation-list [aria-current='true']").wait_for()
    # Without a session nothing is kept: no list, and the calls say why.
    assert page.locator("#two #conversations").is_hidden()
    none = widget_call(page, "two", listed)
    assert none["status"] == "error" and "persist: false" in none["message"]


FRAMES_THE_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Frames Reckon</title></head><body><iframe src="{site}/index.html"></iframe></body></html>"""


@pytest.mark.parametrize("where", ["allowed", "foreign"])
def test_only_allowed_origins_can_frame_the_pages(
    a_browser: Any, a_host: str, a_widget_site: str, where: str
) -> None:
    # A page anywhere could frame Reckon under its own (clickjacking); the relay's
    # frame-ancestors lets only its own pages and the origins it was told of.
    host = a_host if where == "allowed" else a_host.replace("127.0.0.1", "localhost")
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{host}/frame.html")
        page.wait_for_load_state("load")
        child = page.frames[1]
        child.wait_for_load_state("load")
        loaded = child.url
    finally:
        context.close()
    if where == "allowed":
        assert loaded == f"{a_widget_site}/index.html"
    else:
        assert loaded.startswith("chrome-error://"), loaded


def test_a_page_on_an_origin_the_relay_does_not_allow_gets_nothing(
    a_browser: Any, a_host: str, a_widget_site: str
) -> None:
    # Same server, other name: http://localhost:P is another origin than 127.0.0.1:P.
    foreign = a_host.replace("127.0.0.1", "localhost")
    context, page = open_host_page(a_browser, f"{foreign}/two.html")
    try:
        defined = page.evaluate("() => customElements.get('reckon-chat') !== undefined")
        info = page.evaluate(
            "async (url) => fetch(url).then(() => 'read', (err) => err.name)",
            f"{a_widget_site}/api/info",
        )
    finally:
        context.close()
    assert defined is False
    assert info == "TypeError"


def test_a_host_policy_that_blocks_the_agent_worker_is_an_error_event(
    a_browser: Any, a_host: str
) -> None:
    context, page = open_host_page(a_browser, f"{a_host}/strict.html")
    try:
        page.wait_for_function(
            "() => new Set(window.__events.filter((e) => e.type === 'error').map((e) => e.id)).size"
            " === 2",
            timeout=60_000,
        )
        errors = [e for e in events(page) if e["type"] == "error"]
    finally:
        context.close()
    assert {e["id"] for e in errors} == {"one", "two"}
    assert all("worker-src blob:" in e["detail"]["message"] for e in errors)
