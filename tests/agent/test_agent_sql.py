"""The run_sql tool: the model queries the uploaded tables with SQL, fixes its query
from the error (which lists tables and columns), and the cell replays like any other."""

from __future__ import annotations

import json

import pytest

from reckon.agent import RUN_SQL_TOOL, Agent, ChatReply, build_system_prompt, replay_cells
from reckon.agent._code import parse_tool_arguments, sql_cell

from .helpers import KernelExecutor, ScriptedModel, answer, run


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
    first, second = (s for s in outcome["steps"] if s["kind"] == "code")
    assert first["result"]["status"] == "error"
    assert second["result"]["status"] == "ok"
    assert (
        "East" in second["result"]["result"]["text"] and "40" in second["result"]["result"]["text"]
    )
    observation = model.requests[1].messages[-1]["content"]
    assert "no such column: prise" in observation
    assert "sales_2024 (sales 2024.csv): region, price" in observation
    assert replay_cells(agent.transcript) == [second["code"]]
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
