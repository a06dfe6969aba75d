"""A figure's PNG crosses between contexts once: from the sandbox to the page
(docs/architecture.md, "A figure's way"). The agent worker gets a reference in its
place, and hands back references; yet every documented result (the ask's steps, the
chat, the transcript, the exports) still carries the PNG, after a reload too.

Every message between the page and the agent worker is counted in the agent frame's
realm (where the page makes its Worker), by wrapping that realm's Worker; every record
the page writes to IndexedDB, by wrapping put and add. An ask is stored once: its
record, added when it ends; no later write carries an earlier figure again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from support import SALES

PNG_BASE64 = "iVBORw0KGgo"  # the PNG signature, as base64 text begins

# In agent.html (the frame whose Worker the page uses for the agent): count every
# message each way, and those that carry PNG base64, in the page's __agentTraffic. In
# the page: count the records it writes to IndexedDB, and those that carry a PNG.
COUNT_AGENT_TRAFFIC = """
(() => {
  if (!location.pathname.endsWith("/agent.html")) return;
  const tally = (window.parent.__agentTraffic ||=
    {toAgent: 0, toAgentPng: 0, fromAgent: 0, fromAgentPng: 0});
  const carries = (data) => {
    try { return JSON.stringify(data).includes("PNG_SIGNATURE"); } catch { return false; }
  };
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (ev) => {
        tally.fromAgent++;
        if (carries(ev.data)) tally.fromAgentPng++;
      });
    }
    postMessage(data, ...rest) {
      tally.toAgent++;
      if (carries(data)) tally.toAgentPng++;
      return super.postMessage(data, ...rest);
    }
  };
})();
(() => {
  if (window !== window.top) return;
  const tally = (window.__storedPng = {writes: 0, png: 0});
  for (const method of ["put", "add"]) {
    const original = IDBObjectStore.prototype[method];
    IDBObjectStore.prototype[method] = function (value, ...rest) {
      tally.writes++;
      try { if (JSON.stringify(value).includes("PNG_SIGNATURE")) tally.png++; } catch {}
      return original.call(this, value, ...rest);
    };
  }
})();
""".replace("PNG_SIGNATURE", PNG_BASE64)


@pytest.fixture(scope="module")
def a_page(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    """The chat page (demo model), sales.csv uploaded, agent traffic counted."""
    context = a_browser.new_context()
    context.add_init_script(COUNT_AGENT_TRAFFIC)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{a_static_server}/index.html")
    page.evaluate("() => window.reckon.ready()")
    page.evaluate(
        "(csv) => window.reckon.upload({name: 'sales.csv', bytes: new TextEncoder().encode(csv)})",
        SALES,
    )
    yield page
    context.close()


def traffic(page: Any) -> dict[str, int]:
    counted: dict[str, int] = page.evaluate("() => window.__agentTraffic")
    return counted


def the_png(outcome: dict[str, Any]) -> str:
    figures = [f for s in outcome["steps"] for f in (s.get("result") or {}).get("figures") or []]
    assert len(figures) == 1, outcome
    png: str = figures[0]["png"]
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    assert set(figures[0]) == {"png", "width", "height", "description"}
    return png


def test_the_agent_worker_never_gets_a_png_yet_every_result_has_it(a_page: Any) -> None:
    outcome = a_page.evaluate(
        "() => window.reckon.ask('bar chart of price by region', {model: 'reckon-demo'})"
    )
    assert outcome["status"] == "ok", outcome
    png = the_png(outcome)

    # The chat shows the page's copy.
    a_page.locator("img.figure").first.wait_for()
    shown = a_page.locator("img.figure").first.get_attribute("src")
    assert shown == f"data:image/png;base64,{png}"
    # The transcript, the state and the exports carry it as documented.
    transcript = a_page.evaluate("() => window.reckon.transcript()")
    assert the_png(transcript["asks"][-1]) == png
    notebook = json.loads(a_page.evaluate("() => window.reckon.exportNotebook()"))
    images = [
        o["data"]["image/png"]
        for c in notebook["cells"]
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images == [png]
    report = a_page.evaluate("() => window.reckon.exportReport()")
    assert f'<img src="data:image/png;base64,{png}"' in report
    assert "reckon-figure-" not in report

    counted = traffic(a_page)
    assert counted["toAgent"] > 3 and counted["fromAgent"] > 3, counted  # it does count
    assert counted["toAgentPng"] == 0, counted
    assert counted["fromAgentPng"] == 0, counted


def test_a_saved_figure_comes_back_after_a_reload_without_crossing_to_the_agent(
    a_page: Any,
) -> None:
    before = a_page.evaluate("() => window.reckon.transcript()")
    png = the_png(before["asks"][-1])
    a_page.reload()
    a_page.evaluate("() => window.reckon.ready()")
    # The stored conversation goes back to the agent (importState), as references.
    after = a_page.evaluate("() => window.reckon.transcript()")
    assert the_png(after["asks"][-1]) == png
    notebook = a_page.evaluate("() => window.reckon.exportNotebook()")
    assert png in notebook
    counted = traffic(a_page)
    assert counted["toAgent"] > 1, counted  # the start and the state at least
    assert counted["toAgentPng"] == 0 and counted["fromAgentPng"] == 0, counted


# Every record of the kept conversations' stores, as JSON text, by store.
STORED = """async () => {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open("reckon");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const names = ["conversation-data", "conversation-asks", "conversations"];
  const tx = db.transaction(names, "readonly");
  const all = await Promise.all(names.map((name) => new Promise((resolve) => {
    const req = tx.objectStore(name).getAll();
    req.onsuccess = () => resolve(req.result.map((r) => JSON.stringify(r)));
  })));
  db.close();
  return Object.fromEntries(names.map((name, i) => [name, all[i]]));
}"""


def test_each_ask_is_stored_once_and_no_later_write_carries_its_figure(a_page: Any) -> None:
    first = the_png(a_page.evaluate("() => window.reckon.transcript()")["asks"][-1])
    for question in ("line chart of price by region", "average price by region"):
        outcome = a_page.evaluate("(q) => window.reckon.ask(q, {model: 'reckon-demo'})", question)
        assert outcome["status"] == "ok", outcome
    second = the_png(a_page.evaluate("() => window.reckon.transcript()")["asks"][-2])
    stored = a_page.evaluate("() => window.__storedPng")
    # Of everything this page wrote (the pending question, the asks, the messages), one
    # record carried a PNG: the chart's ask, once.
    assert stored["writes"] > 3 and stored["png"] == 1, stored
    kept = a_page.evaluate(STORED)
    assert len(kept["conversation-asks"]) == 3
    assert all(PNG_BASE64 not in record for record in kept["conversation-data"])
    assert all('"transcript"' not in record for record in kept["conversation-data"])
    everything = "".join(r for records in kept.values() for r in records)
    assert everything.count(first) == 1 and everything.count(second) == 1
    (head,) = [json.loads(r) for r in kept["conversations"]]
    assert head["asks"] == 3 and head["title"] == "bar chart of price by region"


def pngs_of(transcript: dict[str, Any]) -> list[str]:
    steps = [s for a in transcript["asks"] for s in a["steps"]]
    return [f["png"] for s in steps for f in (s.get("result") or {}).get("figures") or []]


def test_the_page_keeps_only_the_figures_of_the_history_the_agent_holds(a_page: Any) -> None:
    shelf = "() => window.reckon.agent.figures.pngs.size"
    before = a_page.evaluate("() => window.reckon.transcript()")
    pngs = pngs_of(before)
    opened = a_page.evaluate("() => window.reckon.conversations()")["current"]
    assert a_page.evaluate("() => window.reckon.newConversation()")["status"] == "ok"
    assert a_page.evaluate(shelf) == 0  # the agent forgot them: so does the page
    reply = a_page.evaluate("(id) => window.reckon.openConversation(id)", opened)
    assert reply["status"] == "ok", reply
    after = a_page.evaluate("() => window.reckon.transcript()")
    assert pngs_of(after) == pngs
    assert a_page.evaluate(shelf) == len(pngs) == 2
