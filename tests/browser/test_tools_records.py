"""What a host tool call's record keeps of its result (PROTOCOL.md §1 `tools`): the JSON
text the cell got, so that an export can replay it, within 256 KB a call and 1 MB a
run (records are saved with every step), and nothing under schema privacy.

Through the real JS API in headless Chromium, with the host page of test_tools.py
(tool_kit.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import Canary, a_console, ok, run
from .tool_kit import register

pytestmark = pytest.mark.browser

KB = 1024


@pytest.fixture(scope="module")
def page(a_browser: Any, a_static_server: str, a_running_canary: Canary) -> Iterator[Any]:
    with a_console(a_browser, a_static_server) as (page, _ready):
        register(page, a_running_canary.url)
        yield page


def test_a_call_keeps_the_json_text_the_cell_got(page: Any) -> None:
    result = ok(run(page, "rows = await tools.get_orders(month=4)\nrows"))
    (record,) = result["tools"]
    assert json.loads(record["result"]) == [{"id": 3, "month": 4, "amount": 42, "customer": "Cy"}]
    assert len(record["result"]) == record["size"] and "resultOmitted" not in record


def test_a_result_over_256_kb_or_past_1_mb_a_run_is_left_out(page: Any) -> None:
    # echo returns its arguments: each result is the padding and a few bytes more.
    cell = (
        f"await tools.echo(pad='x' * {300 * KB})\n"  # over 256 KB: not kept
        f"for _ in range(5):\n    await tools.echo(pad='y' * {250 * KB})\n"  # the 5th passes 1 MB
        "await tools.echo(pad='z')"  # small: still kept
    )
    records = ok(run(page, cell))["tools"]
    kept = [("result" in r, r.get("resultOmitted")) for r in records]
    over = (False, "too large")
    assert kept == [over] + [(True, None)] * 4 + [over, (True, None)]
    assert json.loads(records[-1]["result"])["got"] == {"pad": "z"}
    assert all(r["status"] == "ok" for r in records)  # the cell got every result


def test_under_schema_privacy_a_record_keeps_nothing_of_the_result(page: Any) -> None:
    assert page.evaluate("() => window.reckon.configure({ privacy: 'schema' })")["status"] == "ok"
    try:
        result = ok(run(page, "rows = await tools.get_orders(month=3)\nlen(rows)"))
    finally:
        assert page.evaluate("() => window.reckon.configure({ privacy: 'full' })")["status"] == "ok"
    assert result["result"]["text"] == "2"
    (record,) = result["tools"]
    assert record["resultOmitted"] == "privacy" and "result" not in record
    assert "Ada" not in json.dumps(record) and "120.5" not in json.dumps(record)
