"""Control through the JS API: privacy, what was sent, cost, budget and approval.

`reckon serve` runs as a real process on loopback in front of a scripted
OpenAI-compatible upstream (a real HTTP server on loopback) that records every
body it receives, so the tests check what really left the browser.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .playlist_kit import Playlist

PEOPLE = """\
name,email,salary,city
Alice Zimmermann,alice.z@example.org,73412.5,Paris
Bob Quist,bq@example.org,51877.25,Lyon
Carla Mendez,carla@example.org,88123.75,Paris
"""
PROTECTED = ["Alice Zimmermann", "Bob Quist", "Carla Mendez", "alice.z@example.org",
             "bq@example.org", "73412.5", "51877.25", "88123.75"]  # fmt: skip


CONTROL = {"approval": "auto", "privacy": "full", "allowColumns": [], "tokenBudget": None,
           "verify": False}  # fmt: skip


def session(page: Any, settings: dict[str, Any], *, fresh: bool = False) -> None:
    """`window.r`: a createReckon() on the page with people.csv uploaded, made once
    (each one is a sandbox and an agent worker) and then given a new conversation and
    these settings through configure(); `fresh` makes a new one with them at creation."""
    page.evaluate(
        """async ([settings, control, csv, fresh]) => {
            window.proposals = [];
            window.usages = [];
            if (window.r && !fresh) {
                await window.r.newConversation();
                const reply = await window.r.configure({ ...control, ...settings });
                if (reply.status !== "ok") throw new Error(reply.message);
                return;
            }
            const { createReckon } = await import("./reckon.js");
            const r = createReckon({ persist: false, settings });
            window.r = r;
            r.on("proposal", (p) => window.proposals.push(p));
            r.on("usage", (u) => window.usages.push(u));
            await r.ready();
            await r.upload({ name: "people.csv", bytes: new TextEncoder().encode(csv) });
        }""",
        [settings, CONTROL, PEOPLE, fresh],
    )


@pytest.mark.slow
def test_schema_privacy_sends_no_protected_value_and_shows_what_was_sent(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    model.requests.clear()
    model.usage = {"prompt_tokens": 700, "completion_tokens": 30, "total_tokens": 730}
    model.queue = [
        ("code", "import pandas as pd\ndf = pd.read_csv('/data/people.csv')\nprint(df)\ndf.head()"),
        ("code", "print(df['salary'].max(), df['name'].tolist(), len(df))"),
        ("text", "Done."),
    ]
    session(a_page, {"privacy": "schema", "allowColumns": ["city"]})
    outcome = a_page.evaluate("() => window.r.ask('show me the people', {model: 'scripted'})")
    assert outcome["status"] == "ok", outcome
    bodies = [r["payload"] for r in model.requests]
    assert len(bodies) == 3
    sent_text = json.dumps(bodies, ensure_ascii=False)
    assert [v for v in PROTECTED if v in sent_text] == []
    assert "Paris" in sent_text and "[hidden]" in sent_text and "salary" in sent_text
    # The page still got the real rows (in the model's first cell: the step before it
    # is the table Reckon loaded).
    (first, *_) = [s for s in outcome["steps"] if s["kind"] == "code" and not s.get("origin")]
    assert "Alice Zimmermann" in first["result"]["stdout"]
    # Cost: the upstream's counts, per answer and per session; one event per call.
    assert outcome["usage"] == {"prompt_tokens": 2100, "completion_tokens": 90,
                                "total_tokens": 2190, "estimated": False, "calls": 3}  # fmt: skip
    assert outcome["sessionUsage"]["total_tokens"] == 2190
    usages = a_page.evaluate("() => window.usages")
    assert [u["call"]["total_tokens"] for u in usages] == [730, 730, 730]
    # What was sent, from the JS API: exactly the bodies the upstream received, marked.
    sent = a_page.evaluate("() => window.r.sent()")
    assert [r["body"] for r in sent[-1]["sent"]] == bodies
    last = sent[-1]["sent"][-1]
    kinds = {p["kind"] for p in last["parts"] if p["source"] == "file"}
    assert kinds == {"schema", "observation"}


# A cell of the session makes the values scan find nothing, wherever it runs in the
# session's interpreter. The scan runs in a fresh worker instead (SECURITY.md, F3).
TAMPER = """import pandas as pd
import reckon.kernel
pd.Series.unique = lambda self: pd.Series([], dtype=object).values
reckon.kernel.read_table = lambda *args, **kwargs: pd.DataFrame()
"""


@pytest.mark.slow
def test_schema_privacy_holds_after_a_cell_patched_pandas(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    model.requests.clear()
    model.usage = None
    model.queue = [
        ("code", "import pandas as pd\nprint(pd.read_csv('/data/people.csv').to_string())"),
        ("text", "Done."),
    ]
    session(a_page, {"privacy": "schema", "allowColumns": ["city"]})
    try:
        tampered = a_page.evaluate("(code) => window.r.run(code)", TAMPER)
        assert tampered["status"] == "ok", tampered
        outcome = a_page.evaluate("() => window.r.ask('show me the people', {model: 'scripted'})")
        assert outcome["status"] == "ok", outcome
        sent_text = json.dumps([r["payload"] for r in model.requests], ensure_ascii=False)
        assert [v for v in PROTECTED if v in sent_text] == []
        assert "[hidden]" in sent_text and "Paris" in sent_text
        # The page still got the real rows.
        (cell,) = [s for s in outcome["steps"] if s["kind"] == "code" and not s.get("origin")]
        assert "Alice Zimmermann" in cell["result"]["stdout"]
    finally:
        a_page.evaluate("() => window.r.restart()")  # the next tests get unpatched pandas


def test_approval_through_the_js_api_edit_and_reject(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    model.requests.clear()
    model.usage = None
    model.queue = [
        ("code", "print(2 ** 10)"),
        ("code", "import os\nos.remove('/data/people.csv')"),
        ("text", "All done."),
    ]
    session(a_page, {"approval": "ask"})
    outcome = a_page.evaluate(
        """async () => {
            const r = window.r;
            const answers = [];
            r.on("proposal", async (p) => {
                const decision = p.code.includes("os.remove")
                    ? { action: "reject", reason: "never delete my files" }
                    : { action: "edit", code: "print(2 ** 11)" };
                answers.push(await r.decide(p.id, decision));
            });
            const bad = await r.decide("nope", { action: "run" });
            const outcome = await r.ask("powers", { model: "scripted" });
            const still = await r.run("open('/data/people.csv').read()[:4]");
            return { outcome, answers, bad, still: still.result.text };
        }"""
    )
    result = outcome["outcome"]
    assert result["status"] == "ok" and result["answer"].strip() == "All done."
    assert outcome["answers"] == [{"status": "ok"}, {"status": "ok"}]
    assert outcome["bad"]["status"] == "error" and "no cell is waiting" in outcome["bad"]["message"]
    assert outcome["still"] == "'name'"
    proposals = a_page.evaluate("() => window.proposals")
    assert [p["code"] for p in proposals] == [
        "print(2 ** 10)",
        "import os\nos.remove('/data/people.csv')",
    ]
    steps = result["steps"]
    assert steps[0]["decision"] == "edit" and steps[0]["result"]["stdout"] == "2048\n"
    assert steps[1]["decision"] == "reject"
    # The upstream was told: the edited code and its output, and the rejection's reason.
    tools = [m["content"] for m in model.requests[-1]["payload"]["messages"] if m["role"] == "tool"]
    assert "The user edited your code" in tools[0] and "print(2 ** 11)" in tools[0]
    assert "2048" in tools[0] and "1024" not in tools[0]
    assert "rejected" in tools[1] and "never delete my files" in tools[1]
    # No upstream usage this time: the counts say they are an estimate.
    assert result["usage"]["estimated"] is True and result["usage"]["calls"] == 3


def test_a_token_budget_stops_the_demo_with_a_clear_message(a_page: Any) -> None:
    session(a_page, {"tokenBudget": 50})
    outcome = a_page.evaluate("() => window.r.ask('what is 17*23+4', {model: 'reckon-demo'})")
    assert outcome["status"] == "budget"
    assert "token budget for this session is used up" in outcome["message"]
    assert outcome["usage"]["estimated"] is True
    per_ask = a_page.evaluate(
        "() => window.r.ask('what is 2+2', {model: 'reckon-demo', tokenBudget: 'lots'})"
    )
    assert per_ask["status"] == "error" and "positive number of tokens" in per_ask["message"]


@pytest.mark.slow
def test_bad_settings_fail_each_ask_with_what_to_do(a_page: Any) -> None:
    session(a_page, {"privacy": "secret"}, fresh=True)
    outcome = a_page.evaluate("() => window.r.ask('what is 2+2', {model: 'reckon-demo'})")
    assert outcome["status"] == "error"
    assert "settings.privacy must be one of 'full', 'schema'" in outcome["message"]
    # configure() fixes it live; bad changes are refused and change nothing.
    replies = a_page.evaluate(
        """async () => [
            await window.r.configure({ timeoutMs: 5 }),
            await window.r.configure({ tokenBudget: -1 }),
            await window.r.configure({ privacy: "schema" }),
        ]"""
    )
    assert replies[0]["status"] == "error" and "cannot change timeoutMs" in replies[0]["message"]
    assert replies[1]["status"] == "error" and "positive number" in replies[1]["message"]
    assert replies[2]["status"] == "ok" and replies[2]["settings"]["privacy"] == "schema"
    fixed = a_page.evaluate("() => window.r.ask('average salary by city', {model: 'reckon-demo'})")
    assert fixed["status"] == "ok" and fixed["privacy"] == "schema"
    # The settings panel applies a change through configure(): approval, then a card.
    a_page.evaluate(
        """async () => {
            const ui = await import("./page/control-ui.js");
            const control = ui.attachControl(window.r, { container: document.body });
            const panel = control.settingsPanel();
            panel.id = "panel";
            document.body.append(panel);
        }"""
    )
    a_page.locator("#panel select[name=approval]").select_option("ask")
    a_page.locator("#panel .rc-status", has_text="next question").wait_for()
    a_page.evaluate(
        "() => { window.pending = window.r.ask('what is 2+3', {model: 'reckon-demo'}); }"
    )
    card = a_page.locator(".rc-proposal").last
    card.wait_for()
    card.locator("button.rc-run").click()
    done = a_page.evaluate("() => window.pending")
    assert done["status"] == "ok" and "5" in done["answer"]
    assert done["steps"][0]["decision"] == "run"


def test_the_control_ui_card_edits_and_the_footer_shows_what_was_sent(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    model.requests.clear()
    model.queue = [
        ("code", "import pandas as pd\nprint(len(pd.read_csv('/data/people.csv')))"),
        ("text", "There are @rows[3] people."),
    ]
    session(a_page, {"approval": "ask"})
    a_page.evaluate(
        """async () => {
            const ui = await import("./page/control-ui.js");
            const box = document.createElement("div");
            box.id = "control-box";
            document.body.append(box);
            window.footer = ui.attachControl(window.r, { container: box });
            window.pending = window.r.ask("how many people?", { model: "scripted", verify: false });
        }"""
    )
    card = a_page.locator("#control-box .rc-proposal")
    card.wait_for()
    assert "read_csv" in card.locator("textarea").input_value()
    card.locator("button.rc-edit").click()
    card.locator("textarea").fill("print('edited by a person', 3)")
    card.locator("button.rc-run").click()
    outcome = a_page.evaluate("() => window.pending")
    assert outcome["status"] == "ok"
    assert card.get_attribute("data-decision") == "edit"
    tools = [m["content"] for m in model.requests[-1]["payload"]["messages"] if m["role"] == "tool"]
    assert "print('edited by a person', 3)" in tools[0] and "edited by a person" in tools[0]
    a_page.evaluate(
        "(o) => document.body.append(Object.assign(window.footer.answerFooter(o), {id: 'foot'}))",
        outcome,
    )
    footer = a_page.locator("#foot")
    assert "tokens" in footer.locator(".rc-usage").inner_text()
    footer.locator("summary", has_text="What was sent").click()
    footer.locator(".rc-request").first.wait_for()
    assert footer.locator(".rc-request").count() == 2
    marks = footer.locator("mark.rc-from-file[data-kind='schema']")
    assert marks.count() >= 1 and "people.csv" in marks.first.text_content()


def test_verify_through_the_js_api_with_the_demo_model(a_page: Any) -> None:
    session(a_page, {"verify": True})
    outcome = a_page.evaluate("() => window.r.ask('median salary', {model: 'reckon-demo'})")
    assert outcome["status"] == "ok", outcome
    verification = outcome["verification"]
    assert verification["status"] == "confirmed", verification
    assert verification["original"]["code"] and verification["check"]["code"]
    assert "statistics.median" in verification["check"]["code"][0]
    off = a_page.evaluate(
        "() => window.r.ask('median salary', {model: 'reckon-demo', verify: false})"
    )
    assert "verification" not in off or off["verification"] is None


@pytest.mark.slow
def test_the_chat_page_asks_first_then_shows_cost_and_what_was_sent(
    a_browser: Any, a_playlist_site: str
) -> None:
    """The controls as a person meets them on index.html: the settings panel switches
    to "ask first", the proposal card sits among the steps, and the answer carries the
    token line and "What was sent"."""
    context = a_browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{a_playlist_site}/index.html")
        page.evaluate("() => window.reckon.ready()")
        page.locator(".settings summary").click()
        page.locator(".settings select[name=approval]").select_option("ask")
        page.locator(".settings .rc-status", has_text="next question").wait_for()
        page.locator("#model").select_option("reckon-demo")
        page.locator("#question").fill("what is 6*7")
        page.locator("#ask").click()
        card = page.locator("#messages .turn .rc-proposal")
        card.wait_for()
        assert "6" in card.locator("textarea").input_value()
        card.locator("button.rc-run").click()
        footer = page.locator("#messages .answer .rc-footer")
        footer.wait_for()
        assert "42" in page.locator("#messages .answer").last.inner_text()
        assert "token" in footer.locator(".rc-usage").inner_text()
        footer.locator(".rc-sent-toggle summary").click()
        sent = footer.locator(".rc-sent-toggle")
        sent.locator(".rc-request").first.wait_for()
        # Each request is collapsed; its body (the question included) is in the DOM.
        assert "offline demo model" in sent.inner_text()
        assert "what is 6*7" in (sent.text_content() or "")
    finally:
        context.close()


def another_reckon(page: Any, options: dict[str, Any], path: Any) -> dict[str, Any]:
    """`window.other`: a createReckon(options) of its own beside `window.r`, with the
    file at `path` uploaded as the file picker hands it over (a disk-backed File, so
    a big one costs the page nothing). Returns the upload's reply; close it after."""
    page.evaluate(
        """async (options) => {
            const { createReckon } = await import("./reckon.js");
            window.other = createReckon(options);
            await window.other.ready();
            const input = document.createElement("input");
            input.type = "file";
            input.id = "other-file";
            document.body.appendChild(input);
        }""",
        options,
    )
    page.set_input_files("#other-file", str(path))
    reply: dict[str, Any] = page.evaluate(
        "() => window.other.upload(document.getElementById('other-file').files[0])"
    )
    return reply


