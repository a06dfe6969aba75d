"""A question written against ``pd.read_csv`` names pandas' columns ('Unnamed: 4'):
the hint says how pandas reads the file, and a cell that asks for such a name keeps its
``pd.read_csv`` as written (``checks/_reads``). Scripted model, real kernel."""

from __future__ import annotations

import pytest

from reckon.agent import Agent
from reckon.agent.checks._reads import rewrite_reads
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run

TEAMS = "TEAMS OF 2017,,,,\nWins,Name,,,Weight\n5,Ann,,,0.8\n3,Bo,,,\n2,Cy,,,\n4,Di,,,\n"


@pytest.mark.parametrize(
    ("code", "rewritten"),
    [
        ("df = pd.read_csv('/data/t.csv')\nprint(df['Unnamed: 4'].isna().sum())", False),
        ("df = pd.read_csv('/data/t.csv')\nprint(df[\"Unnamed: 2\"].count())", False),
        ("df = pd.read_csv('/data/t.csv')\nprint(df['Weight'].isna().sum())", True),
        # pandas' tab reader on a CSV reads one column: still Reckon's reader.
        ("df = pd.read_table('/data/t.csv')\nprint(df['Unnamed: 4'].isna().sum())", True),
    ],
)
def test_a_cell_asking_pandas_names_keeps_pandas_read(code: str, rewritten: bool) -> None:
    assert (rewrite_reads(code, ["/data/t.csv"]).code != code) is rewritten


def test_pandas_names_asked_of_the_loaded_table_are_read_as_pandas_reads(
    executor: KernelExecutor,
) -> None:
    """Seen in a public benchmark question: 'Unnamed: 8' asked of the loaded table (read
    below its title line), a KeyError, then another column's share of missing values."""
    path = put_file(executor, "teams.csv", TEAMS)
    first = "print(round(df['Unnamed: 4'].isna().mean() * 100, 2))"
    second = f"df = pd.read_csv('{path}')\n{first}"
    model = ScriptedModel([code_reply(first), code_reply(second), answer("@missing[60.0]")])
    question = "What percentage of 'Unnamed: 4' is missing? Answer as @missing[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "@missing[60.0]"
    cells = [s for s in outcome["steps"] if s["kind"] == "code" and s.get("origin") != "reckon"]
    assert f"df = pd.read_csv('{path}')" in cells[0]["result"]["error"]["hint"]
    assert cells[1]["code"] == second and "proposed" not in cells[1]
    assert cells[1]["result"]["stdout"].strip() == "60.0"
