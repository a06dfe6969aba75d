from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.kernel import inspect, list_files, read_table
from support import TEST_DATA

SPECTRUM = TEST_DATA / "csv-spectrum"
MESSY = TEST_DATA / "messy"
SPECTRUM_FILES = sorted((SPECTRUM / "csvs").glob("*.csv"))
MESSY_FILES = sorted(p for p in MESSY.iterdir() if p.name != "LICENSE")


@pytest.mark.parametrize("path", SPECTRUM_FILES, ids=lambda p: p.name)
def test_csv_spectrum_reads_as_its_json_says(path: Path) -> None:
    expected = json.loads((SPECTRUM / "json" / f"{path.stem}.json").read_text())
    frame = read_table(str(path))
    assert list(frame.columns) == list(expected[0])
    assert len(frame) == len(expected)
    as_text = frame.astype(object).where(frame.notna(), "").astype(str)
    for row, record in zip(as_text.to_dict("records"), expected, strict=True):
        for column, value in record.items():
            # pandas parses numbers ("08123" -> 8123); compare those as numbers
            if value.lstrip("-").isdigit():
                assert float(row[column]) == float(value)
            else:
                assert row[column] == value


@pytest.mark.parametrize("path", MESSY_FILES, ids=lambda p: p.name)
def test_every_messy_file_loads_or_says_why(path: Path) -> None:
    try:
        frame = read_table(str(path))
    except ValueError as exc:
        message = str(exc)
        assert str(path) in message
        assert len(message) > 40
    else:
        assert isinstance(frame, pd.DataFrame)


@pytest.mark.parametrize("path", SPECTRUM_FILES + MESSY_FILES, ids=lambda p: p.name)
def test_inspect_never_raises_and_has_a_known_shape(path: Path) -> None:
    info = inspect(str(path))
    assert info["path"] == str(path)
    if info["status"] == "error":
        assert info["message"]
        return
    assert info["kind"] in {"table", "text", "image", "pdf", "binary"}
    if info["kind"] == "table":
        assert {"format", "rows", "columns", "read_with", "notes"} <= set(info)
        assert len(info["columns"]) <= 50
        assert all(set(column) == {"name", "dtype"} for column in info["columns"])


KNOWN_TABLES: dict[str, dict[str, Any]] = {
    "simple.csv": {"shape": (6, 3), "first": "date"},
    "simple.ssv": {"shape": (6, 3), "first": "date", "sep": ";"},
    "simple.psv": {"shape": (28, 6), "first": "Year", "sep": "|"},
    "example.tsv": {"shape": (140, 17), "first": "hour", "sep": "\t"},
    "utf-16le_encoded.csv": {"shape": (327, None), "first": "Organisation_code"},
    "utf8bom.csv": {"shape": (0, 2), "first": "kitten"},
    "spanish_chars.csv": {"shape": (114, 8), "first": "GF_ID"},
    "211.csv": {"shape": (2132, 96), "first": "ResourceAgencyNum"},
    "mixedGLB.csv": {"shape": (133, 19), "first": "Year"},
    "excel_pasting.csv": {"shape": (14, 9), "first": "Year"},
    "complex.csv": {"shape": (3, 4), "first": "date"},
    "null.csv": {"shape": (10, 4), "first": 0},
    "simple.xlsx": {"shape": (6, 3), "first": "date"},
    "simple.xls": {"shape": (6, 3), "first": "date"},
    "simple.ods": {"shape": (3, 3), "first": "Name"},
    "large.ods": {"shape": (23760, 5), "first": "Financial Year"},
    "simple.zip": {"shape": (6, 3), "first": "date"},
}


@pytest.mark.parametrize(("name", "expected"), KNOWN_TABLES.items(), ids=KNOWN_TABLES.keys())
def test_known_messy_tables_have_sensible_shapes(name: str, expected: dict[str, Any]) -> None:
    frame = read_table(str(MESSY / name))
    rows, columns = expected["shape"]
    assert len(frame) == rows
    if columns is not None:
        assert frame.shape[1] == columns
    assert frame.columns[0] == expected["first"]