BUSY = (
    "import time\nstart = time.monotonic()\n"
    "while time.monotonic() - start < {s}:\n    pass\nprint('done')"
)


def test_a_run_may_take_longer_when_the_files_are_big(
    a_page: Any, a_playlist: tuple[Playlist, str], tmp_path: Any
) -> None:
    """`timeoutMs` is the limit of a run over small files; each GB under /data adds
    `timeoutPerGbMs` (a query over a 5 GB upload takes a minute), and the limit holds."""
    model, _ = a_playlist
    big = tmp_path / "big.bin"
    with big.open("wb") as out:  # 400 MB, sparse: nothing is written
        out.truncate(400_000_000)
    model.requests.clear()
    model.queue = [("code", BUSY.format(s=3)), ("code", BUSY.format(s=9)), ("text", "Done.")]
    settings = {"timeoutMs": 1500, "timeoutPerGbMs": 10000}
    try:
        uploaded = another_reckon(a_page, {"persist": False, "settings": settings}, big)
        assert uploaded["status"] == "ok", uploaded
        outcome = a_page.evaluate("() => window.other.ask('is it done', {model: 'scripted'})")
        assert outcome["status"] == "ok", outcome
        cells = [s for s in outcome["steps"] if s["kind"] == "code" and not s.get("origin")]
        # 1.5 s + 0.4 GB x 10 s = 5.5 s: three seconds fit, nine do not.
        assert [c["result"]["status"] for c in cells] == ["ok", "timeout"], cells
        assert cells[0]["result"]["stdout"] == "done\n"
    finally:
        a_page.evaluate("() => window.other && window.other.close()")


