"""Issue 32, M2: one small upload must not break every ask. Inspecting a file is bounded
in bytes unpacked, cells made, columns parsed and time; the refusal is data that names
the file and says what to do; nothing is left behind; the prompt stays small; schema
privacy's scan names the file and sends nothing."""

from __future__ import annotations

import gzip
import os
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from reckon.agent import build_system_prompt, describe_file
from reckon.kernel import read_table
from reckon.kernel._inspect import inspect
from reckon.kernel._value_scan import scan_uploads
from support import BOMBS

# Bounds with room for a loaded machine; before the fix the .ods and the archives took
# 25 s and 2.3-2.5 GB each here, and the header line 1.5 s and sent 5 MB to the prompt.
SECONDS = 10.0
PEAK_BYTES = 300_000_000


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bombs")
    made = {}
    for name, (build, _) in BOMBS.items():
        path = folder / name
        path.write_bytes(build())
        made[name] = path
    return made


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_each_bomb_is_refused_quickly_in_bounded_memory_naming_the_file(
    bombs: dict[str, Path], name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bombs[name]
    assert path.stat().st_size < 6_000_000  # small uploads, all of them
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # what an unpacking leaves
    tracemalloc.start()
    started = time.monotonic()
    try:
        described = inspect(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    took = time.monotonic() - started
    assert described["status"] == "error", described
    message = described["message"]
    assert str(path) in message and BOMBS[name][1] in message, message
    assert " with " in message or "upload" in message  # says what to do instead
    assert took < SECONDS, took
    assert peak < PEAK_BYTES, peak
    assert not list(tmp_path.iterdir())  # the unpacked part is gone
    # The description the model reads: the file, what is wrong, in a few hundred bytes.
    line = describe_file(described)
    assert str(path) in line and len(line) < 1_000


def test_read_table_refuses_the_same_files_with_a_message(bombs: dict[str, Path]) -> None:
    for name in ("repeats.ods", "far.xlsx", "lines.csv.gz", "deep.zip"):
        with pytest.raises(ValueError, match=str(bombs[name])):
            read_table(str(bombs[name]))


def test_a_big_table_inside_an_archive_is_still_described(tmp_path: Path) -> None:
    """Under the bound but over the full-parse size: sampled, its rows counted, as a
    plain upload of that size is."""
    line = b"north,widget,12.5,2024-01-02\n"
    path = tmp_path / "sales.csv.gz"
    with gzip.open(path, "wb") as stream:
        stream.write(b"region,product,price,day\n" + line * 900_000)  # 26 MB
    described = inspect(str(path))
    assert described["status"] == "ok", described
    assert described["rows"] == 900_000
    assert [c["name"] for c in described["columns"]] == ["region", "product", "price", "day"]
    assert described["read_with"] == f"read_table({str(path)!r})"
    assert any("gz archive" in n for n in described["notes"])


def test_a_hostile_description_is_capped_in_the_prompt() -> None:
    """Whatever inspect says (a cell can patch it outside schema mode), one file's entry
    stays small, and the other files are still described."""
    huge = "x" * 5_000_000
    entry: dict[str, Any] = {
        "status": "ok", "path": "/data/" + "p" * 10_000, "kind": "table", "format": huge,
        "rows": huge, "size": 10, "read_with": huge, "sql_table": huge,
        "columns": [{"name": huge, "dtype": huge}] * 1_000,
        "sheets": [{"name": huge}] * 1_000, "notes": [huge] * 1_000,
        "head": [[huge] * 1_000] * 1_000,
    }  # fmt: skip
    assert len(describe_file(entry)) <= 4_000
    assert len(describe_file({**entry, "status": "error", "message": huge})) <= 1_000
    normal = {"status": "ok", "path": "/data/sales.csv", "kind": "table", "format": "csv",
              "rows": 2, "columns": [{"name": "region", "dtype": "object"}],
              "read_with": "pd.read_csv('/data/sales.csv')"}  # fmt: skip
    files = [entry] * 2_000 + [normal]
    prompt = build_system_prompt({"files": files}, loaded={})
    assert len(prompt) < 100_000  # the relay's limit is 4 MB
    one = build_system_prompt({"files": [entry, normal]}, loaded={})
    assert "/data/sales.csv" in one and "'region'" in one and len(one) < 12_000


def test_a_long_column_name_is_cut_and_says_so() -> None:
    columns = [{"name": "n" * 500, "dtype": "int64"}, {"name": "b", "dtype": "int64"}]
    entry = {"status": "ok", "path": "/data/a.csv", "kind": "table", "columns": columns}
    line = describe_file(entry)
    assert "(500 characters)" in line and "'b' (int64)" in line and len(line) < 400


def test_the_value_scan_names_each_bomb_and_reads_the_normal_file(
    bombs: dict[str, Path], tmp_path: Path
) -> None:
    """Schema privacy fails closed: every bomb is a problem that names it (so nothing is
    sent), and the normal CSV beside them is still read."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "sales.csv").write_text("region,amount\nnorth,12\nsouth,7\n")
    for name in ("repeats.ods", "lines.zip", "header.csv", "far.xlsx", "deep.zip"):
        os.link(bombs[name], data / name)
    started = time.monotonic()
    found = scan_uploads(str(data))
    assert time.monotonic() - started < 3 * SECONDS
    problems = " ".join(found["problems"])
    for name in ("repeats.ods", "lines.zip", "header.csv", "far.xlsx", "deep.zip"):
        assert str(data / name) in problems, (name, problems)
    assert "north" in found["strings"] and 12.0 in found["numbers"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param("deep.json", "[" * 200_000 + "]" * 200_000, id="arrays-200000-deep"),
        pytest.param("deep2.json", '{"a":' * 100_000 + "1" + "}" * 100_000, id="objects"),
    ],
)
def test_a_deeply_nested_json_is_refused_naming_the_file(
    tmp_path: Path, name: str, text: str
) -> None:
    """M2 variant: 400 kB of brackets. The reader stops at its own depth (the C stack
    is never at risk, in the browser either), and the refusal names the file."""
    path = tmp_path / name
    path.write_text(text)
    started = time.monotonic()
    described = inspect(str(path))
    assert described["status"] == "error" and str(path) in described["message"], described
    assert time.monotonic() - started < SECONDS
    assert str(path) in describe_file(described)
