"""The run_sql tool: the model queries the uploaded tables with SQL, fixes its query
from the error (which lists tables and columns), and the cell replays like any other."""

from __future__ import annotations

import json
import shutil

import pytest

from reckon.agent import (
    RUN_SQL_TOOL,
    Agent,
    ChatReply,
    DemoModel,
    build_system_prompt,
    export_notebook,
    replay_cells,
)
from reckon.agent.models._code import parse_tool_arguments, sql_cell
from reckon.reproduce import reproduce_notebook
from support import QUESTION_SETS, ScriptedModel

from .helpers import KernelExecutor, answer, mentions, model_steps, run


def sql_reply(query: str, call_id: str) -> ChatReply:
    call = {"id": call_id, "name": "run_sql", "arguments": json.dumps({"query": query})}
    return ChatReply(text="", tool_calls=[call], finish_reason="tool_calls")


@pytest.fixture
def a_sales_table(executor: KernelExecutor) -> KernelExecutor:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    (executor.data_dir / "sales 2024.csv").write_text(
        "region,price\nEast,10\nWest,20\nEast,30\nNorth,5\n"
    )
    return executor


def test_a_failing_query_is_fixed_from_the_error(a_sales_table: KernelExecutor) -> None:
    executor = a_sales_table
    model = ScriptedModel(
        [
            sql_reply("SELECT region, SUM(prise) FROM sales_2024 GROUP BY region", "c1"),
            sql_reply(
                "SELECT region, SUM(price) AS total FROM sales_2024\n"
                "GROUP BY region ORDER BY total DESC",
                "c2",
            ),
            answer("East leads with 40."),
        ]
    )
    agent = Agent(model, executor)
    outcome = run(agent.ask("total price by region?", environment=executor.environment()))

    assert outcome["status"] == "ok", outcome
    first, second = model_steps(outcome, "code")
    assert first["result"]["status"] == "error"
    assert second["result"]["status"] == "ok"
    assert (
        "East" in second["result"]["result"]["text"] and "40" in second["result"]["result"]["text"]
    )
    observation = model.requests[1].messages[-1]["content"]
    assert 'Referenced column "prise" not found' in observation
    assert "sales_2024 (sales 2024.csv): region, price" in observation
    # The table Reckon loaded first is replayed too: a new sandbox needs it.
    (loaded,) = [s["code"] for s in outcome["steps"] if s.get("origin") == "reckon"]
    assert replay_cells(agent.transcript) == [loaded, second["code"]]
    assert model.requests[0].tools and RUN_SQL_TOOL in model.requests[0].tools


def test_the_prompt_names_each_sql_table(a_sales_table: KernelExecutor) -> None:
    prompt = build_system_prompt(a_sales_table.environment())
    assert "SQL table: sales_2024" in prompt
    assert "run_sql" in prompt


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        pytest.param('{"query": "SELECT 1"}', "run_sql('SELECT 1')", id="json"),
        pytest.param('{"sql": "SELECT 1"}', "run_sql('SELECT 1')", id="sql-key"),
        pytest.param("SELECT 1", "run_sql('SELECT 1')", id="bare-string"),
        pytest.param('{"query": "SELECT\\n1"}', 'run_sql("""\nSELECT\n1\n""")', id="multiline"),
    ],
)
def test_sql_arguments_become_a_cell(arguments: str, code: str) -> None:
    assert parse_tool_arguments("run_sql", arguments).code == code


def test_sql_without_a_query_is_reported() -> None:
    parsed = parse_tool_arguments("run_sql", "{}")
    assert parsed.code is None and "query" in (parsed.problem or "")


def test_a_query_with_quotes_stays_valid_python() -> None:
    cell = sql_cell("SELECT * FROM t WHERE name = 'O''Brien' AND x = \"y\"")
    compile(cell, "<test>", "eval")


# The demo model's text-to-SQL: SQL words (or "sql"/"query") send rankings, group-bys,
# counts and filters through the run_sql tool, and the answer quotes the table.


@pytest.fixture
def sales(executor: KernelExecutor) -> KernelExecutor:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    source = QUESTION_SETS / "sales.csv"
    shutil.copyfile(source, executor.data_dir / "sales.csv")
    return executor


