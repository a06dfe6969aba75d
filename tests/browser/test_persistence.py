"""Persistence in a real browser: files, the conversation and the cell log survive
reloads and browser restarts (IndexedDB), a killed sandbox is rebuilt by replaying
the successful cells, two tabs share one store without losing each other's writes,
and a full store says so without leaving anything half-written.

Each test opens its own browser context (`a_context`), so it starts with an empty
store. What is kept apart and what is deleted: test_persistence_scope.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from support import CHROMIUM, CHROMIUM_ARGS

from .helpers import (
    SALES_BYTES,
    ask_demo,
    call,
    events_of,
    ok,
    open_page,
    page_call,
    read_file,
    reload_page,
    run,
    upload_bytes,
)

pytestmark = pytest.mark.browser


WRITE_OUTPUT = (
    "import pandas as pd\n"
    "sales_df = pd.read_csv('/data/sales.csv')\n"
    "sales_df.groupby('region')['qty'].sum().to_csv('/output/x.csv')\n"
    "print('written')"
)
SWALLOW = (
    "while True:\n"
    "    try:\n"
    "        while True:\n"
    "            pass\n"
    "    except KeyboardInterrupt:\n"
    "        pass\n"
)


def _work_then_check_it_comes_back(page: Any, reopen: Any) -> None:
    """Upload, write an output, ask; then `reopen()` and check everything is back."""
    assert upload_bytes(page, "sales.csv", SALES_BYTES)["saved"] is True
    ok(run(page, WRITE_OUTPUT))
    written = read_file(page, "/output/x.csv")
    first = ask_demo(page, "average price by region")
    assert first["status"] == "ok", first

    page = reopen()

    assert read_file(page, "/data/sales.csv") == SALES_BYTES
    assert read_file(page, "/output/x.csv") == written
    transcript = call(page, "transcript")
    assert [a["question"] for a in transcript["asks"]] == ["average price by region"]
    # The chat page shows the past question, its steps and its answer again.
    page.locator(".question").filter(has_text="average price by region").wait_for()
    answer = page.locator(".answer.status-ok").first
    answer.wait_for()
    assert "20" in answer.inner_text()
    assert page.locator("details.step").count() >= 1
    rebuild = page.get_by_role("button", name=re.compile(r"^Rebuild variables \(\d+ cells\)$"))
    rebuild.wait_for()
    # The agent has its history back: a follow-up is answered, with the first
    # question still in the model's context.
    follow = ask_demo(page, "how many rows where price > 10")
    assert follow["status"] == "ok", follow
    assert "2" in follow["answer"]
    state = page_call(page, "return await window.reckon.agent.exportState()")
    questions = [m["content"] for m in state["messages"] if m["role"] == "user"]
    assert "average price by region" in questions
    saved = call(page, "saved")
    assert [a["question"] for a in saved["asks"]] == [
        "average price by region",
        "how many rows where price > 10",
    ]
    # Variables are not rebuilt on a plain reload until asked.
    assert run(page, "sales_df")["error"]["type"] == "NameError"
    rebuild.click()
    page.get_by_role("status").filter(has_text="replayed").wait_for(timeout=60_000)
    assert ok(run(page, "len(sales_df)"))["result"]["text"] == "4"


def test_files_and_the_conversation_survive_a_reload(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")

    def reopen() -> Any:
        reload_page(page)
        return page

    _work_then_check_it_comes_back(page, reopen)


def test_files_and_the_conversation_survive_a_browser_restart(
    a_browser: Any, a_static_server: str, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    launch = a_browser.browser_type.launch_persistent_context
    contexts: list[Any] = []

    def start() -> Any:
        context = launch(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        contexts.append(context)
        return open_page(context, f"{a_static_server}/index.html")

    def reopen() -> Any:
        contexts[-1].close()  # the whole browser goes away, then starts again
        return start()

    try:
        _work_then_check_it_comes_back(start(), reopen)
    finally:
        for context in contexts:
            context.close()


def test_a_killed_sandbox_is_rebuilt_by_replaying_the_successful_cells(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    upload_bytes(page, "sales.csv", SALES_BYTES)
    ok(run(page, WRITE_OUTPUT))
    ok(run(page, "x = 41"))
    assert run(page, "1 / 0")["status"] == "error"  # failed cells are not replayed

    result = run(page, SWALLOW, timeout_ms=1500, deadline_s=20)
    assert result["status"] == "timeout", result
    assert result["restarted"] is True
    assert "rebuilt" in result["error"]["message"]

    # The next run waits for the rebuild: the variables are back.
    assert ok(run(page, "x + 1", deadline_s=90))["result"]["text"] == "42"
    (recovered,) = events_of(page, "recovered")
    assert recovered["reason"] == "timeout"
    assert recovered["replayed"] >= 2 and recovered["failed"] == 0
    assert "replayed to rebuild your variables" in recovered["message"]
    page.get_by_role("status").filter(has_text="replayed to rebuild").wait_for()
    # Uploads and outputs are still there; the killed cell was not logged.
    assert read_file(page, "/data/sales.csv") == SALES_BYTES
    assert b"East,4" in read_file(page, "/output/x.csv")
    cells = call(page, "saved")["cells"]
    assert cells == [WRITE_OUTPUT, "x = 41", "x + 1"]


def test_two_tabs_write_at_the_same_time_without_losing_anything(
    a_context: Any, a_static_server: str
) -> None:
    tabs = [open_page(a_context, f"{a_static_server}/console.html") for _ in range(2)]
    job = """
      const tab = arg;
      window.__job = (async () => {
        const bytes = new TextEncoder().encode(`n\\n${tab}\\n`);
        const upload = await window.reckon.upload({ name: `tab${tab}.csv`, bytes });
        const results = [];
        for (let i = 0; i < 6; i++) results.push(await window.reckon.run(`v${tab}_${i} = ${i}`));
        return { upload, statuses: results.map((r) => r.status) };
      })().then(
        (value) => (window.__done = value),
        (err) => (window.__done = { error: String(err) }));
      return true;
    """
    for number, tab in enumerate(tabs):
        page_call(tab, job, number)
    done = []
    for tab in tabs:
        tab.wait_for_function("() => window.__done !== undefined", timeout=60_000)
        done.append(tab.evaluate("() => window.__done"))
    for outcome in done:
        assert "error" not in outcome, outcome
        assert outcome["upload"]["saved"] is True
        assert outcome["statuses"] == ["ok"] * 6

    saved = call(tabs[0], "saved")
    assert {f["path"] for f in saved["files"]} == {"/data/tab0.csv", "/data/tab1.csv"}
    for number in range(2):
        mine = [c for c in saved["cells"] if c.startswith(f"v{number}_")]
        assert mine == [f"v{number}_{i} = {i}" for i in range(6)]  # all of them, in order
    assert len(saved["cells"]) == 12
    # Each tab mirrors the other's upload into its own sandbox.
    tabs[0].wait_for_function(
        "async () => (await window.reckon.listFiles('/data')).some((f) => f.name === 'tab1.csv')",
        timeout=30_000,
    )
    assert read_file(tabs[0], "/data/tab1.csv") == b"n\n1\n"


def test_a_full_store_says_so_and_keeps_nothing_half_written(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    cdp = a_context.new_cdp_session(page)
    # The start-up snapshot's copy is written after "ready": measure once it is there.
    page_call(page, "return await window.reckon.sandbox.snapshotDone;", deadline_s=120)
    usage = page_call(page, "return (await navigator.storage.estimate()).usage")
    # Room for the conversation and small files, not for the big upload.
    quota = usage + 1_000_000
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": a_static_server, "quotaSize": quota})
    try:
        big = b"a,b\n" + b"1,2\n" * 1_000_000  # 4 MB, well over the quota
        info = upload_bytes(page, "big.csv", big)
        # The upload works in this session; it just is not kept for next time.
        assert info["status"] == "ok" and info["saved"] is False
        assert ok(run(page, "len(open('/data/big.csv').read())"))["result"]["text"] == str(len(big))
        errors = events_of(page, "storage-error")
        assert len(errors) == 1, errors
        (error,) = errors
        assert error["quota"] is True and error["path"] == "/data/big.csv"
        assert error["message"].startswith("Browser storage is full: big.csv was not saved")
        assert "Delete files you no longer need" in error["message"]
        page.get_by_role("alert").filter(has_text="Browser storage is full").wait_for()
        assert call(page, "saved")["files"] == []
        # Small things still fit.
        assert upload_bytes(page, "small.csv", SALES_BYTES)["saved"] is True
    finally:
        cdp.send("Storage.overrideQuotaForOrigin", {"origin": a_static_server})
    reload_page(page)
    assert [f["path"] for f in call(page, "saved")["files"]] == ["/data/small.csv"]
    assert run(page, "open('/data/big.csv')")["error"]["type"] == "FileNotFoundError"
