"""A notebook whose cell called the page's host tools reproduces on CPython with no
page: each call is answered from the cell's ``metadata.reckon.tools`` (its recorded
result, or the error it was), and a call whose result the record does not keep
(schema privacy) is named as the reason the cell differs.

The page's part (web/tools.js: run the tool, keep a record of the call on the run
result) is played here in Python, over the real kernel and the real export; the real
page does it in tests/browser/test_tools_chat.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reckon.agent import Agent, DemoModel, export_notebook
from reckon.agent.export._import import import_into
from reckon.kernel import set_transport
from reckon.reproduce import reproduce_notebook

from .helpers import KernelExecutor, run

ORDERS = [{"id": 1, "month": 3, "amount": 120.5}, {"id": 2, "month": 3, "amount": 80}]
CELL = (
    "rows = await tools.get_orders(month=3)\n"
    "try:\n"
    "    await tools.get_orders(month=13)\n"
    "except ToolError as e:\n"
    "    print(e)\n"
    "print(sum(r['amount'] for r in rows))\n"
    "pd.DataFrame(rows)"
)
REFUSED = "get_orders: bad arguments: month: must be at most 12"


class PageExecutor(KernelExecutor):
    """The kernel with a page that lends ``get_orders`` and, as web/tools.js does,
    puts a record of each call on the run result: its result, unless under schema
    privacy (``resultOmitted: "privacy"``)."""

    def __init__(self, tmp_path: Path, *, privacy: bool) -> None:
        super().__init__(tmp_path)
        self.privacy = privacy

    async def run(self, code: str) -> dict[str, Any]:
        records: list[dict[str, Any]] = []

        def page(name: str, args_json: str) -> str:
            args = json.loads(args_json)
            record: dict[str, Any] = {"call": len(records), "runId": 1, "name": name,
                                      "args": args, "size": 0, "ms": 1}  # fmt: skip
            records.append(record)
            if name != "get_orders" or not 1 <= args.get("month", 0) <= 12:
                record.update(status="refused", message=REFUSED)
                return json.dumps({"status": "error", "message": REFUSED})
            text = json.dumps([o for o in ORDERS if o["month"] == args["month"]])
            record.update(status="ok", size=len(text))
            record.update({"resultOmitted": "privacy"} if self.privacy else {"result": text})
            return json.dumps({"status": "ok", "text": text})

        set_transport(page)
        try:
            result = await super().run(code)
        finally:
            set_transport(None)
        return {**result, "tools": records} if records else result


def exported(tmp_path: Path, *, privacy: bool) -> str:
    executor = PageExecutor(tmp_path, privacy=privacy)
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    agent = Agent(DemoModel(), executor)
    reply = run(import_into(agent, CELL, name="orders.py"))
    assert reply["status"] == "ok", reply
    return export_notebook(agent.transcript)


def tool_cell(text: str) -> dict[str, Any]:
    (cell,) = [c for c in json.loads(text)["cells"] if "tools" in c["metadata"].get("reckon", {})]
    return cell


def test_recorded_results_reproduce_the_cell_without_a_page(tmp_path: Path) -> None:
    text = exported(tmp_path, privacy=False)
    cell = tool_cell(text)
    assert cell["metadata"]["reckon"]["tools"] == [
        {"name": "get_orders", "status": "ok", "args": {"month": 3}, "result": ORDERS},
        {"name": "get_orders", "status": "refused", "args": {"month": 13}, "message": REFUSED},
    ]
    assert "".join(cell["outputs"][0]["text"]) == f"{REFUSED}\n200.5\n"
    report = reproduce_notebook(text, timeout_s=120)
    assert report["differences"] == [], report["differences"]
    assert (report["cells"], report["share"]) == (1, 1.0)
    assert report["outputs_matched"] == report["outputs"] == 2  # the printout, the table


def test_a_result_kept_out_under_schema_privacy_is_the_reason(tmp_path: Path) -> None:
    text = exported(tmp_path, privacy=True)
    assert tool_cell(text)["metadata"]["reckon"]["tools"][0]["resultOmitted"] == "privacy"
    assert "120.5" not in json.dumps(tool_cell(text)["metadata"])
    report = reproduce_notebook(text, timeout_s=120)
    (difference,) = report["differences"]
    assert difference["output"] == "run"
    assert 'ToolError: not recorded: get_orders({"month": 3})' in difference["cpython"]
    assert difference["why"].startswith("it called the page's host tool get_orders")
    assert "its result was not kept (under schema privacy" in difference["why"]
    assert 'on CPython the call was a ToolError, "not recorded"' in difference["why"]
