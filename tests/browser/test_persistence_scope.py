"""What the page's store keeps apart and lets go, in a real browser: deleting a file
and deleting everything, a cell that tries to plant files outside /output, a new
conversation that keeps the files, and sessions (with a store from before files had
one) that neither see nor mount each other's files.

Each test opens its own browser context (`a_context`), so it starts with an empty
store.
"""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import (
    SALES_BYTES,
    ask_demo,
    call,
    ok,
    open_page,
    page_call,
    read_file,
    reload_page,
    run,
    upload_bytes,
)

pytestmark = pytest.mark.browser


def test_deleting_a_file_and_deleting_everything(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    upload_bytes(page, "keep.csv", SALES_BYTES)
    upload_bytes(page, "drop.csv", SALES_BYTES)
    ok(run(page, "open('/output/out.txt', 'w').write('hello')"))
    call(page, "deleteFile", "drop.csv")
    reload_page(page)
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
    upload_bytes(page, "sales.csv", SALES_BYTES)
    ok(run(page, PLANT))
    ok(run(page, "open('/output/fine.txt', 'w').write('fine')"))  # still stored
    stored = [f["path"] for f in call(page, "saved")["files"]]
    assert stored == ["/data/sales.csv", "/output/fine.txt"]

    reload_page(page)

    check = "import os, openpyxl\nprint(os.path.exists('/home/pyodide/openpyxl.py'), "
    check += "hasattr(openpyxl, 'PLANTED'), os.listdir('/output'))"
    assert ok(run(page, check))["stdout"] == "False False ['fine.txt']\n"
    assert read_file(page, "/data/sales.csv") == SALES_BYTES


def test_new_conversation_forgets_the_conversation_but_keeps_files(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    upload_bytes(page, "sales.csv", SALES_BYTES)
    assert ask_demo(page, "average price by region")["status"] == "ok"
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_function("async () => (await window.reckon.saved()).asks.length === 0")
    saved = call(page, "saved")
    assert saved["cells"] == [] and [f["path"] for f in saved["files"]] == ["/data/sales.csv"]
    assert page.locator(".question").count() == 0
    assert call(page, "transcript")["asks"] == []
    assert read_file(page, "/data/sales.csv") == SALES_BYTES


def plant_store(a_context: Any, server: str, script: str, arg: Any) -> None:
    """Leave a database as an older version of the page did (`script` writes it), from
    a document of the site with no Reckon of its own, before any Reckon page opens."""
    first = a_context.new_page()
    first.goto(f"{server}/build-info.json")
    assert page_call(first, script, arg) is True
    first.close()


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
    plant_store(a_context, a_static_server, OLD_STORE, ["/data/old.csv", "from before"])

    page = open_page(a_context, f"{a_static_server}/console.html")
    assert read_file(page, "/data/old.csv") == b"from before"
    upload_bytes(page, "a.csv", SALES_BYTES)
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
    reload_page(page)
    assert [f["path"] for f in call(page, "saved")["files"]] == mine
    assert read_file(page, "/output/a.txt") == b"made by a"
    b_again = page_call(page, SESSION_B, deadline_s=180)
    assert b_again["saved"]["files"] == [] and b_again["data"] == [], b_again


# A version-2 store, as pages before the cell log had a store of its own left it: the
# log inside the session record.
V2_STORE = """
  const cells = arg;
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open("reckon", 2);
    req.onupgradeneeded = () => {
      req.result.createObjectStore("session-files", { keyPath: ["session", "path"] });
      req.result.createObjectStore("sessions", { keyPath: "id" });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const record = { id: "default", transcript: { version: 1, asks: [] }, agentMessages: [],
                   cells, updated: 1 };
  await new Promise((resolve, reject) => {
    const tx = db.transaction(["sessions"], "readwrite");
    tx.objectStore("sessions").put(record);
    tx.objectStore("sessions").put({ ...record, id: "other", cells: ["elsewhere = 1"] });
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return true;
"""


def test_a_cell_log_from_before_moves_to_its_own_store(
    a_context: Any, a_static_server: str
) -> None:
    plant_store(a_context, a_static_server, V2_STORE, ["x = 41", "y = x + 1"])

    page = open_page(a_context, f"{a_static_server}/console.html")
    assert call(page, "saved")["cells"] == ["x = 41", "y = x + 1"]
    ok(run(page, "z = 3"))
    assert run(page, "1 / 0")["status"] == "error"
    assert call(page, "saved")["cells"] == ["x = 41", "y = x + 1", "z = 3"]
    replayed = call(page, "replay")
    assert (replayed["replayed"], replayed["failed"]) == (3, 0), replayed
    assert ok(run(page, "y + z"))["result"]["text"] == "45"
    # Another session's log moved too, and stays its own.
    other = page_call(
        page,
        """
        const { createReckon } = await import("./reckon.js");
        const other = createReckon({ session: "other", agent: false, snapshot: false });
        const saved = await other.saved();
        other.close();
        return saved.cells;
        """,
    )
    assert other == ["elsewhere = 1"]
    # A restart forgets the log; the record itself keeps no copy of it.
    call(page, "restart")
    assert call(page, "saved")["cells"] == []
    reload_page(page)
    assert call(page, "saved")["cells"] == []
    assert run(page, "'x' in globals()")["result"]["text"] == "False"
