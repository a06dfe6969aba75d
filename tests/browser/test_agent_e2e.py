"""The whole product path: page -> agent worker -> relay -> model, code -> sandbox.

`reckon serve` runs as a real process on loopback; the "model" is either the
built-in demo model or a scripted OpenAI-compatible upstream (a real HTTP server
on loopback) whose first code fails, so the retry path runs for real.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import SALES, SITE, ScriptedModel, a_model_server, live_markdown, reckon_serve

from .helpers import a_chat_page_with


@pytest.fixture(scope="module")
def a_scripted_model() -> Iterator[tuple[ScriptedModel, str]]:
    model = ScriptedModel()
    with a_model_server(model, models=["scripted"]) as upstream:
        yield model, upstream


@pytest.fixture(scope="module")
def a_served_site(a_scripted_model: tuple[ScriptedModel, str]) -> Iterator[str]:
    """`reckon serve` as users start it, with the scripted model as its upstream."""
    _, upstream = a_scripted_model
    key = {"RECKON_UPSTREAM_KEY": "sk-test-secret"}
    with reckon_serve("--upstream", upstream, "--model", "scripted", env=key) as served:
        yield served.url


@pytest.fixture(scope="module")
def a_chat_page(a_browser: Any, a_served_site: str) -> Iterator[Any]:
    with a_chat_page_with(a_browser, a_served_site, SALES) as page:
        yield page


def ask(page: Any, question: str, model: str | None = None) -> dict[str, Any]:
    options = {"model": model} if model else {}
    outcome: dict[str, Any] = page.evaluate(
        "([q, o]) => window.reckon.ask(q, o)", [question, options]
    )
    return outcome


def test_the_relay_offers_the_configured_model_and_the_demo(a_chat_page: Any) -> None:
    models = a_chat_page.evaluate("() => window.reckon.models()")
    assert models["models"] == ["scripted", "reckon-demo"]
    assert models["default"] == "scripted"


@pytest.mark.slow
def test_a_failing_first_cell_is_fixed_from_its_traceback(
    a_chat_page: Any, a_scripted_model: tuple[ScriptedModel, str]
) -> None:
    model, _ = a_scripted_model
    model.requests.clear()
    outcome = ask(a_chat_page, "What is the mean price?", "scripted")

    assert outcome["status"] == "ok", outcome
    assert "16.25" in outcome["answer"]  # (10 + 20 + 30 + 5) / 4, computed in the sandbox
    # The table Reckon loads before the model's turn, then the model's two cells.
    loaded, *code_steps = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert loaded["origin"] == "reckon" and loaded["result"]["status"] == "ok"
    assert [s["result"]["status"] for s in code_steps] == ["error", "ok"]
    assert code_steps[0]["result"]["error"]["type"] == "KeyError"
    figures = code_steps[1]["result"]["figures"]
    assert len(figures) == 1 and "Mean price by region" in figures[0]["description"]
    # The model saw the real traceback, and never the relay's key.
    second = model.requests[1]["payload"]["messages"]
    assert any(m.get("role") == "tool" and "KeyError" in m["content"] for m in second)
    assert all(r["auth"] == "Bearer sk-test-secret" for r in model.requests)
    system = model.requests[0]["payload"]["messages"][0]
    assert system["role"] == "system" and "/data/sales.csv" in system["content"]


def test_the_page_shows_the_steps_the_chart_and_the_answer(a_chat_page: Any) -> None:
    answers = a_chat_page.locator(".answer.status-ok")
    answers.last.wait_for()
    assert "16.25" in answers.last.inner_text()
    assert a_chat_page.locator("img.figure").count() >= 1
    assert a_chat_page.locator("details.step").count() >= 2


def test_the_demo_model_answers_from_computed_numbers(a_chat_page: Any) -> None:
    outcome = ask(a_chat_page, "average price by region", "reckon-demo")
    assert outcome["status"] == "ok", outcome
    # East (10+30)/2 = 20, West 20, North 5
    for number in ("20", "5"):
        assert number in outcome["answer"]
    assert outcome["steps"][0]["result"]["status"] == "ok"

    chart = ask(a_chat_page, "bar chart of price by region", "reckon-demo")
    assert chart["status"] == "ok"
    figures = chart["steps"][0]["result"]["figures"]
    assert figures and figures[0]["png"]


def test_stop_ends_a_long_cell_and_the_session_goes_on(a_chat_page: Any) -> None:
    a_chat_page.evaluate("() => window.reckon.run('survivor = 42')")
    started = time.monotonic()
    outcome = a_chat_page.evaluate(
        """async () => {
            const question = "how many rows where price > 1";
            const pending = window.reckon.ask(question, {model: "reckon-demo"});
            window.reckon.stop();
            return pending;
        }"""
    )
    assert outcome["status"] in ("stopped", "ok")
    assert time.monotonic() - started < 30
    after = a_chat_page.evaluate("() => window.reckon.run('survivor')")
    assert after["result"]["text"] == "42"


def test_no_key_reaches_the_browser(a_served_site: str, a_chat_page: Any) -> None:
    html = a_chat_page.content()
    info = a_chat_page.evaluate("() => fetch('/api/info').then(r => r.text())")
    assert "sk-test-secret" not in html and "sk-test-secret" not in info
    assert Path(SITE).exists()


def test_model_text_is_shown_as_text_never_as_markup(a_chat_page: Any) -> None:
    outcome = ask(a_chat_page, "a hostile answer please", "scripted")
    assert outcome["status"] == "ok"
    answer = a_chat_page.locator(".answer.status-ok").last
    answer.wait_for()
    text = answer.inner_text()
    assert "<script>window.pwned=2</script>" in text
    assert '<img src=x onerror="window.pwned=1">' in text
    assert answer.locator("img, script, a").count() == 0
    assert answer.locator("strong").inner_text() == "bold"
    assert a_chat_page.evaluate("() => window.pwned") is None


def test_an_exported_hostile_answer_renders_nothing_live(a_chat_page: Any) -> None:
    # Issue 32, E1: the question (a person's) and the answer (the model's) go into the
    # exports' Markdown; under a CommonMark renderer none of it may be HTML or a link.
    question = "a hostile answer please `` <img src=x onerror=alert(1)> ` ![a\nb](http://e/x)"
    assert ask(a_chat_page, question, "scripted")["status"] == "ok"
    notebook = json.loads(a_chat_page.evaluate("() => window.reckon.exportNotebook()"))
    script = a_chat_page.evaluate("() => window.reckon.exportScript()")
    markdown = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    for part in script.split("# %% [markdown]\n")[1:]:
        comments = part.split("# %%")[0].splitlines()
        markdown.append("\n".join(line[2:] for line in comments))
    assert any("window.pwned=1" in m for m in markdown)  # the answer is there, as text
    assert sum("onerror=alert(1)" in m for m in markdown) >= 2
    for text in markdown:
        assert live_markdown(text) == [], text