@pytest.mark.parametrize(
    ("question", "clause", "expected"),
    [
        pytest.param("sql: average price by region", "GROUP BY", [25.5, 25.1, 23.875, 21.6],
                     id="group-by"),
        pytest.param("query the top 2 products by sales", "LIMIT 2", [612.5, 600], id="top-n"),
        pytest.param("count by region, as a SQL query", "COUNT(*)", [6, 5, 5, 4], id="count-by"),
        pytest.param("sql: how many rows where price > 20", "WHERE", [10, 20], id="filter"),
        pytest.param("query: how many rows where region is East", "LOWER(TRIM", [6, 20],
                     id="text-filter"),
        pytest.param("select the total sales, sql please", "SUM(", [2056.5], id="aggregate"),
    ],
)  # fmt: skip
def test_demo_sql_requests_go_through_run_sql(
    sales: KernelExecutor, question: str, clause: str, expected: list[float]
) -> None:
    agent = Agent(DemoModel(), sales)
    outcome = run(agent.ask(question, environment=sales.environment()))
    assert outcome["status"] == "ok", outcome
    (step,) = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert step["code"].startswith("run_sql(") and clause in step["code"]
    assert step["result"]["status"] == "ok" and step["result"]["result"]["type"] == "DataFrame"
    call = agent.messages[2]["tool_calls"][0]["function"]
    assert call["name"] == "run_sql" and "query" in json.loads(call["arguments"])
    for number in expected:
        assert mentions(outcome["answer"], number), (number, outcome["answer"])


def test_without_sql_words_the_demo_writes_python(sales: KernelExecutor) -> None:
    agent = Agent(DemoModel(), sales)
    outcome = run(agent.ask("average price by region", environment=sales.environment()))
    (step,) = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert "groupby" in step["code"] and "run_sql" not in step["code"]


def test_a_file_too_big_to_load_is_queried_not_loaded(sales: KernelExecutor) -> None:
    """Over TOO_BIG_TO_LOAD (a CSV takes several times its size in pandas): the prompt
    says to query the file or read only some columns, and the demo goes through
    run_sql without being asked in SQL words. (The file here is small; its size in the
    environment is what a 1 GB upload reports.)"""
    environment = sales.environment()
    (entry,) = environment["files"]
    entry["size"] = 1_001_721_990
    prompt = build_system_prompt(environment)
    assert "too big to load whole (1,002 MB): query it with run_sql" in prompt
    assert f"df = read_table({entry['path']!r}, columns=['order_id', 'date'])" in prompt
    assert "load it:" not in prompt
    agent = Agent(DemoModel(), sales)
    outcome = run(agent.ask("average price by region", environment=environment))
    (step,) = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert step["code"].startswith("run_sql(") and step["result"]["status"] == "ok"
    for number in (25.5, 25.1, 23.875, 21.6):
        assert mentions(outcome["answer"], number), (number, outcome["answer"])


def test_a_query_typed_in_the_question_runs_as_it_is(sales: KernelExecutor) -> None:
    agent = Agent(DemoModel(), sales)
    query = "SELECT product, COUNT(*) AS n FROM sales WHERE price > 20 GROUP BY product ORDER BY n"
    outcome = run(agent.ask(query, environment=sales.environment()))
    (step,) = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert step["code"] == sql_cell(query)
    table = step["result"]["result"]["text"]
    assert outcome["answer"].startswith("The query returned")
    for line in table.splitlines()[1:]:
        assert " ".join(line.split()[1:]) in outcome["answer"]


def test_a_typed_query_that_fails_is_explained_from_the_error(sales: KernelExecutor) -> None:
    agent = Agent(DemoModel(), sales)
    outcome = run(agent.ask("SELECT nope FROM sales WHERE 1 > 0", environment=sales.environment()))
    assert [s["result"]["status"] for s in outcome["steps"] if s["kind"] == "code"] == ["error"]
    assert 'Referenced column "nope" not found' in outcome["answer"]
    assert "sales (sales.csv): order_id, date, region" in outcome["answer"]


def test_the_demo_computes_a_median_in_python(sales: KernelExecutor) -> None:
    agent = Agent(DemoModel(), sales)
    outcome = run(agent.ask("sql: median price by region", environment=sales.environment()))
    (step,) = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert ".median()" in step["code"] and mentions(outcome["answer"], 21.25)


def test_an_exported_sql_cell_reproduces_on_cpython(sales: KernelExecutor) -> None:
    agent = Agent(DemoModel(), sales)
    for question in ("sql: total sales per product", "query the top 3 regions by sales"):
        assert run(agent.ask(question, environment=sales.environment()))["status"] == "ok"
    notebook = export_notebook(agent.transcript)
    sources = ["".join(c["source"]) for c in json.loads(notebook)["cells"]]
    assert len([s for s in sources if s.startswith("run_sql(")]) == 2
    report = reproduce_notebook(notebook, data_dir=sales.data_dir)
    assert (report["cells"], report["share"], report["differences"]) == (2, 1.0, [])
