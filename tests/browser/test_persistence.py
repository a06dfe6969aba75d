"""Persistence in a real browser: files, the conversation and the cell log survive
reloads and browser restarts (IndexedDB), a killed sandbox is rebuilt by replaying
the successful cells, two tabs share one store without losing each other's writes,
and a full store says so without leaving anything half-written.

Each test opens its own browser context, so it starts with an empty store.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import CHROMIUM, CHROMIUM_ARGS

from .helpers import call, page_call, read_file, run, upload_bytes

pytestmark = pytest.mark.browser

SALES = b"region,price,qty\nEast,10,1\nWest,20,2\nEast,30,3\nNorth,5,4\n"
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
# Collects the page's events in window.__events, so a test can look at them later.
LISTEN = """
  window.__events = [];
  for (const type of ["restored", "recovered", "restarted", "storage-error", "storage-changed"]) {
    window.reckon.on(type, (detail) => window.__events.push({ type, detail }));
  }
  return true;
"""


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result["status"] == "ok", result.get("error") or result
    return result


def ready(page: Any) -> dict[str, Any]:
    body = "return await withDeadline(window.reckon.ready(), deadlineMs, 'ready')"
    reply: dict[str, Any] = page_call(page, body, deadline_s=120)
    return reply


def open_page(context: Any, url: str) -> Any:
    page = context.new_page()
    page.goto(url)
    page_call(page, LISTEN)
    ready(page)
    return page


def reload(page: Any) -> None:
    page.reload()
    page_call(page, LISTEN)
    ready(page)


def ask(page: Any, question: str) -> dict[str, Any]:
    outcome: dict[str, Any] = call(page, "ask", question, {"model": "reckon-demo"}, deadline_s=120)
    return outcome


def events(page: Any, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate(
        "(kind) => window.__events.filter((e) => e.type === kind).map((e) => e.detail)", kind
    )
    return found


@pytest.fixture
def a_context(a_browser: Any) -> Iterator[Any]:
    """A fresh browser context: its own, empty IndexedDB."""
    context = a_browser.new_context()
    yield context
    context.close()


def _work_then_check_it_comes_back(page: Any, reopen: Any) -> None:
    """Upload, write an output, ask; then `reopen()` and check everything is back."""
    assert upload_bytes(page, "sales.csv", SALES)["saved"] is True
    ok(run(page, WRITE_OUTPUT))
    written = read_file(page, "/output/x.csv")
    first = ask(page, "average price by region")
    assert first["status"] == "ok", first

    page = reopen()

    assert read_file(page, "/data/sales.csv") == SALES
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
    follow = ask(page, "how many rows where price > 10")
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
        reload(page)
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
    upload_bytes(page, "sales.csv", SALES)
    ok(run(page, WRITE_OUTPUT))
    ok(run(page, "x = 41"))
    assert run(page, "1 / 0")["status"] == "error"  # failed cells are not replayed

    result = run(page, SWALLOW, timeout_ms=1500, deadline_s=20)
    assert result["status"] == "timeout", result
    assert result["restarted"] is True
    assert "rebuilt" in result["error"]["message"]

    # The next run waits for the rebuild: the variables are back.
    assert ok(run(page, "x + 1", deadline_s=90))["result"]["text"] == "42"
    (recovered,) = events(page, "recovered")
    assert recovered["reason"] == "timeout"
    assert recovered["replayed"] >= 2 and recovered["failed"] == 0
    assert "replayed to rebuild your variables" in recovered["message"]
    page.get_by_role("status").filter(has_text="replayed to rebuild").wait_for()
    # Uploads and outputs are still there; the killed cell was not logged.
    assert read_file(page, "/data/sales.csv") == SALES
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
        errors = events(page, "storage-error")
        assert len(errors) == 1, errors
        (error,) = errors
        assert error["quota"] is True and error["path"] == "/data/big.csv"
        assert error["message"].startswith("Browser storage is full: big.csv was not saved")
        assert "Delete files you no longer need" in error["message"]
        page.get_by_role("alert").filter(has_text="Browser storage is full").wait_for()
        assert call(page, "saved")["files"] == []
        # Small things still fit.
        assert upload_bytes(page, "small.csv", SALES)["saved"] is True
    finally:
        cdp.send("Storage.overrideQuotaForOrigin", {"origin": a_static_server})
    reload(page)
    assert [f["path"] for f in call(page, "saved")["files"]] == ["/data/small.csv"]
    assert run(page, "open('/data/big.csv')")["error"]["type"] == "FileNotFoundError"


def test_deleting_a_file_and_deleting_everything(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    upload_bytes(page, "keep.csv", SALES)
    upload_bytes(page, "drop.csv", SALES)
    ok(run(page, "open('/output/out.txt', 'w').write('hello')"))
    call(page, "deleteFile", "drop.csv")
    reload(page)
    stored = [f["path"] for f in call(page, "saved")["files"]]
    assert stored == ["/data/keep.csv", "/output/out.txt"]
    assert [f["name"] for f in call(page, "listFiles", "/data")] == ["keep.csv"]
    assert read_file(page, "/output/out.txt") == b"hello"

    # The delete button in the page's list does the same.
    page.get_by_role("button", name="Delete /output/out.txt").click()
    page.locator("#file-list").get_by_text("/output/out.txt").wait_for(state="detached")
    assert [f["path"] for f in call(page, "saved")["files"]] == ["/data/keep.csv"]

    assert call(page, "clearAll", deadline_s=90)["status"] == "ok"
    saved = call(page, "saved")
    assert (saved["files"], saved["cells"], saved["asks"]) == ([], [], [])
    assert call(page, "listFiles", "/data") == []
    assert call(page, "listFiles", "/output") == []


# A cell runs in the interpreter that lists the files it wrote, so it can report any
# path: here one outside /output that would shadow openpyxl, and one over an upload.
PLANT = """
import reckon.kernel._session as kernel_session
open('/home/pyodide/openpyxl.py', 'w').write('PLANTED = True\\n')
open('/tmp/forged.csv', 'w').write('region,price,qty\\nForged,1,1\\n')
real = kernel_session.diff_snapshots
kernel_session.diff_snapshots = lambda a, b: real(a, b) + [
    {'path': '/output/../home/pyodide/openpyxl.py', 'size': 15, 'change': 'created'},
    {'path': '/output/../tmp/../data/sales.csv', 'size': 9, 'change': 'modified'},
    {'path': '/output/./../tmp/forged.csv', 'size': 9, 'change': 'created'},
]
print('planted')
"""


def test_a_cell_cannot_plant_files_outside_output(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    upload_bytes(page, "sales.csv", SALES)
    ok(run(page, PLANT))
    ok(run(page, "open('/output/fine.txt', 'w').write('fine')"))  # still stored
    stored = [f["path"] for f in call(page, "saved")["files"]]
    assert stored == ["/data/sales.csv", "/output/fine.txt"]

    reload(page)

    check = "import os, openpyxl\nprint(os.path.exists('/home/pyodide/openpyxl.py'), "
    check += "hasattr(openpyxl, 'PLANTED'), os.listdir('/output'))"
    assert ok(run(page, check))["stdout"] == "False False ['fine.txt']\n"
    assert read_file(page, "/data/sales.csv") == SALES


def test_new_conversation_forgets_the_conversation_but_keeps_files(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    upload_bytes(page, "sales.csv", SALES)
    assert ask(page, "average price by region")["status"] == "ok"
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_function("async () => (await window.reckon.saved()).asks.length === 0")
    saved = call(page, "saved")
    assert saved["cells"] == [] and [f["path"] for f in saved["files"]] == ["/data/sales.csv"]
    assert page.locator(".question").count() == 0
    assert call(page, "transcript")["asks"] == []
    assert read_file(page, "/data/sales.csv") == SALES


# A version-1 store, as pages before per-session files left it: files keyed by path alone.
OLD_STORE = """
  const [path, text] = arg;
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open("reckon", 1);
    req.onupgradeneeded = () => {
      req.result.createObjectStore("files", { keyPath: "path" });
      req.result.createObjectStore("sessions", { keyPath: "id" });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const blob = new Blob([text]);
  await new Promise((resolve, reject) => {
    const tx = db.transaction(["files"], "readwrite");
    tx.objectStore("files").put({ path, blob, size: blob.size, mtime: 1, kind: "upload" });
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return true;
"""

# A second session on the same page (same origin, same database), without an agent.
SESSION_B = """
  const { createReckon } = await import("./reckon.js");
  window.b = createReckon({ session: "b", agent: false });
  window.heard = [];
  new BroadcastChannel("reckon-store:reckon").onmessage = (ev) => window.heard.push(ev.data);
  await withDeadline(window.b.ready(), deadlineMs, "session b");
  const names = async (dir) => (await window.b.listFiles(dir)).map((f) => f.name);
  const saved = await window.b.saved();
  const restored = window.b.restored();
  return { saved, data: await names("/data"), output: await names("/output"), restored };
"""


def test_sessions_do_not_see_or_mount_each_others_files(
    a_context: Any, a_static_server: str
) -> None:
    # Data saved before files had a session belongs to the default session.
    first = a_context.new_page()
    first.goto(f"{a_static_server}/build-info.json")
    assert page_call(first, OLD_STORE, ["/data/old.csv", "from before"]) is True
    first.close()

    page = open_page(a_context, f"{a_static_server}/console.html")
    assert read_file(page, "/data/old.csv") == b"from before"
    upload_bytes(page, "a.csv", SALES)
    ok(run(page, "open('/output/a.txt', 'w').write('made by a')"))
    mine = ["/data/a.csv", "/data/old.csv", "/output/a.txt"]
    assert [f["path"] for f in call(page, "saved")["files"]] == mine

    b = page_call(page, SESSION_B, deadline_s=180)
    assert b["saved"]["files"] == [], b["saved"]
    assert (b["data"], b["output"]) == ([], []), b
    assert b["restored"]["files"] == []
    # b's own files are b's: stored for it, announced with its name, not mounted in "default".
    written = page_call(
        page,
        """
        await window.b.writeFile("b.csv", "b only");
        await window.b.run("open('/output/b.txt', 'w').write('made by b')");
        await withDeadline(new Promise((resolve) => {
          const files = () => window.heard.filter((m) => m.type === "file").length;
              const wait = () => (files() >= 2 ? resolve() : setTimeout(wait, 20));
          wait();
        }), deadlineMs, "announcements");
        return { saved: (await window.b.saved()).files.map((f) => f.path), heard: window.heard };
        """,
    )
    assert written["saved"] == ["/data/b.csv", "/output/b.txt"]
    files_heard = [m for m in written["heard"] if m["type"] == "file"]
    assert files_heard and {m["session"] for m in files_heard} == {"b"}, written["heard"]
    ok(run(page, "1"))  # the default session's sandbox has handled what it was sent meanwhile
    assert [f["name"] for f in call(page, "listFiles", "/data")] == ["a.csv", "old.csv"]
    assert run(page, "open('/data/b.csv')")["error"]["type"] == "FileNotFoundError"
    assert [f["path"] for f in call(page, "saved")["files"]] == mine

    # Clearing b leaves the default session's files alone, also after a reload.
    assert page_call(page, "return (await window.b.clearAll()).status", deadline_s=120) == "ok"
    reload(page)
    assert [f["path"] for f in call(page, "saved")["files"]] == mine
    assert read_file(page, "/output/a.txt") == b"made by a"
    b_again = page_call(page, SESSION_B, deadline_s=180)
    assert b_again["saved"]["files"] == [] and b_again["data"] == [], b_again
