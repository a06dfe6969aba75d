"""The chat page through a real relay (`reckon serve --config`): the waiting line while
a slow model reads the prompt, its thinking shown apart from the answer, and the
state of each model, one of which cannot be reached.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
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

from .helpers import a_chat_at, last_answer

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
    with a_chat_at(a_browser, a_relay_with_two_models) as page:
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


@pytest.mark.slow
def test_a_real_model_is_named_in_full_and_its_next_wait_is_estimated(
    a_browser: Any, a_relay_with_two_models: str, tmp_path: Any
) -> None:
    with a_chat_at(a_browser, a_relay_with_two_models, height=800) as page:
        # The welcome says what this model is sent, not what the demo would send.
        welcome = page.get_by_role("region", name="Welcome")
        assert "The model, slow, is sent your question" in welcome.inner_text()
        assert "sends nothing anywhere" not in welcome.inner_text()
        # The empty page is the window's height, not a few pixels more.
        assert page.evaluate("() => document.scrollingElement.scrollHeight") == 800
        page.screenshot(path=str(tmp_path / "real-model-1280.png"))
        page.set_viewport_size({"width": 390, "height": 844})
        # On a phone the header keeps the model's whole name and the status in view.
        for part in ("#model-name", "#status"):
            box = page.locator(part).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, part
            assert page.locator(part).evaluate("(e) => e.scrollWidth <= e.clientWidth + 1"), part
        assert page.locator("#model-name").inner_text() == "slow"
        page.screenshot(path=str(tmp_path / "real-model-390.png"))
        page.set_viewport_size({"width": 1280, "height": 800})
        page.locator("#model-chip").click()
        page.locator("#model").select_option("reckon-demo")
        assert "demo model answers here too and sends nothing anywhere" in welcome.inner_text()
        page.locator("#model").select_option("slow")

        page.evaluate("() => window.reckon.agent.ready()")
        waiting = page.locator("#messages .turn").last.locator(".waiting")
        page.locator("#question").fill("what is the number?")
        page.locator("#question").press("Enter")
        last_answer(page).wait_for(timeout=120_000)
        # A new conversation: its first call reads the whole prompt again, about as long
        # as the first one took; the page has measured that and says so.
        page.get_by_role("button", name="New conversation").click()
        page.get_by_role("status").filter(has_text="new conversation").wait_for()
        page.locator("#question").fill("what is the number now?")
        page.locator("#question").press("Enter")
        estimated = re.compile(
            r"reading the prompt \(≈[\d,]+ tokens\) · \d+ s of about \d+ s \(estimate\)$"
        )
        waiting.filter(has_text=estimated).wait_for(timeout=10_000)
        page.screenshot(path=str(tmp_path / "estimate-1280.png"))
        assert "earlier calls to slow" in (waiting.get_attribute("title") or "")
        last_answer(page).wait_for(timeout=120_000)
