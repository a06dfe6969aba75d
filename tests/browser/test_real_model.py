"""Reckon with a real language model, end to end: the page, `reckon serve`, and
Qwen2.5-Coder-1.5B-Instruct served by llama-cpp-python on loopback, as it is (its
GGUF's own chat template, no shim).

`scripts/local_model.py` installs the runtime and the model (scripts/test does it
first; cached). The assertions are on computed facts, never on the model's
wording: the number in the answer is the one a code step printed, the sandbox ran
the code, and the error the test put in was fixed by the model from its traceback.
Each question takes 20-90 s here (one CPU thread).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from support import ROOT, a_fake_upstream, reckon_serve

from .helpers import a_chat_page_with
from .real_model_kit import STOCKS, Interposer, upload

sys.path.insert(0, str(ROOT / "scripts"))
import local_model

pytestmark = pytest.mark.real_model

SALES = "region,units,price\nNorth,5,2.5\nSouth,12,3.0\nNorth,9,2.0\nEast,3,4.5\nSouth,7,3.5\n"
ASK_MS = 300_000


@pytest.fixture(scope="module")
def a_model_server() -> Iterator[str]:
    with local_model.serving(log=ROOT / ".cache" / "model-server-test.log") as url:
        yield url


@pytest.fixture(scope="module")
def a_served_site(a_model_server: str) -> Iterator[str]:
    """`reckon serve` as a user starts it with `scripts/run --local-model`."""
    with reckon_serve(*serve_flags(a_model_server)) as served:
        yield served.url


def serve_flags(upstream: str) -> tuple[str, ...]:
    window = str(local_model.CONTEXT_TOKENS)
    return ("--upstream", upstream, "--model", local_model.MODEL_NAME,
            "--context-window", window, "--tools", "off")  # fmt: skip


@pytest.fixture(scope="module")
def a_chat_page(a_browser: Any, a_served_site: str) -> Iterator[Any]:
    viewport = {"width": 1280, "height": 900}
    with a_chat_page_with(a_browser, a_served_site, SALES, viewport=viewport) as page:
        yield page


def ask(page: Any, question: str) -> dict[str, Any]:
    """Ask in a new conversation (files and variables stay), so one question's trouble
    does not carry into the next."""
    page.evaluate("() => window.reckon.newConversation()")
    outcome: dict[str, Any] = page.evaluate(
        """async ([q, ms]) => {
            const timer = new Promise((_, no) => setTimeout(() => no(new Error("ask hung")), ms));
            return Promise.race([window.reckon.ask(q), timer]);
        }""",
        [question, ASK_MS],
    )
    return outcome


def edit_the_first_cell(page: Any, code: str) -> None:
    """Approval mode, with the person editing the next cell the model proposes into
    ``code`` and running every later one as proposed."""
    page.evaluate(
        """(code) => {
            window.__firstCell = code;
            window.reckon.configure({approval: "ask"});
            if (window.__editing) return;
            window.__editing = true;
            window.reckon.on("proposal", (p) => {
                const code = window.__firstCell;
                window.__firstCell = null;
                const edit = code && code !== p.code;
                window.reckon.decide(p.id, edit ? {action: "edit", code} : {action: "run"});
            });
        }""",
        code,
    )


def outputs(outcome: dict[str, Any]) -> str:
    return "\n".join(
        str(s["result"].get("stdout", "")) + str((s["result"].get("result") or {}).get("text", ""))
        for s in outcome["steps"]
        if s["kind"] == "code" and isinstance(s.get("result"), dict)
    )


def story(outcome: dict[str, Any]) -> str:
    """The steps and the answer, short: what a failing assertion shows, so a run that
    went wrong can be read without running it again (each takes minutes)."""
    lines = []
    for step in outcome.get("steps", []):
        result = step.get("result") if isinstance(step.get("result"), dict) else {}
        shown = step.get("code") or step.get("text") or ""
        lines.append(f"[{step.get('kind')}] {str(shown)[:400]}")
        if step.get("message"):
            lines.append(f"  said: {str(step['message'])[:300]}")
        if result:
            out = str(result.get("stdout", "")) + str((result.get("error") or {}).get("type", ""))
            lines.append(f"  -> {result.get('status')}: {out[:300]}")
    lines.append(f"answer: {str(outcome.get('answer'))[:600]}")
    lines.append(f"grounding: {outcome.get('grounding')}")
    return "\n".join(lines)


def test_the_page_offers_the_local_model_by_default(a_chat_page: Any) -> None:
    models = a_chat_page.evaluate("() => window.reckon.models()")
    assert models["default"] == local_model.MODEL_NAME
    assert local_model.MODEL_NAME in models["models"]


def test_a_total_is_computed_in_the_sandbox_and_traced(a_chat_page: Any) -> None:
    outcome = ask(a_chat_page, "What is the total number of units?")
    told = story(outcome)
    assert outcome["status"] == "ok", told
    steps = outcome["steps"]
    assert any(s["kind"] == "code" and s["result"]["status"] == "ok" for s in steps), told
    assert "36" in outputs(outcome), told  # 5 + 12 + 9 + 3 + 7, printed by the model's code
    assert "36" in outcome["answer"], told
    assert outcome["grounding"]["ungrounded"] == [], told
    traced = [n for n in outcome["grounding"]["numbers"] if n["text"] == "36"]
    assert traced and traced[0]["steps"], told


def test_a_group_by_question_names_the_right_group(a_chat_page: Any) -> None:
    outcome = ask(a_chat_page, "Which region sold the most units in total?")
    told = story(outcome)
    assert outcome["status"] == "ok", told
    assert "South" in outputs(outcome) and "South" in outcome["answer"], told
    assert outcome["model"] == local_model.MODEL_NAME or all(
        s.get("model") == local_model.MODEL_NAME for s in outcome["steps"]
    )


def test_an_error_is_fixed_from_the_traceback(a_chat_page: Any) -> None:
    """The person edits the first cell into one that calls a pandas function that does
    not exist (approval mode): the model reads the AttributeError and writes a cell
    that works. (A wrong column name misleads a small model: it keeps the name.)"""
    broken = "df = pd.read_csvv('/data/sales.csv')\nprint(round(df['price'].mean(), 2))"
    edit_the_first_cell(a_chat_page, "import pandas as pd\n" + broken)
    try:
        outcome = ask(
            a_chat_page,
            "What is the mean price, rounded to 2 decimals?",
        )
    finally:
        a_chat_page.evaluate("() => window.reckon.configure({approval: 'auto'})")
    told = story(outcome)
    assert outcome["status"] == "ok", told
    code = [s for s in outcome["steps"] if s["kind"] == "code"]
    first = code[0]["result"]
    assert first["status"] == "error" and first["error"]["type"] == "AttributeError", told
    assert any(s["result"]["status"] == "ok" for s in code[1:]), told
    assert "3.1" in outputs(outcome), told  # (2.5 + 3 + 2 + 4.5 + 3.5) / 5
    assert "3.1" in outcome["answer"], told


def figures(outcome: dict[str, Any]) -> list[str]:
    return [
        str(figure.get("description", ""))
        for s in outcome["steps"]
        if s["kind"] == "code" and isinstance(s.get("result"), dict)
        for figure in s["result"].get("figures") or []
    ]


@pytest.fixture(scope="module")
def an_interposer(a_model_server: str) -> Iterator[Interposer]:
    """The real model behind a loopback server that adds, to the replies it is told to,
    what small models write after their code: a predicted output that is wrong."""
    interposer = Interposer(a_model_server)
    with a_fake_upstream(interposer, models=[local_model.MODEL_NAME]) as upstream:
        flags = serve_flags(f"{upstream.url}/v1")
        with reckon_serve(*flags) as served:
            interposer.site = served.url
            yield interposer


def test_predicted_output_after_the_code_is_never_run(a_browser: Any, an_interposer: Any) -> None:
    """Issue 31: the model wrote its code, then "The output of this code will be:" and an
    untagged block of invented output; Reckon ran both and failed three times. The
    invented total (100) must neither run nor reach the answer: the code's 36 does."""
    an_interposer.invent = (
        "The output of this code will be:\n```\nThe total number of units is 100\n```"
    )
    viewport = {"width": 1280, "height": 900}
    with a_chat_page_with(a_browser, an_interposer.site, SALES, viewport=viewport) as page:
        outcome = ask(page, "What is the total number of units?")
    told = story(outcome) + f"\nreplies: {an_interposer.replies}"
    assert an_interposer.added, told  # the first reply had code, and got the invented block
    assert outcome["status"] == "ok", told
    code = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert code and all("is 100" not in str(s.get("code")) for s in code), told
    failed = [(s["result"].get("error") or {}).get("type") for s in code]
    assert not {"SyntaxError", "IndentationError"} & set(failed), told
    assert "36" in outputs(outcome) and "36" in outcome["answer"], told
    assert not re.search(r"\b100\b", outcome["answer"]), told


