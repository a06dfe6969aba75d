"""Schema privacy's look at the uploads (``reckon.kernel._value_scan``): every sheet of a
workbook and every member of an archive is read, or the part is named as a problem;
column names count as values unless they look like a header (``_headerlike``)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.kernel import _value_scan
from reckon.kernel._headerlike import header_names, shape
from reckon.kernel._value_scan import scan_uploads
from support import TEST_DATA

PEOPLE = pd.DataFrame(
    {
        "name": ["Alice Zimmermann", "Bob Quist"],
        "salary": [73412.5, 51877.25],
        "city": ["Paris", "Lyon"],
    }
)
SECRET = pd.DataFrame(
    {"who": ["Cornelius Ashdown", "Dmitri Volkov"], "ssn": ["555-01-2345", "555-02-1111"]}
)


def workbook(path: Path, engine: str | None = None) -> Path:
    with pd.ExcelWriter(path, engine=engine) as writer:
        PEOPLE.to_excel(writer, sheet_name="People", index=False)
        SECRET.to_excel(writer, sheet_name="Secret", index=False)
    return path


def assert_every_value(found: dict[str, Any]) -> None:
    for value in ["Alice Zimmermann", "Lyon", "Cornelius Ashdown", "555-02-1111"]:
        assert value in found["strings"], value
    assert {73412.5, 51877.25} <= set(found["numbers"])


@pytest.mark.parametrize("kind", ["xlsx", "ods"])
def test_every_sheet_of_a_workbook_is_read(tmp_path: Path, kind: str) -> None:
    workbook(tmp_path / f"book.{kind}", engine="odf" if kind == "ods" else None)
    found = scan_uploads(str(tmp_path))
    assert found["problems"] == []
    assert_every_value(found)
    assert {"People", "Secret", "name", "ssn", "book", f"book.{kind}"} <= set(found["names"])
    (info,) = found["files"]
    assert info["kind"] == "table" and [s["name"] for s in info["sheets"]] == ["People", "Secret"]


def test_the_rows_above_a_header_are_values_too(tmp_path: Path) -> None:
    (tmp_path / "report.csv").write_text(
        "Payroll of Cornelius Ashdown,,\nprepared by Dmitri Volkov,,\n"
        "name,salary,city\nAlice Zimmermann,73412.5,Paris\nBob Quist,51877.25,Lyon\n"
    )
    with pd.ExcelWriter(tmp_path / "report.xlsx") as writer:
        pd.DataFrame([["Payroll of Cornelius Ashdown"], [None]]).to_excel(
            writer, index=False, header=False
        )
        PEOPLE.to_excel(writer, startrow=3, index=False)
    found = scan_uploads(str(tmp_path))
    assert found["problems"] == []
    assert {"Payroll of Cornelius Ashdown", "Alice Zimmermann"} <= set(found["strings"])
    assert "prepared by Dmitri Volkov" in found["strings"]
    assert {"name", "salary", "city"} <= set(found["names"])


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_every_member_of_an_archive_is_read_also_inside_another(tmp_path: Path) -> None:
    book = workbook(tmp_path / "book.xlsx").read_bytes()
    inner = zipped({"secret.csv": SECRET.to_csv(index=False).encode()})
    (tmp_path / "all.zip").write_bytes(
        zipped({"people.csv": PEOPLE.to_csv(index=False).encode(), "more/book.xlsx": book,
                "inner.zip": inner, "notes.txt": b"just text", "__MACOSX/._people.csv": b"\0\5"})
    )  # fmt: skip
    (tmp_path / "book.xlsx").unlink()
    found = scan_uploads(str(tmp_path))
    assert found["problems"] == []
    assert_every_value(found)
    assert found["found"][str(tmp_path / "all.zip")] > 8


@pytest.mark.parametrize(
    ("members", "problem"),
    [
        pytest.param({"ok.csv": b"a,b\n1,2\n", "broken.xlsx": b"PK\x03\x04 not really"},
                     "broken.xlsx", id="a-member-that-cannot-be-read"),
        pytest.param({"a.zip": zipped({"b.zip": zipped({"c.zip": zipped({"d.csv": b"x\n1\n"})})})},
                     "archives nested 4 deep", id="too-deep"),
    ],
)  # fmt: skip
def test_an_archive_part_that_cannot_be_read_is_a_problem(
    tmp_path: Path, members: dict[str, bytes], problem: str
) -> None:
    (tmp_path / "upload.zip").write_bytes(zipped(members))
    (found,) = scan_uploads(str(tmp_path))["problems"]
    assert str(tmp_path / "upload.zip") in found and problem in found


def tarred(members: dict[str, bytes], mode: str = "w") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("people.tar", tarred({"a/secret.csv": SECRET.to_csv().encode()}), id="tar"),
        pytest.param("people.tar.gz", tarred({"s.csv": SECRET.to_csv().encode()}, "w:gz"),
                     id="tar.gz"),
        pytest.param("people.tgz", tarred({"s.csv": SECRET.to_csv().encode()}, "w:bz2"),
                     id="tgz-holding-bz2"),
        pytest.param("people.csv.gz", gzip.compress(SECRET.to_csv().encode()), id="csv.gz"),
        pytest.param("people.csv.bz2", bz2.compress(SECRET.to_csv().encode()), id="csv.bz2"),
        pytest.param("people.csv.xz", lzma.compress(SECRET.to_csv().encode()), id="csv.xz"),
        pytest.param("people.bin", zipped({"s.csv": SECRET.to_csv().encode()}),
                     id="a-zip-by-any-name"),
    ],
)  # fmt: skip
def test_other_archives_are_read_too(tmp_path: Path, name: str, data: bytes) -> None:
    (tmp_path / name).write_bytes(data)
    found = scan_uploads(str(tmp_path))
    assert found["problems"] == []
    assert {"Cornelius Ashdown", "555-02-1111"} <= set(found["strings"])


def test_an_archive_the_scan_cannot_open_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "people.7z").write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(64))
    (problem,) = scan_uploads(str(tmp_path))["problems"]
    assert "people.7z: a 7z archive" in problem and "upload them" in problem


def test_a_member_too_big_to_read_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_value_scan, "MEMBER_BYTES", 1000)
    rows = "".join(f"person {i},{i}\n" for i in range(200))
    (tmp_path / "big.zip").write_bytes(zipped({"big.csv": ("who,n\n" + rows).encode()}))
    (found,) = scan_uploads(str(tmp_path))["problems"]
    assert "big.zip (big.csv)" in found and "too big to read" in found


def test_an_unreadable_workbook_is_a_problem(tmp_path: Path) -> None:
    shutil.copy(TEST_DATA / "messy" / "encrypted_no_password.xls", tmp_path / "locked.xls")
    (tmp_path / "fine.csv").write_text("a,b\n1,2\n")
    found = scan_uploads(str(tmp_path))
    (problem,) = found["problems"]
    assert "locked.xls" in problem and "save it again without a password" in problem


def test_a_file_without_a_header_gives_its_first_row_as_values(tmp_path: Path) -> None:
    (tmp_path / "people.csv").write_text(
        "Cornelius Ashdown,555-01-2345,88888\nBob Quist,555-02-1111,77777\n"
        "Mary Ann Smith,555-11-2222,65432\n"
    )
    found = scan_uploads(str(tmp_path))
    assert {"Cornelius Ashdown", "555-01-2345", "88888"} <= set(found["strings"])
    assert not {"Cornelius Ashdown", "555-01-2345", "88888"} & set(found["names"])


def test_allowed_columns_keep_their_values_and_names(tmp_path: Path) -> None:
    PEOPLE.to_csv(tmp_path / "people.csv", index=False)
    found = scan_uploads(str(tmp_path), allow=["city"])
    assert "Paris" not in found["strings"] and "Alice Zimmermann" in found["strings"]
    assert "city" in found["names"]


@pytest.mark.parametrize(
    ("csv", "kept", "values"),
    [
        pytest.param("name,email,salary,city\nAlice Zimmermann,a@x.org,73412.5,Paris\n"
                     "Bob Quist,bq@x.org,51877.25,Lyon\n",
                     ["name", "email", "salary", "city"], [], id="a-header"),
        pytest.param("Name,City\nBob Quist,Paris\nAnn Lee,Lyon\n", ["Name", "City"], [],
                     id="a-header-one-of-whose-names-is-shaped-like-its-values"),
        pytest.param("Cornelius Ashdown,Vladivostok,c.ashdown@example.org,1984-03-02\n"
                     "Bob Quist,Lyon,bq@example.org,1990-01-01\n"
                     "Ann Lee,New York,al@x.org,1970-05-05\n",
                     [], ["Cornelius Ashdown", "Vladivostok", "c.ashdown@example.org",
                          "1984-03-02"], id="a-row-of-data"),
        pytest.param("Country,Capital\nFrance,Paris\nSpain,Madrid\n", [], ["Country", "Capital"],
                     id="names-shaped-like-all-their-values-count-as-values"),
        pytest.param("sector,2000,2001,2002\nTimber,2666,2274,1877\nIron,22927,20744,18010\n",
                     ["sector", "2000", "2001", "2002"], [], id="a-header-of-years"),
        pytest.param("1,2,3\n4,5,6\n", ["0", "1", "2"], [], id="numbered-by-the-reader"),
    ],
)  # fmt: skip
def test_which_column_names_look_like_a_header(
    tmp_path: Path, csv: str, kept: list[str], values: list[str]
) -> None:
    (tmp_path / "t.csv").write_text(csv)
    frame = pd.read_csv(tmp_path / "t.csv", header=None if csv.startswith("1,") else 0)
    assert header_names(frame) == (kept, values)


def test_shapes() -> None:
    assert [shape(s) for s in ["name", "Alice Smith", "555-01-2345", "McDonald", "USA"]] == [
        "a", "Aa Aa", "9-9-9", "AaAa", "A"
    ]  # fmt: skip
