"""A pandas read of an uploaded workbook that names a sheet runs as Reckon's
``read_table(path, sheet=...)`` (#31: ``pd.read_table('/data/large.xlsx',
sheet='data')``, pandas' text reader given a workbook, failed three times in a row on a
question not written for the agent). The rewrite on its own, then through the agent
and the real kernel on a copy of that workbook."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reckon.agent import Agent
from reckon.agent.checks._reads import rewrite_reads
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, run

BOOK = "/data/large.xlsx"
LARGE = Path(__file__).parents[1] / "data" / "messy" / "large.xlsx"


@pytest.mark.parametrize(
    ("written", "rewritten"),
    [
        (f"pd.read_table({BOOK!r}, sheet='data')", f"read_table({BOOK!r}, sheet='data')"),
        (f"pd.read_excel({BOOK!r}, sheet_name='data')", f"read_table({BOOK!r}, sheet='data')"),
        (f"pandas.read_excel({BOOK!r}, sheet_name=1)", f"read_table({BOOK!r}, sheet=1)"),
        (f"pd.read_excel({BOOK!r})", f"read_table({BOOK!r})"),
        # Every sheet as a dict of tables, or a sheet read with options of its own: as written.
        (f"pd.read_excel({BOOK!r}, sheet_name=None)", None),
        (f"pd.read_excel({BOOK!r}, sheet_name=['a', 'b'])", None),
        (f"pd.read_excel({BOOK!r}, sheet_name='data', usecols='A:C')", None),
        (f"pd.read_excel({BOOK!r}, sheet_name='data', header=2)", None),
        (f"pd.read_excel({BOOK!r}, sheet_name=name)", None),
    ],
)
def test_a_named_sheet_goes_with_the_read(written: str, rewritten: str | None) -> None:
    code = f"df = {written}\nprint(len(df))"
    rewrite = rewrite_reads(code, [BOOK])
    if rewritten is None:
        assert rewrite.code == code and rewrite.calls == ()
    else:
        assert rewrite.code == f"df = {rewritten}\nprint(len(df))"
        assert rewrite.calls == (written,)


@pytest.mark.parametrize(
    ("code", "rewritten"),
    [
        # A loop's name over written sheets: each is one sheet (seen, the six of a workbook).
        (f"dfs = [pd.read_table({BOOK!r}, sheet=s) for s in ['a', 'b']]",
         f"dfs = [read_table({BOOK!r}, sheet=s) for s in ['a', 'b']]"),
        (f"for s in ('a', 2):\n    print(pd.read_excel({BOOK!r}, sheet_name=s))",
         f"for s in ('a', 2):\n    print(read_table({BOOK!r}, sheet=s))"),
        # A name that may hold a list of sheets, or None (every sheet): as written.
        (f"dfs = [pd.read_excel({BOOK!r}, sheet_name=s) for s in names]", None),
        (f"dfs = [pd.read_excel({BOOK!r}, sheet_name=s) for s in [None, 'a']]", None),
    ],
)  # fmt: skip
def test_a_loops_sheet_goes_with_the_read(code: str, rewritten: str | None) -> None:
    assert rewrite_reads(code, [BOOK]).code == (rewritten or code)


def test_pandas_text_reader_given_a_workbook_reads_the_sheet(executor: KernelExecutor) -> None:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    path = str(shutil.copy(LARGE, executor.data_dir / "large.xlsx"))
    code = (
        f"import pandas as pd\ndf = pd.read_table({path!r}, sheet='data')\n"
        "ee = df[(df['Series'] == 'EE') & (df['RecordType'] == 'PiecesOutstanding')]\n"
        "print(len(ee))"
    )
    model = ScriptedModel([code_reply(code), answer("There are 178 rows.")])
    question = "How many PiecesOutstanding rows has series EE in the data sheet?"
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    step = next(s for s in outcome["steps"] if s["kind"] == "code" and s.get("origin") != "reckon")
    assert step["proposed"] == code
    assert f"df = read_table({path!r}, sheet='data')" in step["code"]
    assert step["result"]["status"] == "ok" and step["result"]["stdout"].strip() == "178"
    assert outcome["answer"] == "There are 178 rows."