def test_complex_csv_numbers_with_thousands_are_numbers() -> None:
    frame = read_table(str(MESSY / "complex.csv"))
    assert frame["temperature"].tolist()[-1] == 6_000_000


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("encrypted_no_password.xls", "without a password", id="encrypted-xls"),
        pytest.param("simple.unknown", "empty", id="empty-file"),
    ],
)
def test_unreadable_files_say_what_to_do(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_table(str(MESSY / name))


@pytest.mark.parametrize(
    "name",
    [
        p.name
        for p in MESSY_FILES
        if p.suffix in {".csv", ".tsv", ".psv", ".ssv", ".xlsx", ".xls"}
        and "encrypted" not in p.name
    ],
)
def test_read_with_line_reproduces_the_table(name: str) -> None:
    info = inspect(str(MESSY / name))
    assert info["status"] == "ok", info
    # pandas alone where it reads the file as inspect saw it, else read_table (tidied).
    frame = eval(info["read_with"], {"pd": pd, "read_table": read_table})
    assert frame.shape == (info["rows"], len(frame.columns))
    assert [str(c) for c in frame.columns][:50] == [c["name"] for c in info["columns"]]


@pytest.mark.parametrize(
    ("content", "encoding", "note"),
    [
        pytest.param("a;b\n1,5;2\n3,25;4\n", "cp1252", "decimal comma", id="decimal-comma"),
        pytest.param("naïve;b\n1;2\n", "cp1252", "cp1252", id="cp1252"),
        pytest.param("a\tb\n1\t2\n", "utf-16-le", "UTF-16", id="utf16-no-bom"),
        pytest.param("a,b\n1,2\n", "utf-16", "UTF-16", id="utf16-bom"),
    ],
)
def test_inspect_notes_what_it_detected(
    tmp_path: Path, content: str, encoding: str, note: str
) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(content.encode(encoding))
    info = inspect(str(path))
    assert info["kind"] == "table"
    assert info["rows"] >= 1 and len(info["columns"]) == 2
    assert any(note in text for text in info["notes"])
    frame = eval(info["read_with"], {"pd": pd, "read_table": read_table})
    assert frame.shape == (info["rows"], 2)


def test_ragged_rows_are_kept_in_extra_columns(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n3,4,5,6\n7,8\n")
    frame = read_table(str(path))
    assert list(frame.columns) == ["a", "b", "extra_1", "extra_2"]
    assert frame.shape == (3, 4)
    info = inspect(str(path))
    assert any("more fields than the header" in note for note in info["notes"])
    assert info["read_with"].startswith("read_table(")


def test_json_records_and_lines(tmp_path: Path) -> None:
    records = tmp_path / "r.json"
    records.write_text(json.dumps([{"a": 1, "b": 2}, {"a": 3, "b": 4}]))
    lines = tmp_path / "l.json"
    lines.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    assert read_table(str(records)).shape == (2, 2)
    assert read_table(str(lines)).shape == (3, 1)
    assert inspect(str(lines))["read_with"].endswith("lines=True)")


def test_parquet_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pd.DataFrame({"x": [1, 2, 3]}).to_parquet(path)
    assert read_table(str(path))["x"].tolist() == [1, 2, 3]
    assert inspect(str(path))["rows"] == 3


def test_zip_with_several_tables_lists_them(tmp_path: Path) -> None:
    path = tmp_path / "two.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", "x\n1\n")
        archive.writestr("b.csv", "y\n2\n")
    with pytest.raises(ValueError, match=r"holds 2 files \(a.csv, b.csv\)"):
        read_table(str(path))


def test_large_csv_is_sampled_and_rows_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reckon.kernel import _inspect

    monkeypatch.setattr(_inspect, "FULL_PARSE_BYTES", 1000)
    path = tmp_path / "big.csv"
    path.write_text("n,sq\n" + "".join(f"{i},{i * i}\n" for i in range(20_000)))
    info = inspect(str(path))
    assert info["rows"] == 20_000
    assert [c["dtype"] for c in info["columns"]] == ["int64", "int64"]
    # A big file is described once per version (mtime and size): the agent asks for
    # every upload on every question. Same version, other bytes: the kept description.
    stat = path.stat()
    path.write_text(path.read_text().replace("n,sq", "x,yy", 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert [c["name"] for c in inspect(str(path))["columns"]] == ["n", "sq"]
    path.write_text("x,yy\n" + "".join(f"{i},{i * i}\n" for i in range(20_001)))
    again = inspect(str(path))
    assert again["rows"] == 20_001 and [c["name"] for c in again["columns"]] == ["x", "yy"]


def test_large_parquet_is_described_from_its_footer_and_first_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reckon.kernel import _inspect

    monkeypatch.setattr(_inspect, "FULL_PARSE_BYTES", 1000)
    path = tmp_path / "big.parquet"
    frame = pd.DataFrame({"n": range(20_000), "name": [f"r{i}" for i in range(20_000)]})
    frame.to_parquet(path, row_group_size=1000)
    info = inspect(str(path))
    assert info["status"] == "ok" and info["kind"] == "table" and info["rows"] == 20_000
    assert [c["name"] for c in info["columns"]] == ["n", "name"]
    assert info["columns"][0]["dtype"] == "int64"
    assert "dtypes from the first 5,000 rows" in info["notes"]
    assert info["sql_table"] == "big" and info["read_with"] == f"pd.read_parquet({str(path)!r})"


@pytest.mark.parametrize(
    ("name", "data", "kind"),
    [
        pytest.param("notes.txt", b"just some words\nand more\n", "text", id="text"),
        pytest.param("plot.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 20, "image", id="image"),
        pytest.param("paper.pdf", b"%PDF-1.4\n", "pdf", id="pdf"),
        pytest.param("blob.bin", b"\x00\x01\x02\x03" * 10, "binary", id="binary"),
        pytest.param("table.txt", b"a\tb\n1\t2\n3\t4\n", "table", id="tabular-txt"),
    ],
)
def test_inspect_kinds(tmp_path: Path, name: str, data: bytes, kind: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    info = inspect(str(path))
    assert info["status"] == "ok"
    assert info["kind"] == kind
    assert info["size"] == len(data)


def test_inspect_of_a_missing_file_is_an_error_dict(tmp_path: Path) -> None:
    info = inspect(str(tmp_path / "nope.csv"))
    assert info["status"] == "error"
    assert "does not exist" in info["message"]


def test_list_files_is_recursive_sorted_and_follows_links(tmp_path: Path) -> None:
    mount = tmp_path / "mount"
    mount.mkdir()
    (mount / "real.csv").write_text("a\n1\n")
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "b.txt").write_text("hello")
    (data / "sub" / "c.txt").write_text("hi")
    (data / "a.csv").symlink_to(mount / "real.csv")
    entries = list_files(str(data))
    assert [e["name"] for e in entries] == ["a.csv", "b.txt", "sub", "c.txt"]
    assert entries[0] == {
        "path": str(data / "a.csv"),
        "name": "a.csv",
        "size": 4,
        "is_dir": False,
        "mtime": entries[0]["mtime"],
    }
    assert entries[2]["is_dir"] is True
    assert list_files(str(tmp_path / "missing")) == []


@pytest.mark.parametrize(
    ("text", "rows", "first"),
    [
        # One column whose first line is a value the rest repeat: data, not a name (seen:
        # long.csv, 4000 lines of 'foo', read as 3999 rows under the column 'foo').
        pytest.param("foo\n" * 6, 6, 0, id="one-column-of-one-value"),
        pytest.param("a,b\na,1\n2,b\n", 3, 0, id="each-first-cell-again-below"),
        # A header repeated whole where two files were joined is still a header.
        pytest.param("name,qty\nx,1\nname,qty\ny,2\n", 3, "name", id="joined-files"),
        pytest.param("name,qty\nx,1\ny,2\n", 2, "name", id="a-plain-header"),
    ],
)
def test_a_first_line_that_repeats_below_is_data(
    tmp_path: Path, text: str, rows: int, first: object
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    frame = read_table(str(path))
    assert (len(frame), frame.columns[0]) == (rows, first)
    assert inspect(str(path))["rows"] == rows
