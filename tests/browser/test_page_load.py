"""The chat page holds a 200-step agent session: every step is rendered, the page answers.

`reckon serve` runs as a real process; its upstream is a scripted model on loopback
that makes `STEPS_PER_ASK` small tool calls per question before answering, so
`ASKS` questions through the page's public API (`window.reckon.ask`) make 200 steps
within the default step limit. No timing is asserted here: the per-step times of
the first and last steps are compared by `benchmarks/page_steps.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from support import Script, Seen, a_model_server, event_stream, reckon_serve

pytestmark = pytest.mark.browser

ASKS = 20
STEPS_PER_ASK = 10  # + the answer: 11 model calls, within the default maxSteps (12)
STEPS = ASKS * STEPS_PER_ASK


def step_model(seen: Seen) -> Script:
    """An upstream: for "ask N", ten cells printing "step N.K", then an answer naming
    the last step it saw in the observations."""
    messages = seen.json["messages"]
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    match = re.search(r"ask (\d+)", str(messages[last_user]["content"]))
    ask = int(match.group(1)) if match else -1
    done = [m for m in messages[last_user:] if m.get("role") == "tool"]
    if len(done) < STEPS_PER_ASK:
        # The step's number is put together, not written out whole: an output that
        # only repeats a literal of its cell grounds nothing (and the answer cites it).
        code = f"print('step {ask}.' + str({len(done)}))"
        return event_stream([_tool_call(code, f"call_{ask}_{len(done)}")], model="steps")
    seen_steps = re.findall(r"step \d+\.\d+", str(done[-1].get("content")))
    answer = f"Ask {ask} finished after {seen_steps[-1] if seen_steps else 'nothing'}."
    delta = {"role": "assistant", "content": answer}
    finished = {"choices": [{"index": 0, "delta": delta, "finish_reason": "stop"}]}
    return event_stream([finished], model="steps")


def _tool_call(code: str, call_id: str) -> dict[str, Any]:
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": "run_python", "arguments": json.dumps({"code": code})},
    }
    delta = {"role": "assistant", "tool_calls": [call]}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": "tool_calls"}]}


@contextmanager
def a_step_relay() -> Iterator[str]:
    """The scripted model on loopback and `reckon serve` in front of it; yields the site URL."""
    with (
        a_model_server(step_model, models=["steps"]) as upstream,
        reckon_serve(
            "--upstream", upstream, "--model", "steps", env={"RECKON_UPSTREAM_KEY": "sk-steps-key"}
        ) as served,
    ):
        yield served.url


# Numbers each rendered step as it lands in the page (a MutationObserver: DOM only).
WATCH_STEPS = """() => {
  window.__stepTimes = [];
  const seen = new WeakSet();
  new MutationObserver(() => {
    for (const el of document.querySelectorAll("details.step")) {
      if (seen.has(el)) continue;
      seen.add(el);
      window.__stepTimes.push(performance.now());
    }
  }).observe(document.body, { childList: true, subtree: true });
}"""


def run_session(page: Any, asks: int = ASKS) -> list[dict[str, Any]]:
    """`asks` questions through window.reckon.ask, one after another."""
    outcomes: list[dict[str, Any]] = []
    for number in range(asks):
        outcome = page.evaluate(
            "(q) => window.reckon.ask(q, { model: 'steps' })", f"please do ask {number}"
        )
        outcomes.append(outcome)
    return outcomes


@pytest.fixture
def a_step_page(a_browser: Any) -> Iterator[Any]:
    with a_step_relay() as url:
        context = a_browser.new_context()
        page = context.new_page()
        page.goto(f"{url}/index.html")
        page.evaluate("() => window.reckon.ready()")
        page.evaluate(WATCH_STEPS)
        yield page
        context.close()


@pytest.mark.slow
def test_the_page_holds_a_200_step_session(a_step_page: Any) -> None:
    page = a_step_page
    page.set_default_timeout(120_000)
    outcomes = run_session(page)

    for number, outcome in enumerate(outcomes):
        assert outcome["status"] == "ok", outcome
        assert outcome["answer"].strip() == f"Ask {number} finished after step {number}.9."
        code_steps = [s for s in outcome["steps"] if s["kind"] == "code"]
        assert len(code_steps) == STEPS_PER_ASK
        assert all(s["result"]["status"] == "ok" for s in code_steps)
    # Every step is in the page, in order, with its own output.
    texts: list[str] = page.evaluate(
        "() => [...document.querySelectorAll('details.step')].map((d) => d.textContent)"
    )
    assert len(texts) == STEPS, len(texts)
    expected = [f"step {a}.{k}" for a in range(ASKS) for k in range(STEPS_PER_ASK)]
    assert [re.findall(r"step \d+\.\d+", t)[-1] for t in texts] == expected
    assert page.evaluate("() => window.__stepTimes.length") == STEPS
    answers = page.locator(".answer.status-ok")
    assert answers.count() == ASKS
    assert "Ask 19 finished after step 19.9" in answers.last.inner_text()
    # The page still answers: a step opens and closes when clicked (the last one starts
    # open when the answer's "How:" line names it), a cell runs, one more ask works.
    last = page.locator("details.step").last
    was_open = last.evaluate("(d) => d.open")
    last.locator("summary").click()
    assert last.evaluate("(d) => d.open") is not was_open
    last.locator("summary").click()
    assert last.evaluate("(d) => d.open") is was_open
    assert page.evaluate("() => window.reckon.run('6 * 7')")["result"]["text"] == "42"
    extra = run_session(page, 1)[0]
    assert extra["status"] == "ok", extra
    assert page.locator("details.step").count() == STEPS + STEPS_PER_ASK
