"""Text in CJK and other legacy encodings, and workbooks with several sheets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.kernel import inspect, read_table
from support import TEST_DATA

LARGE_ODS = TEST_DATA / "messy" / "large.ods"

CITIES = {
    "big5": ("城市,人口,備註", [
        ("台北", 2600000, "首都"), ("高雄", 2770000, "港口城市"),
        ("台中", 2820000, "中部"), ("台南", 1880000, "古都"),
    ]),
    "shift_jis": ("都市,人口,メモ", [
        ("東京", 13960000, "首都です"), ("大阪", 8800000, "くいだおれ"),
        ("名古屋", 2320000, "みそかつ"), ("札幌", 1970000, "ゆきまつり"),
    ]),
    "gb18030": ("城市,人口,备注", [
        ("北京", 21540000, "首都"), ("上海", 24280000, "经济中心"),
        ("广州", 15300000, "南方"), ("深圳", 13440000, "科技"),
    ]),
    "cp1251": ("Город,Население,Примечание", [
        ("Москва", 12600000, "столица"), ("Санкт-Петербург", 5380000, "северная"),
        ("Казань", 1250000, "Татарстан"),
    ]),
}  # fmt: skip


def write_csv(path: Path, header: str, rows: list[tuple[Any, ...]], encoding: str) -> str:
    text = header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows)
    path.write_bytes(text.encode(encoding))
    return text


@pytest.mark.parametrize("encoding", CITIES, ids=list(CITIES))
def test_legacy_encodings_are_detected_named_and_read(tmp_path: Path, encoding: str) -> None:
    header, rows = CITIES[encoding]
    path = tmp_path / f"cities-{encoding}.csv"
    write_csv(path, header, rows, encoding)
    with pytest.raises(UnicodeDecodeError):
        path.read_bytes().decode("utf-8")  # the case the detector is for
    info = inspect(str(path))
    assert [c["name"] for c in info["columns"]] == header.split(",")
    assert info["rows"] == len(rows)
    note = next(n for n in info["notes"] if "not valid UTF-8" in n)
    assert "detected" in note
    frame = eval(info["read_with"], {"pd": pd, "read_table": read_table})
    assert frame.iloc[:, 0].tolist() == [row[0] for row in rows]
    assert frame.iloc[:, 2].tolist() == [row[2] for row in rows]
    assert read_table(str(path)).equals(frame)


def test_the_two_line_big5_file_from_the_issue(tmp_path: Path) -> None:
    path = tmp_path / "big5.csv"
    path.write_bytes("城市,人口\n台北,2600000\n".encode("big5"))
    info = inspect(str(path))
    assert [c["name"] for c in info["columns"]] == ["城市", "人口"]
    assert any("Big5" in note and "cp950" in note for note in info["notes"])
    assert "encoding='cp950'" in info["read_with"]
    assert read_table(str(path))["城市"].tolist() == ["台北"]


@pytest.mark.parametrize(
    ("data", "note"),
    [
        pytest.param("城市,人口\n台北,2600000\n".encode(), None, id="utf8-cjk"),
        pytest.param(b"\xef\xbb\xbf" + "城市,人口\n台北,1\n".encode(), "byte order mark", id="bom"),
        pytest.param("城市,人口\n台北,1\n".encode("utf-16"), "UTF-16", id="utf16"),
        pytest.param(
            "ville;prix\ncafé;2\n".encode("cp1252"), "cp1252 (Windows Western)", id="cp1252"
        ),
    ],
)
def test_fast_paths_come_before_the_detector(tmp_path: Path, data: bytes, note: str | None) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    info = inspect(str(path))
    assert info["kind"] == "table" and len(info["columns"]) == 2
    notes = [n for n in info["notes"] if "UTF" in n or "decoded" in n]
    if note is None:
        assert notes == []
    else:
        assert any(note in n for n in notes), notes
        assert not any("detected" in n for n in notes)


def test_bytes_past_the_sample_that_do_not_decode_are_replaced(tmp_path: Path) -> None:
    header, rows = CITIES["big5"]
    text = header + "\n" + "".join(f"{r[0]},{r[1] + i},{r[2]}\n" for i in range(800) for r in rows)
    path = tmp_path / "long-big5.csv"
    path.write_bytes(text.encode("big5") + b"\xff\xfe,1,x\n")  # not Big5, after the sample
    info = inspect(str(path))
    assert info["rows"] == 3201
    assert any("replaced" in note for note in info["notes"])
    assert "encoding_errors='replace'" in info["read_with"]
    frame = read_table(str(path))
    assert frame.iloc[0, 0] == "台北" and "\ufffd" in frame.iloc[-1, 0]


def test_a_six_sheet_ods_lists_its_sheets(tmp_path: Path) -> None:
    info = inspect(str(LARGE_ODS))
    assert info["status"] == "ok", info
    sheets = info["sheets"]
    assert [s["name"] for s in sheets] == ["2007-08", "2008-09", "2009-10", "2010-11",
                                           "2011-12", "2012-13"]  # fmt: skip
    assert sheets[0] == {"name": "2007-08", "rows": info["rows"], "columns": 5}
    assert all(s["columns"] == 5 and s["rows"] > 20_000 for s in sheets)
    note = info["notes"][0]
    assert note.startswith("6 sheets:") and "read_with reads the first" in note
    assert "sheet=None" in note and "'sheet' column" in note
    assert json.loads(json.dumps(info)) == info  # crosses to JS as JSON
    second = read_table(str(LARGE_ODS), sheet="2008-09")
    assert second.shape == (sheets[1]["rows"], 5)
    assert second["Financial Year"].iloc[0] == "2008/09"


@pytest.fixture
def three_sheets(tmp_path: Path) -> Path:
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        pd.DataFrame({"region": ["East", "West"], "units": [3, 4]}).to_excel(
            writer, sheet_name="North", index=False
        )
        pd.DataFrame({"region": ["South"], "units": [5]}).to_excel(
            writer,
            sheet_name="South",
            index=False,
            startrow=2,  # a blank band above the header
        )
        pd.DataFrame({"note": ["call Ann"]}).to_excel(writer, sheet_name="Notes", index=False)
    return path


def test_read_one_sheet_by_name_or_position_or_all(three_sheets: Path) -> None:
    path = str(three_sheets)
    assert read_table(path)["units"].tolist() == [3, 4]
    assert read_table(path, sheet="South")["units"].tolist() == [5]
    assert read_table(path, sheet=1).equals(read_table(path, sheet="South"))
    assert read_table(path, sheet_name="South").equals(read_table(path, sheet="South"))
    both = read_table(path, sheet=None)
    assert list(both.columns) == ["sheet", "region", "units", "note"]
    assert both["sheet"].tolist() == ["North", "North", "South", "Notes"]
    assert both["units"].sum() == 12
    assert read_table(path, sheet="*").equals(both)


def test_workbook_inspect_sizes_and_read_with_for_each_sheet(three_sheets: Path) -> None:
    info = inspect(str(three_sheets))
    assert [s["name"] for s in info["sheets"]] == ["North", "South", "Notes"]
    assert info["sheets"][0] == {"name": "North", "rows": 2, "columns": 2}
    frame = eval(info["read_with"], {"pd": pd})
    assert frame["units"].tolist() == [3, 4]


def test_unknown_sheets_and_sheets_of_a_csv_say_what_to_do(
    three_sheets: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"no sheet 'West'.*'North', 'South', 'Notes'"):
        read_table(str(three_sheets), sheet="West")
    csv = tmp_path / "plain.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a workbook"):
        read_table(str(csv), sheet=None)


def test_an_ods_written_by_pandas_counts_its_sheets_like_it_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "book.ods"
    frames = {
        "A": pd.DataFrame({"x": range(7), "y": list("abcdefg")}),
        "B": pd.DataFrame({"x": [1.5, 2.5], "y": ["p", "q"], "z": [True, False]}),
    }
    with pd.ExcelWriter(path, engine="odf") as writer:
        for name, frame in frames.items():
            frame.to_excel(writer, sheet_name=name, index=False)
    info = inspect(str(path))
    assert info["sheets"] == [
        {"name": "A", "rows": 7, "columns": 2},
        {"name": "B", "rows": 2, "columns": 3},
    ]
    both = read_table(str(path), sheet=None)
    assert both.groupby("sheet").size().to_dict() == {"A": 7, "B": 2}
    assert read_table(str(path), sheet="B")["z"].tolist() == [True, False]


def test_a_single_sheet_workbook_has_no_sheet_list() -> None:
    info = inspect(str(TEST_DATA / "messy" / "simple.xlsx"))
    assert "sheets" not in info
    assert not any("sheets" in note for note in info["notes"])


WITHOUT_CHARDET = """
import sys
sys.modules["chardet"] = None  # not installed (yet)
from reckon.kernel import inspect
print(inspect(sys.argv[1])["notes"][0])
"""


def test_without_the_detector_a_legacy_file_still_reads(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "big5.csv"
    path.write_bytes("城市,人口\n台北,2600000\n".encode("big5"))
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_CHARDET, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("not valid UTF-8; decoded as cp1252")
