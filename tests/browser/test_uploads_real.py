"""Uploads that went wrong in real use, through the JS API in Chromium: a workbook
with six sheets (read as its first, silently) and a Big5 CSV (read as latin-1).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import pytest

from support import TEST_DATA

from .helpers import run, upload_bytes

pytestmark = pytest.mark.browser

LARGE_ODS = TEST_DATA / "messy" / "large.ods"
SHEETS = ["2007-08", "2008-09", "2009-10", "2010-11", "2011-12", "2012-13"]


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result["status"] == "ok", result.get("error") or result
    return result


def value(reckon: Any, code: str) -> Any:
    return json.loads(ok(run(reckon, code, timeout_ms=120_000, deadline_s=150))["stdout"])


def test_a_six_sheet_ods_upload_lists_its_sheets(reckon: Any) -> None:
    info = upload_bytes(reckon, "offences by year.ods", LARGE_ODS.read_bytes(), deadline_s=120)
    assert info["status"] == "ok", info
    assert [sheet["name"] for sheet in info["sheets"]] == SHEETS
    assert info["sheets"][0] == {"name": "2007-08", "rows": info["rows"], "columns": 5}
    assert info["rows"] == 23760 and len(info["columns"]) == 5
    note = info["notes"][0]
    assert note.startswith("6 sheets: '2007-08'") and "read_with reads the first" in note
    assert "sheet='2008-09'" in note and "sheet=None" in note
    code = (
        "import json\n"
        "df = read_table('/data/offences by year.ods', sheet='2008-09')\n"
        "print(json.dumps([len(df), df['Financial Year'].iloc[0]]))"
    )
    assert value(reckon, code) == [info["sheets"][1]["rows"], "2008/09"]


def test_every_sheet_of_a_workbook_in_one_table(reckon: Any) -> None:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="odf") as writer:
        pd.DataFrame({"region": ["East", "West"], "units": [3, 4]}).to_excel(
            writer, sheet_name="Q1", index=False
        )
        pd.DataFrame({"region": ["East"], "units": [5]}).to_excel(
            writer, sheet_name="Q2", index=False
        )
    info = upload_bytes(reckon, "quarters.ods", buffer.getvalue())
    assert info["sheets"] == [
        {"name": "Q1", "rows": 2, "columns": 2},
        {"name": "Q2", "rows": 1, "columns": 2},
    ]
    code = (
        "import json\n"
        "df = read_table('/data/quarters.ods', sheet=None)\n"
        "print(json.dumps([list(df.columns), df.groupby('sheet')['units'].sum().to_dict()]))"
    )
    assert value(reckon, code) == [["sheet", "region", "units"], {"Q1": 7, "Q2": 5}]


def test_a_big5_csv_upload_is_detected_and_read(reckon: Any) -> None:
    text = "城市,人口\n台北,2600000\n高雄,2770000\n台中,2820000\n"
    info = upload_bytes(reckon, "人口.csv", text.encode("big5"))
    assert info["status"] == "ok", info
    assert info["columns"] == [
        {"name": "城市", "dtype": "object"},
        {"name": "人口", "dtype": "int64"},
    ]
    assert any("Big5" in note and "cp950" in note for note in info["notes"]), info["notes"]
    code = (
        "import json\n"
        "import pandas as pd\n"
        f"a = read_table({info['path']!r})\n"
        f"b = {info['read_with']}\n"
        "print(json.dumps([a['城市'].tolist(), b.equals(a)], ensure_ascii=False))"
    )
    assert value(reckon, code) == [["台北", "高雄", "台中"], True]
