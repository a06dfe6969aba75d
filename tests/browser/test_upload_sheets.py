"""A workbook of several sheets, added through the JS API and through the page: the
upload reply lists every sheet with its size, and the file's row says them."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from support import TEST_DATA

WORKBOOK = TEST_DATA / "messy" / "large.xlsx"  # sheets Report, data, criteria


def test_the_upload_reply_lists_every_sheet(a_chat: Any) -> None:
    reply = a_chat.evaluate(
        """async (b64) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          return window.reckon.upload({ name: "api.xlsx", bytes });
        }""",
        base64.b64encode(WORKBOOK.read_bytes()).decode(),
    )
    assert reply["status"] == "ok" and reply["kind"] == "table", reply
    assert [s["name"] for s in reply["sheets"]] == ["Report", "data", "criteria"]
    assert reply["sheets"][1:] == [
        {"name": "data", "rows": 8546, "columns": 11},
        {"name": "criteria", "rows": 11, "columns": 5},
    ]


def test_the_file_row_names_every_sheet(a_chat: Any, tmp_path: Path) -> None:
    page = a_chat
    page.locator("#upload").set_input_files(str(WORKBOOK))
    row = page.locator("#file-list li.file").filter(has_text="large.xlsx")
    shape = row.locator(".file-shape")
    shape.filter(has_text="sheets").wait_for()
    assert shape.inner_text() == (
        "15 rows × 11 columns; 3 sheets: Report (the one shown), data (8,546 × 11), "
        "criteria (11 × 5)"
    )
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        row.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"sheets-{width}.png"))
        box = shape.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
    page.set_viewport_size({"width": 1280, "height": 900})
