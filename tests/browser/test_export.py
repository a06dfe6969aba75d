"""Export that reproduces, import, and SQL, through the page's JS API in Chromium.

A demo-model session over the shipped sample data is exported with
``exportNotebook()``, validated with nbformat, run again on CPython with the same
input file, and every output compared with what the browser showed. Notebooks
and scripts go back in with ``importNotebook()``; ``runSql()`` queries the tables.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from reckon.reproduce import reproduce_notebook
from support import ROOT

from .helpers import call, page_call, run, upload_bytes

pytestmark = pytest.mark.browser

SALES = ROOT / "benchmarks" / "questions" / "sales.csv"
QUESTIONS = [
    "summarize the data",
    "average price by region",
    "bar chart of quantity by region",
    "histogram of price",
    "sql: total sales per product",
    "top 3 regions by sales",
    "what is 17*23+4",
]


def ask(page: Any, question: str) -> dict[str, Any]:
    outcome: dict[str, Any] = call(page, "ask", question, deadline_s=180)
    assert outcome["status"] == "ok", outcome
    return outcome


def import_text(page: Any, text: str, name: str | None = None) -> dict[str, Any]:
    opts = {"name": name} if name else {}
    reply: dict[str, Any] = call(page, "importNotebook", text, opts, deadline_s=180)
    return reply


def import_file(page: Any, name: str, data: bytes) -> dict[str, Any]:
    body = """
      const [name, b64] = arg;
      const file = new File([fromB64(b64)], name);
      return await withDeadline(window.reckon.importNotebook(file), deadlineMs, "import");
    """
    reply: dict[str, Any] = page_call(
        page, body, [name, base64.b64encode(data).decode()], deadline_s=180
    )
    return reply


def export(page: Any) -> str:
    text: str = call(page, "exportNotebook", deadline_s=60)
    return text


def saved_cells(page: Any) -> list[str]:
    cells: list[str] = call(page, "saved")["cells"]
    return cells


@pytest.fixture(scope="module")
def a_demo_page(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    context = a_browser.new_context()
    page = context.new_page()
    page.goto(f"{a_static_server}/index.html")
    both = "Promise.all([window.reckon.ready(), window.reckon.agent.ready()])"
    page_call(page, f"return await withDeadline({both}, deadlineMs, 'ready')", deadline_s=180)
    assert upload_bytes(page, "sales.csv", SALES.read_bytes())["status"] == "ok"
    yield page
    context.close()


@pytest.fixture
def page(a_demo_page: Any) -> Any:
    """A new conversation (empty transcript and cell log) in a fresh namespace."""
    call(a_demo_page, "newConversation")
    call(a_demo_page, "reset")
    return a_demo_page


def test_a_demo_session_exports_a_valid_notebook_that_reproduces_on_cpython(page: Any) -> None:
    outcomes = [ask(page, q) for q in QUESTIONS]
    text = export(page)
    notebook = nbformat.reads(text, as_version=4)
    nbformat.validate(notebook)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert all(f"## {q}" in markdown for q in QUESTIONS)
    # The export escapes Markdown's own characters (datetime64\[ns\]): read past that.
    shown = re.sub(r"\\(.)", r"\1", markdown)
    assert all(o["answer"].splitlines()[0] in shown for o in outcomes)
    code = [c for c in notebook.cells if c.cell_type == "code"][1:]  # after the setup cell
    ran = [s for o in outcomes for s in o["steps"] if s["kind"] == "code"]
    assert len(code) == len([s for s in ran if s["result"]["status"] == "ok"]) == len(QUESTIONS)
    assert any(c.source.startswith("run_sql(") for c in code)  # the SQL question's cell
    kinds = {(o.output_type, *sorted(o.get("data", {}))) for c in code for o in c.outputs}
    assert ("stream",) in kinds
    assert ("display_data", "image/png", "text/plain") in kinds
    assert ("execute_result", "text/html", "text/plain") in kinds

    report = reproduce_notebook(text, [SALES])
    assert report["differences"] == [], json.dumps(report["differences"], indent=1)
    assert report["share"] == 1.0 and report["cells"] == len(QUESTIONS)
    assert report["outputs_matched"] == report["outputs"] >= len(QUESTIONS)


def test_a_planted_unseeded_random_cell_is_reported_as_the_difference(page: Any) -> None:
    ask(page, "average price by region")
    planted = "import random\nprint('draw:', random.random())\n"
    assert import_text(page, planted, "planted.py")["status"] == "ok"
    report = reproduce_notebook(export(page), [SALES])
    assert (report["cells"], report["matched"]) == (2, 1)
    (difference,) = report["differences"]
    assert difference["cell"] == 2 and difference["output"] == "stdout"
    assert "randomness without a fixed seed" in difference["why"]
    assert difference["browser"].startswith("draw: 0.")


def test_a_notebook_and_a_script_import_as_starting_cells(page: Any) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Sales"),
        nbformat.v4.new_code_cell("import pandas as pd\nsales = pd.read_csv('data/sales.csv')"),
        nbformat.v4.new_code_cell("total = float(sales['sales'].sum())\nprint('total:', total)"),
    ]
    reply = import_text(page, nbformat.writes(notebook), "sales.ipynb")
    assert reply == {"status": "ok", "question": "Imported sales.ipynb", "cells": 2, "ok": 2,
                     "failed": 0, "asks": 1, "conversation": False}  # fmt: skip
    script = b"# %%\ndoubled = total * 2\n# %%\nprint('doubled:', doubled)\n"
    reply = import_file(page, "more.py", script)
    assert (reply["status"], reply["cells"], reply["ok"]) == ("ok", 2, 2)

    assert run(page, "doubled")["result"]["text"] == "4113.0"  # the variables exist
    cells = saved_cells(page)  # in the cell log: a reload or a crash replays them
    assert "import pandas as pd\nsales = pd.read_csv('/data/sales.csv')" in cells
    assert "print('doubled:', doubled)" in cells
    text = export(page)
    nbformat.validate(nbformat.reads(text, as_version=4))
    assert "## Imported sales.ipynb" in text and "## Imported more.py" in text
    assert "doubled: 4113.0" in text  # with the outputs the browser produced
    state = page_call(page, "return await window.reckon.agent.exportState();")
    told = [m["content"] for m in state["messages"] if m["role"] == "user"]
    assert any("I imported more.py" in t and "doubled = total * 2" in t for t in told)

    # The conversation (imports included) is saved: after a reload it still exports.
    page.reload()
    ready = "return await withDeadline(window.reckon.ready(), deadlineMs, 'ready')"
    page_call(page, ready, deadline_s=180)
    again = export(page)
    assert "## Imported sales.ipynb" in again and "doubled: 4113.0" in again


def test_an_ask_sent_during_an_import_waits_for_it_then_sees_its_variables(page: Any) -> None:
    body = """
      // Two cells: what the ask first asks the sandbox (its files) runs between them.
      const script = "# %%\\nprint('import started', flush=True)\\nimport time\\n" +
        "time.sleep(1)\\n# %%\\ntime.sleep(1)\\nimported_total = 41 + 1\\n";
      const order = [];
      const started = new Promise((resolve) => window.reckon.on("stream", (ev) => {
        if (String(ev.text).includes("import started")) resolve();
      }));
      const importing = window.reckon.importNotebook(script, { name: "slow.py" })
        .then((reply) => (order.push("import"), reply));
      await withDeadline(started, deadlineMs, "the import's first cell");
      const asked = window.reckon.ask("what is 17*23+4").then((o) => (order.push("ask"), o));
      const [imported, answer] = await withDeadline(
        Promise.all([importing, asked]), deadlineMs, "import and ask");
      return { imported, answer, order };
    """
    got = page_call(page, body, deadline_s=120)
    assert got["imported"]["status"] == "ok", got["imported"]
    assert got["answer"]["status"] == "ok", got["answer"]
    assert "395" in got["answer"]["answer"]
    assert got["order"] == ["import", "ask"]
    transcript = call(page, "transcript")
    assert [a["question"] for a in transcript["asks"]] == ["Imported slow.py", "what is 17*23+4"]
    assert run(page, "imported_total")["result"]["text"] == "42"


def test_asks_sent_together_are_answered_in_turn(page: Any) -> None:
    body = """
      const steps = {};
      window.reckon.on("step", (ev) => {
        (steps[ev.askId] = steps[ev.askId] || []).push(ev.step.index);
      });
      const both = await withDeadline(Promise.all([
        window.reckon.ask("what is 17*23+4"), window.reckon.ask("average price by region"),
      ]), deadlineMs, "two asks");
      return { both, steps };
    """
    got = page_call(page, body, deadline_s=150)
    first, second = got["both"]
    assert (first["status"], second["status"]) == ("ok", "ok"), got["both"]
    assert "395" in first["answer"] and "East" in second["answer"]
    # Each ask's events carry its own id, each in its own order.
    assert len(got["steps"]) == 2 and all(v == sorted(v) for v in got["steps"].values())
    questions = [a["question"] for a in call(page, "transcript")["asks"]]
    assert questions == ["what is 17*23+4", "average price by region"]


def test_stop_ends_an_ask_still_waiting_for_its_turn(page: Any) -> None:
    body = """
      const script = "# %%\\nprint('import started', flush=True)\\nimport time\\n" +
        "time.sleep(3)\\n";
      const started = new Promise((resolve) => window.reckon.on("stream", (ev) => {
        if (String(ev.text).includes("import started")) resolve();
      }));
      const importing = window.reckon.importNotebook(script, { name: "slow.py" });
      await withDeadline(started, deadlineMs, "the import's first cell");
      const sent = new Promise((resolve) => window.reckon.on("ask", resolve));
      const waiting = window.reckon.ask("what is 2+2");
      await withDeadline(sent, deadlineMs, "the ask sent to the agent");
      const unsent = window.reckon.ask("what is 3+3"); // stopped before it is even sent
      await window.reckon.stop();
      const stopped = await withDeadline(Promise.all([waiting, unsent]), deadlineMs, "stop");
      const stillRunning = await Promise.race([importing.then(() => false), true]);
      const imported = await withDeadline(importing, deadlineMs, "import");
      return { stopped, stillRunning, imported };
    """
    got = page_call(page, body, deadline_s=120)
    waiting, unsent = got["stopped"]
    assert waiting["status"] == "stopped", waiting
    assert "waiting for the ask before it" in waiting["message"]
    assert unsent["status"] == "stopped" and "before it started" in unsent["message"]
    assert got["stillRunning"] is True  # the ask ended without waiting for the import
    assert got["imported"]["status"] == "ok"
    assert [a["question"] for a in call(page, "transcript")["asks"]] == ["Imported slow.py"]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary", id="binary"),
        pytest.param(b'{"nbformat": 3, "worksheets": [], "cells": []}', "nbformat 3", id="v3"),
        pytest.param(b"region,price\nEast,1 2\n", "neither a notebook nor valid Python", id="csv"),
        pytest.param(b'{"cells": [', "not valid JSON", id="truncated"),
    ],
)
def test_bad_input_says_what_to_do_and_loses_nothing(page: Any, data: bytes, says: str) -> None:
    run(page, "kept = 1")
    before = (saved_cells(page), call(page, "transcript"))
    reply = import_file(page, "upload.ipynb", data)
    assert reply["status"] == "error" and says in reply["message"], reply
    assert "Import a Jupyter notebook" in reply["message"] or "Jupyter" in reply["message"]
    assert (saved_cells(page), call(page, "transcript")) == before
    assert run(page, "kept")["result"]["text"] == "1"


def test_import_of_something_that_is_not_text_or_a_file_is_refused(page: Any) -> None:
    reply = call(page, "importNotebook", 42)
    assert reply["status"] == "error" and "pass the text" in reply["message"]


def test_run_sql_queries_the_uploaded_tables(page: Any) -> None:
    query = "SELECT region, SUM(sales) AS total FROM sales GROUP BY region ORDER BY total DESC"
    result = call(page, "runSql", query)
    assert result["status"] == "ok" and result["result"]["type"] == "DataFrame"
    assert result["result"]["text"].splitlines()[1].split() == ["0", "East", "632.5"]
    assert "<table" in result["result"]["html"]

    wrong = call(page, "runSql", "SELECT nope FROM sales")  # an error is data
    assert (
        wrong["status"] == "error"
        and 'Referenced column "nope" not found' in wrong["error"]["message"]
    )
    assert "sales (sales.csv): order_id, date, region" in wrong["error"]["message"]
    empty = call(page, "runSql", "  ")
    assert empty["status"] == "error" and "non-empty string" in empty["error"]["message"]
    quoted = call(page, "runSql", "SELECT 'it''s \"ok\"' AS s, '\\n' AS backslash_n")
    assert quoted["status"] == "ok" and 'it\'s "ok"' in quoted["result"]["text"]


def test_the_demo_model_answers_sql_requests_with_run_sql(page: Any) -> None:
    outcome = ask(page, "sql: average price by region")
    (step,) = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert step["code"].startswith("run_sql(") and "GROUP BY" in step["code"]
    assert step["result"]["status"] == "ok"
    assert "East 25.5" in outcome["answer"] and "South 21.6" in outcome["answer"]


def test_a_conversation_exported_whole_comes_back_whole_in_a_new_one(
    page: Any, tmp_path: Path
) -> None:
    """#34: exported, then imported into a new conversation: its questions, answers and
    variables are back, shown on the page as they were, and kept over a reload."""
    for question in ("average price by region", "what is 17*23+4"):
        ask(page, question)
    text = export(page)
    before = [(a["question"], a["status"], a["answer"]) for a in call(page, "transcript")["asks"]]
    call(page, "newConversation")
    call(page, "reset")
    # As a person does it: the side panel's import button.
    page.locator("#import").set_input_files(
        files=[{"name": "whole.ipynb", "mimeType": "application/json", "buffer": text.encode()}]
    )
    note = page.locator("#messages .note.import")
    note.wait_for(timeout=180_000)
    assert "its 2 questions and answers below" in note.inner_text()

    def words() -> list[tuple[str, str, str]]:
        asks = call(page, "transcript")["asks"]
        return [(a["question"], a["status"], a["answer"]) for a in asks]

    assert words() == before
    turns = page.locator("#messages .turn .question")
    turns.nth(1).wait_for()
    assert [turns.nth(i).inner_text() for i in range(turns.count())] == [q for q, _, _ in before]
    page.screenshot(path=str(tmp_path / "imported.png"), full_page=True)
    print(tmp_path / "imported.png")
    page.reload()
    ready = "return await withDeadline(window.reckon.ready(), deadlineMs, 'ready')"
    page_call(page, ready, deadline_s=180)
    assert words() == before  # kept: every ask, not only the last


def test_the_report_opens_from_a_file_with_its_chart_and_runs_nothing(
    page: Any, a_browser: Any, tmp_path: Path
) -> None:
    """#34: exportReport() is one HTML page a person can keep or send: opened from a file,
    offline, it shows each question, the code, the outputs and the chart."""
    for question in ("average price by region", "bar chart of quantity by region"):
        ask(page, question)
    report = call(page, "exportReport", deadline_s=60)
    path = tmp_path / "report.html"
    path.write_text(report, encoding="utf-8")
    context = a_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        viewer = context.new_page()
        problems: list[str] = []
        viewer.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        viewer.on(
            "request",
            lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(r.url),
        )
        viewer.goto(path.as_uri())
        heads = viewer.locator("h2").all_inner_texts()
        assert heads == ["average price by region", "bar chart of quantity by region"]
        chart = viewer.locator("img").first
        assert chart.evaluate("(img) => img.complete && img.naturalWidth > 0")
        assert viewer.locator("script").count() == 0 and problems == []
        viewer.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        print(tmp_path / "report.png")
    finally:
        context.close()