def test_schema_privacy_over_a_file_too_big_to_scan_says_what_to_do(
    a_page: Any, a_playlist: tuple[Playlist, str], tmp_path: Any
) -> None:
    """The value scan reads every table whole: a file that does not fit the memory
    ceiling fails the ask closed (nothing is sent), saying what the person can do."""
    model, _ = a_playlist
    big = tmp_path / "wide.csv"
    with big.open("w") as out:  # 80 MB: 1 M rows of 40 small ints, 320 MB in pandas
        out.write(",".join(f"c{i}" for i in range(40)) + "\n")
        rows = "".join(",".join(str((r + c) % 10) for c in range(40)) + "\n" for r in range(1000))
        out.write(rows * 1000)
    model.requests.clear()
    model.queue = [("text", "Done.")]
    options = {"persist": False, "memoryLimitMB": 450, "settings": {"privacy": "schema"}}
    try:
        another_reckon(a_page, options, big)
        outcome = a_page.evaluate("() => window.other.ask('who is there', {model: 'scripted'})")
        assert outcome["status"] == "error", outcome
        assert "Nothing was sent" in outcome["message"]
        assert "too big for the scan" in outcome["message"]
        assert "privacy 'full'" in outcome["message"]
        assert model.requests == []
    finally:
        a_page.evaluate("() => window.other && window.other.close()")
