"""The method line (reckon.agent.checks._method): what the code that printed the answer's
number did, in words read from the code; table-driven, and through the loop."""

from __future__ import annotations

import pytest

from reckon.agent import Agent
from reckon.agent.checks._method import describe_code
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run


@pytest.mark.parametrize(
    ("code", "method"),
    [
        pytest.param(
            "m = df.groupby(df['date'].dt.month)['rain'].sum()\nprint(m.idxmax())",
            "'rain' per month of 'date', summed, the label of the largest",
            id="rainiest-month",
        ),
        pytest.param(
            "m = df.groupby(df['date'].dt.day)['rain'].sum()\nprint(m.idxmax())",
            "'rain' per day of 'date', summed, the label of the largest",
            id="grouped-by-day-shows",
        ),
        pytest.param(
            "print(df[df['kind'] == 'NHS']['admissions'].sum())",
            "'admissions' of (rows where 'kind' is 'NHS'), summed",
            id="filter-then-sum",
        ),
        pytest.param(
            "refunds = await tools.refund_total()\n"
            "print(sum(r['amount'] for r in rows) - refunds['total'])",
            "('amount', sum minus 'total')",
            id="a-generator-and-an-awaited-tool",
        ),
        pytest.param(
            "print(round(df['price'].mean(), 2))",
            "'price', averaged, rounded to 2 decimals",
            id="rounded-mean",
        ),
        pytest.param(
            "x = df.loc[df['hour'].dt.hour.between(9, 17), 'v'].mean()\nprint(f'{x:.2f}')",
            "'v' of rows where hour of 'hour' between 9 and 17, averaged",
            id="loc-window",
        ),
        pytest.param(
            "print(df.loc[df['J-D'].idxmax(), 'Year'])",
            "'Year' of the row with the largest 'J-D'",
            id="row-of-the-largest",
        ),
        pytest.param(
            "fall = df['2000'] - df['2007']\nprint(df.loc[fall.idxmax(), 'Sub_Group'])",
            "'Sub_Group' of the row with the largest '2000' minus '2007'",
            id="row-of-the-largest-difference",
        ),
        pytest.param(
            "print(df.loc[(df['a'] * 2 - (df['b'])).idxmin(), 'k'])",
            "'k' of the row with the smallest ('a' times 2) minus 'b'",
            id="row-of-the-smallest-of-two-parts",
        ),
        pytest.param(
            "print((df['2007'] - df['2000']).idxmin())",
            "('2007' minus '2000'), the label of the smallest",
            id="change-between-columns",
        ),
        pytest.param(
            "print(len(df[df['age'] > 30]))", "rows where 'age' > 30, rows counted", id="count"
        ),
        pytest.param(
            "run_sql('SELECT region, SUM(sales) FROM sales GROUP BY region')",
            "SQL: SELECT region, SUM(sales) FROM sales GROUP BY region",
            id="sql",
        ),
        pytest.param("print(total)", "", id="a-bare-name-says-nothing"),
        pytest.param("print(", "", id="not-python"),
    ],
)
def test_the_method_is_read_from_the_code(code: str, method: str) -> None:
    assert describe_code(code) == method


def test_the_answer_carries_the_method_of_the_step_that_printed_its_value(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "sales.csv", "region,sales\nEast,50\nWest,30\nEast,25\n")
    model = ScriptedModel([
        code_reply("print(df.shape)"),
        code_reply("print(df.groupby('region')['sales'].sum().max())"),
        answer("The most sold in one region is 75. @most[75]"),
    ])  # fmt: skip
    question = "Most sales of one region? Answer as @most[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok"
    method = outcome["method"]
    assert method["text"] == "'sales' per 'region', summed, largest taken"
    step = outcome["steps"][method["step"]]
    assert step["kind"] == "code" and "groupby" in step["code"]
    assert outcome["steps"][-1]["method"] == method


def test_a_result_printed_in_a_loop_and_a_count_of_a_condition() -> None:
    looped = (
        "result = df.groupby('product')['sales'].sum().sort_values(ascending=False)\n"
        "print('groups:', len(result))\n"
        "for key, value in result.head(30).items():\n    print(key, value)\n"
        "print('tied:', int((result == result.iloc[0]).sum()))"
    )
    said = "'sales' per 'product', summed, sorted (largest first), first 30"
    assert describe_code(looped) == said
    counted = "mask = df['price'] > 100\nprint(int(mask.sum()))"
    assert describe_code(counted) == "'price' > 100, counted"
