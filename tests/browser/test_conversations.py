"""The conversations a browser keeps, through the JS API in a real browser: each has its
own asks and cell log; opening one rebuilds its variables by replay; renames survive a
reload; a deletion can be undone whole, and without an undo it is gone after a reload
while the files another conversation uses stay; a store from before (one conversation
per session) becomes the first of the list.

Each test opens its own browser context (`a_context`), so it starts with an empty store.
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
from .test_persistence_scope import plant_store

pytestmark = pytest.mark.browser


def two_conversations(page: Any, first_cell: str, second_cell: str) -> tuple[str, str]:
    """Run ``first_cell`` in the open conversation and ``second_cell`` in a new one; the
    ids of both (the second is open)."""
    ok(run(page, first_cell))
    first = call(page, "saved")["conversation"]
    call(page, "newConversation")
    ok(run(page, second_cell))
    return first, call(page, "saved")["conversation"]


def listed(page: Any) -> list[dict[str, Any]]:
    reply = call(page, "conversations")
    assert reply["status"] == "ok", reply
    entries: list[dict[str, Any]] = reply["conversations"]
    return entries


def test_two_conversations_keep_their_own_asks_and_variables(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    upload_bytes(page, "sales.csv", SALES_BYTES)
    ok(run(page, "first_var = 41"))
    assert ask_demo(page, "  average price\n by region  ")["status"] == "ok"
    first = call(page, "saved")["conversation"]

    assert call(page, "newConversation")["status"] == "ok"
    assert call(page, "transcript")["asks"] == []
    ok(run(page, "second_var = 'b'"))
    assert ask_demo(page, "how many rows where price > 10")["status"] == "ok"
    second = call(page, "saved")["conversation"]
    assert second != first

    entries = listed(page)
    assert [e["id"] for e in entries] == [second, first]  # newest first
    assert [e["title"] for e in entries] == [
        "how many rows where price > 10",
        "average price by region",
    ]
    assert [e["current"] for e in entries] == [True, False]
    assert all(e["asks"] == 1 and e["steps"] >= 1 for e in entries), entries
    # The upload is used by both: it was there when the second one started.
    (sales,) = call(page, "saved")["files"]
    assert sorted(sales["conversations"]) == sorted([first, second])

    opened = call(page, "openConversation", first, deadline_s=90)
    assert opened["status"] == "ok" and opened["id"] == first, opened
    assert (opened["replayed"], opened["failed"]) == (len(call(page, "saved")["cells"]), 0)
    # Its variables are back by replay, the other conversation's are not there.
    assert ok(run(page, "first_var + 1"))["result"]["text"] == "42"
    assert run(page, "second_var")["error"]["type"] == "NameError"
    assert [a["question"] for a in call(page, "transcript")["asks"]] == [
        "  average price\n by region  "
    ]
    # The page shows the opened conversation only.
    page.locator("#messages .question").filter(has_text="average price").wait_for()
    assert page.locator("#messages .question").count() == 1
    # A follow-up goes to this conversation, with its history in the model's context.
    assert ask_demo(page, "total qty")["status"] == "ok"
    assert [e["id"] for e in listed(page)] == [first, second]
    state = page_call(page, "return await window.reckon.agent.exportState()")
    questions = [m["content"] for m in state["messages"] if m["role"] == "user"]
    assert "how many rows where price > 10" not in questions and "total qty" in questions

    renamed = call(page, "renameConversation", second, "  Rows over ten  ")
    assert renamed["status"] == "ok" and renamed["title"] == "Rows over ten", renamed

    reload_page(page)
    entries = listed(page)
    assert [(e["id"], e["title"], e["current"]) for e in entries] == [
        (first, "average price by region", True),
        (second, "Rows over ten", False),
    ]
    # A later ask does not take the renamed title away.
    opened = call(page, "openConversation", second, deadline_s=90)
    assert opened["status"] == "ok" and opened["replayed"] >= 1
    assert ok(run(page, "second_var"))["result"]["text"] == "'b'"
    assert ask_demo(page, "average qty")["status"] == "ok"
    assert listed(page)[0]["title"] == "Rows over ten"


def test_bad_ids_and_titles_say_what_to_do_and_change_nothing(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    ok(run(page, "kept = 1"))
    (only,) = listed(page)
    for method, args in [
        ("openConversation", ["nope"]),
        ("deleteConversation", ["nope"]),
        ("renameConversation", ["nope", "x"]),
    ]:
        reply = call(page, method, *args)
        assert reply["status"] == "error" and "conversations()" in reply["message"], reply
    reply = call(page, "renameConversation", only["id"], " \n ")
    assert reply["status"] == "error" and "nothing was renamed" in reply["message"]
    reply = call(page, "restoreConversation", "nope")
    assert reply["status"] == "error" and "no deleted conversation" in reply["message"]
    thrown = page_call(
        page,
        "try { await window.reckon.renameConversation(arg, 5); return 'no'; }"
        " catch (err) { return err.name; }",
        only["id"],
    )
    assert thrown == "TypeError"
    assert listed(page) == [only]
    assert ok(run(page, "kept"))["result"]["text"] == "1"


def test_a_deletion_can_be_undone_whole_and_without_undo_it_is_gone(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    upload_bytes(page, "shared.csv", SALES_BYTES)
    first, second = two_conversations(page, "x = 1", "y = 2")
    assert call(page, "openConversation", first, deadline_s=90)["status"] == "ok"
    ok(run(page, "open('/output/first_only.txt', 'w').write('mine')"))
    cells = call(page, "saved")["cells"]
    assert len(cells) == 2

    # Deleting the open conversation: a new one opens; the file only it used leaves.
    gone = call(page, "deleteConversation", first)
    assert gone["status"] == "ok" and gone["files"] == ["/output/first_only.txt"], gone
    assert gone["opened"] not in (first, second)
    assert [e["id"] for e in listed(page)] == [second]
    assert [f["name"] for f in call(page, "listFiles", "/output")] == []
    assert [f["name"] for f in call(page, "listFiles", "/data")] == ["shared.csv"]

    back = call(page, "restoreConversation", first)
    assert back["status"] == "ok" and back["files"] == ["/output/first_only.txt"], back
    assert {e["id"] for e in listed(page)} == {first, second}
    assert read_file(page, "/output/first_only.txt") == b"mine"
    assert call(page, "openConversation", first, deadline_s=90)["replayed"] == 2
    assert call(page, "saved")["cells"] == cells
    assert ok(run(page, "x"))["result"]["text"] == "1"

    # Deleted again, with no undo: after a reload it is gone, and so is its own file;
    # the upload the other conversation uses stays.
    call(page, "openConversation", second, deadline_s=90)
    assert call(page, "deleteConversation", first)["status"] == "ok"
    reload_page(page)
    assert [e["id"] for e in listed(page)] == [second]
    assert [f["path"] for f in call(page, "saved")["files"]] == ["/data/shared.csv"]
    assert read_file(page, "/data/shared.csv") == SALES_BYTES
    assert call(page, "restoreConversation", first)["status"] == "error"
    assert call(page, "saved")["cells"] == ["y = 2"]


# A version-3 store, as pages before the list of conversations left it: one conversation
# per session, its cell log in session-cells.
V3_STORE = """
  const [question, cells] = arg;
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open("reckon", 3);
    req.onupgradeneeded = () => {
      req.result.createObjectStore("session-files", { keyPath: ["session", "path"] });
      req.result.createObjectStore("sessions", { keyPath: "id" });
      const cells = req.result.createObjectStore("session-cells", { autoIncrement: true });
      cells.createIndex("session", "session");
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const step = { index: 0, kind: "answer", text: "It is 20." };
  const ask = { question, status: "ok", answer: "It is 20.", steps: [step] };
  const blob = new Blob(["region,price\\nNorth,20\\n"]);
  await new Promise((resolve, reject) => {
    const tx = db.transaction(["session-files", "sessions", "session-cells"], "readwrite");
    tx.objectStore("session-files").put({
      session: "default", path: "/data/old.csv", blob, size: blob.size, mtime: 1, kind: "upload" });
    tx.objectStore("sessions").put({ id: "default", transcript: { version: 1, asks: [ask] },
      agentMessages: [
        { role: "user", content: question }, { role: "assistant", content: "It is 20." }],
      updated: 1000 });
    for (const code of cells) tx.objectStore("session-cells").add({ session: "default", code });
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return true;
"""


def test_the_one_conversation_of_an_older_store_becomes_the_first_of_the_list(
    a_context: Any, a_static_server: str
) -> None:
    plant_store(
        a_context, a_static_server, V3_STORE, ["What is the price?", ["a = 20", "b = a * 2"]]
    )
    page = open_page(a_context, f"{a_static_server}/index.html")
    (entry,) = listed(page)
    assert (entry["title"], entry["asks"], entry["steps"], entry["updated"]) == (
        "What is the price?",
        1,
        1,
        1000,
    )
    saved = call(page, "saved")
    assert saved["conversation"] == entry["id"] and saved["cells"] == ["a = 20", "b = a * 2"]
    assert [(f["path"], f["conversations"]) for f in saved["files"]] == [
        ("/data/old.csv", [entry["id"]])
    ]
    assert [a["question"] for a in saved["asks"]] == ["What is the price?"]
    page.locator("#messages .question").filter(has_text="What is the price?").wait_for()
    assert call(page, "replay")["replayed"] == 2
    assert ok(run(page, "b"))["result"]["text"] == "40"
    # The agent has the old history back.
    assert [a["question"] for a in call(page, "transcript")["asks"]] == ["What is the price?"]
    state = page_call(page, "return await window.reckon.agent.exportState()")
    assert [m["content"] for m in state["messages"] if m["role"] == "user"] == [
        "What is the price?"
    ]
    # A new conversation keeps the old one in the list.
    call(page, "newConversation")
    ok(run(page, "c = 1"))
    assert [e["title"] for e in listed(page)] == ["Untitled conversation", "What is the price?"]


# A version-4 store, as pages before asks of their own left it: each conversation's
# transcript inside its conversation-data record.
V4_STORE = """
  const questions = arg;
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open("reckon", 4);
    req.onupgradeneeded = () => {
      const db = req.result;
      db.createObjectStore("session-files", { keyPath: ["session", "path"] });
      db.createObjectStore("sessions", { keyPath: "id" });
      const cells = db.createObjectStore("session-cells", { autoIncrement: true });
      cells.createIndex("session", "session");
      cells.createIndex("conversation", ["session", "conversation"]);
      const heads = db.createObjectStore("conversations", { keyPath: ["session", "id"] });
      heads.createIndex("session", "session");
      db.createObjectStore("conversation-data", { keyPath: ["session", "id"] });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const asks = questions.map((question, i) => ({ question, status: "ok", answer: `answer ${i}`,
    steps: [{ index: 0, kind: "answer", text: `answer ${i}` }] }));
  await new Promise((resolve, reject) => {
    const stores = ["sessions", "conversations", "conversation-data", "session-cells"];
    const tx = db.transaction(stores, "readwrite");
    tx.objectStore("sessions").put({ id: "default", current: "cold", updated: 1000 });
    tx.objectStore("conversations").put({ session: "default", id: "cold", title: questions[0],
      created: 900, updated: 1000, asks: asks.length, steps: asks.length, deleted: null });
    tx.objectStore("conversation-data").put({ session: "default", id: "cold",
      transcript: { version: 1, asks }, pending: null,
      agentMessages: questions.flatMap((q, i) => [
        { role: "user", content: q }, { role: "assistant", content: `answer ${i}` }]) });
    const cell = { session: "default", conversation: "cold", code: "a = 1" };
    tx.objectStore("session-cells").add(cell);
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return true;
"""


def test_a_version_4_transcript_becomes_asks_of_their_own(
    a_context: Any, a_static_server: str
) -> None:
    questions = ["What is the price?", "And the mean?"]
    plant_store(a_context, a_static_server, V4_STORE, questions)
    page = open_page(a_context, f"{a_static_server}/index.html")
    (entry,) = listed(page)
    assert (entry["id"], entry["title"], entry["asks"], entry["steps"]) == (
        "cold",
        questions[0],
        2,
        2,
    )
    saved = call(page, "saved")
    assert [a["answer"] for a in saved["asks"]] == ["answer 0", "answer 1"]
    assert saved["cells"] == ["a = 1"]
    assert [a["question"] for a in call(page, "transcript")["asks"]] == questions
    # One more ask is added after them; the record of the history holds no transcript.
    assert ask_demo(page, "how many rows")["status"] == "ok"
    stored = page_call(
        page,
        """
        const db = await new Promise((resolve) => {
          const req = indexedDB.open("reckon");
          req.onsuccess = () => resolve(req.result);
        });
        const tx = db.transaction(["conversation-data", "conversation-asks"], "readonly");
        const get = (name) => new Promise((resolve) => {
          const req = tx.objectStore(name).getAll();
          req.onsuccess = () => resolve(req.result);
        });
        const [data, asks] = [await get("conversation-data"), await get("conversation-asks")];
        db.close();
        return { data, asks: asks.map((a) => [a.conversation, a.ask.question]) };
        """,
    )
    assert [("transcript" in d) for d in stored["data"]] == [False]
    assert stored["asks"] == [["cold", q] for q in [*questions, "how many rows"]]
    assert listed(page)[0]["asks"] == 3


def test_the_page_lists_switches_renames_and_undoes_a_delete(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    upload_bytes(page, "sales.csv", SALES_BYTES)
    ok(run(page, "mine = 'first'"))
    assert ask_demo(page, "average price by region")["status"] == "ok"
    page.get_by_role("button", name="New conversation").click()
    page.locator("#conversation-list [aria-current='true']").filter(
        has_text="New conversation"
    ).wait_for()
    assert ask_demo(page, "total qty")["status"] == "ok"
    items = page.locator("#conversation-list .conv-title")
    page.wait_for_function(
        "() => document.querySelectorAll('#conversation-list .conv-title').length === 2"
    )
    assert items.all_inner_texts() == ["total qty", "average price by region"]
    # The upload is shared: its row names the other conversation that uses it.
    uses = page.locator("#file-list .file-uses")
    uses.filter(has_text="also in “average price by region”").wait_for(timeout=30_000)

    # Click one: it opens, its question is shown, its variables are back.
    page.get_by_role("button", name="average price by region", exact=True).click()
    page.get_by_role("status").filter(has_text="is open").wait_for(timeout=60_000)
    assert page.locator("#messages .question").all_inner_texts() == ["average price by region"]
    assert ok(run(page, "mine"))["result"]["text"] == "'first'"

    # Rename in place; Enter keeps it.
    page.get_by_role("button", name="Rename: average price by region").click()
    page.get_by_role("textbox", name="New title").fill("Prices")
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Prices", exact=True).wait_for()

    # Delete the open one: its view is emptied; Undo brings it back, open again.
    page.get_by_role("button", name="Delete conversation: Prices").click()
    undo = page.get_by_role("button", name="Undo")
    undo.wait_for()
    assert page.locator("#messages .question").count() == 0
    assert [e["title"] for e in listed(page)] == ["total qty"]
    undo.click()
    page.locator("#messages .question").filter(has_text="average price by region").wait_for()
    assert [(e["title"], e["current"]) for e in listed(page)] == [
        ("total qty", False),
        ("Prices", True),
    ]

    # On a phone the list is a menu behind a button, and nothing sticks out.
    page.set_viewport_size({"width": 390, "height": 844})
    menu = page.get_by_role("button", name="Conversations (2)")
    menu.wait_for()
    assert not page.get_by_role("button", name="total qty", exact=True).is_visible()
    menu.click()
    page.get_by_role("button", name="total qty", exact=True).click()
    page.get_by_role("status").filter(has_text="“total qty” is open").wait_for(timeout=60_000)
    assert page.locator("#messages .question").all_inner_texts() == ["total qty"]
    sizes = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sizes[0] <= sizes[1], sizes


def test_switching_mid_answer_is_refused_and_loses_nothing(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    upload_bytes(page, "sales.csv", SALES_BYTES)
    first, second = two_conversations(page, "before = 1", "other = 2")
    assert call(page, "configure", {"approval": "ask"})["status"] == "ok"
    # An ask that waits for a decision on its first cell: it is under way meanwhile.
    outcome = page_call(
        page,
        """
        const [first, second] = arg;
        const proposed = new Promise((resolve) => window.reckon.on("proposal", resolve));
        const asked = window.reckon.ask("average price by region", { model: "reckon-demo" });
        await withDeadline(proposed, deadlineMs, "proposal");
        const tries = {
          open: await window.reckon.openConversation(first),
          fresh: await window.reckon.newConversation(),
          remove: await window.reckon.deleteConversation(second),
          other: await window.reckon.deleteConversation(first),
        };
        window.reckon.stop();
        const answer = await withDeadline(asked, deadlineMs, "ask");
        const transcript = await window.reckon.transcript();
        return { tries, status: answer.status, saved: await window.reckon.saved(), transcript };
        """,
        [first, second],
        deadline_s=120,
    )
    tries = outcome["tries"]
    for name in ("open", "fresh", "remove"):
        assert tries[name]["status"] == "error", tries
        assert "stop it" in tries[name]["message"], tries
    assert tries["other"]["status"] == "ok"  # not the open one: no answer is cut off
    assert outcome["status"] == "stopped"
    saved = outcome["saved"]
    assert saved["conversation"] == second
    # What the agent recorded of the stopped ask is stored in the conversation it was asked in.
    asked = [a["question"] for a in outcome["transcript"]["asks"]]
    assert asked and [a["question"] for a in saved["asks"]] == asked
    assert [e["id"] for e in listed(page)] == [second]
    opened = call(page, "restoreConversation", first)
    assert opened["status"] == "ok"
    assert call(page, "openConversation", first, deadline_s=90)["status"] == "ok"
    assert ok(run(page, "before"))["result"]["text"] == "1"


def test_any_kept_conversation_can_be_exported(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/index.html")
    upload_bytes(page, "sales.csv", SALES_BYTES)
    assert ask_demo(page, "average price by region")["status"] == "ok"
    first = call(page, "saved")["conversation"]
    call(page, "newConversation")
    assert ask_demo(page, "total qty")["status"] == "ok"
    exported = page_call(
        page,
        """
        const other = await window.reckon.exportNotebook({ conversation: arg });
        const script = await window.reckon.exportScript({ conversation: arg });
        const open = await window.reckon.exportNotebook();
        let refused = null;
        try { await window.reckon.exportNotebook({ conversation: "nope" }); }
        catch (err) { refused = err.message; }
        return { other, script, open, refused, asks: (await window.reckon.transcript()).asks };
        """,
        first,
    )
    assert "average price by region" in exported["other"]
    assert "total qty" not in exported["other"]
    assert "average price by region" in exported["script"]
    assert "total qty" in exported["open"] and "average price" not in exported["open"]
    assert "conversations()" in exported["refused"]
    # The open conversation's history is the agent's again: a follow-up goes on from it.
    assert [a["question"] for a in exported["asks"]] == ["total qty"]
    assert ask_demo(page, "average qty")["status"] == "ok"
    questions = [a["question"] for a in call(page, "saved")["asks"]]
    assert questions == ["total qty", "average qty"]