def test_a_misspelt_column_is_fixed_from_the_error(a_browser: Any, a_served_site: str) -> None:
    """The first cell asks for a column the file spells otherwise (`Units`, the file has
    `units`): the KeyError names the column meant, and the model's next cell uses it.
    A page of its own: an earlier test's proposal listener edits every first cell."""
    viewport = {"width": 1280, "height": 900}
    with a_chat_page_with(a_browser, a_served_site, SALES, viewport=viewport) as page:
        misspelt = "df = pd.read_csv('/data/sales.csv')\nprint(df['Units'].sum())"
        edit_the_first_cell(page, "import pandas as pd\n" + misspelt)
        outcome = ask(page, "How many units were sold in total?")
    told = story(outcome)
    assert outcome["status"] == "ok", told
    code = [s for s in outcome["steps"] if s["kind"] == "code"]
    first = code[0]["result"]
    assert first["status"] == "error" and first["error"]["type"] == "KeyError", told
    assert "units" in str(first["error"]), told  # the error names the column meant
    assert any(s["result"]["status"] == "ok" for s in code[1:]), told
    assert "36" in outputs(outcome) and "36" in outcome["answer"], told


def test_a_question_about_a_year_reads_the_dates(a_chat_page: Any) -> None:
    """Issue 31: a stock file's dates ("Jan 1 2000") stayed strings, so "in 2001" needed
    the model to parse them. Loaded as dates, the year is a filter away: AAA's twelve
    prices of 2001 average 66.25."""
    upload(a_chat_page, "stocks.csv", STOCKS)
    outcome = ask(a_chat_page, "In stocks.csv, what was the average price of AAA in 2001?")
    told = story(outcome)
    assert outcome["status"] == "ok", told
    assert "66.25" in outputs(outcome) and "66.25" in outcome["answer"], told
    assert outcome["grounding"]["ungrounded"] == [], told


def test_a_chart_over_time_has_dates_on_its_axis(a_chat_page: Any) -> None:
    """A stock file writes its dates as "Jan 1 2000": loaded as dates, a chart over time
    has a time axis (the description's x span is two dates), not one label per row."""
    upload(a_chat_page, "stocks.csv", STOCKS)
    outcome = ask(a_chat_page, "In stocks.csv, plot the price of each symbol over time.")
    told = story(outcome) + f"\nfigures: {figures(outcome)}"
    assert outcome["status"] == "ok", told
    drawn = figures(outcome)
    assert drawn, told
    assert any(re.search(r"x 2000-\d\d-\d\d\.\.2001-\d\d-\d\d", d) for d in drawn), told


def test_a_word_problem_without_files_is_worked_out_by_code(
    a_browser: Any, a_served_site: str
) -> None:
    """Issue 31: with no file, a number is still computed, never worked out in the head
    (an answer in prose is set aside and a program asked for in its place): 9 trays of
    16 rolls, three quarters sold and 25 more leave 11."""
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{a_served_site}/index.html")
        page.evaluate("() => window.reckon.ready()")
        outcome = ask(
            page,
            "A baker bakes 9 trays of rolls with 16 rolls on each tray. She sells three "
            "quarters of the rolls in the morning and 25 more in the afternoon. How many "
            "rolls are left at the end of the day?",
        )
    finally:
        context.close()
    told = story(outcome)
    assert outcome["status"] == "ok", told
    ran = [s for s in outcome["steps"] if s["kind"] == "code" and s["result"]["status"] == "ok"]
    assert ran, told
    assert re.search(r"\b11(\.0)?\b", outputs(outcome)), told
    assert re.search(r"\b11(\.0)?\b", outcome["answer"]), told
    assert outcome["grounding"]["ungrounded"] == [], told


def test_two_model_calls_at_once_both_finish(a_model_server: str) -> None:
    """Two tabs asking at once: the local server made the second wait, not cut the first
    short with an early "[DONE]" (a reply that reads as whole)."""

    def stream(prompt: str) -> list[dict[str, Any]]:
        body = {"model": local_model.MODEL_NAME, "stream": True, "max_tokens": 24,
                "temperature": 0, "messages": [{"role": "user", "content": prompt}]}  # fmt: skip
        chunks = []
        with httpx.stream(
            "POST", f"{a_model_server}/chat/completions", json=body, timeout=600
        ) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    chunks.append(json.loads(line[6:]))
        return chunks

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(stream, "Count from 1 to 40, separated by commas.")
        second = pool.submit(stream, "Name ten colours, separated by commas.")
        replies = [first.result(), second.result()]
    for chunks in replies:
        reasons = [c["choices"][0].get("finish_reason") for c in chunks if c.get("choices")]
        assert reasons and reasons[-1] in ("stop", "length"), reasons[-3:]
