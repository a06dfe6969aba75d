"""The demo model honours every part of a question or says which it did not (#34), with
the real kernel: "per month" groups by a date's month, a price over dates of several
stocks is one line per stock, the top stocks by price are ranked by their average price
(not a sum of prices), and a "by X" that names no column is said in the answer."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from reckon.agent import Agent, DemoModel

from .helpers import KernelExecutor, mentions, run


def ask(executor: KernelExecutor, question: str) -> dict[str, Any]:
    outcome = run(Agent(DemoModel(), executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok", outcome
    codes = [s for s in outcome["steps"] if s["kind"] == "code"]
    assert codes and all(s["result"]["status"] == "ok" for s in codes), codes
    return outcome


@pytest.fixture
def weather(executor: KernelExecutor) -> pd.DataFrame:
    """Daily weather over four months, like vega-datasets' seattle-weather.csv."""
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    days = pd.date_range("2012-01-01", "2012-04-30", freq="D")
    frame = pd.DataFrame({
        "date": days.strftime("%Y-%m-%d"),
        "precipitation": [round((i * 7) % 11 * 0.3, 1) for i in range(len(days))],
        "temp_max": [5 + (i * 3) % 9 for i in range(len(days))],
        "weather": [("rain", "sun", "fog")[i % 3] for i in range(len(days))],
    })  # fmt: skip
    frame.to_csv(executor.data_dir / "seattle-weather.csv", index=False)
    return frame


@pytest.fixture
def stocks(executor: KernelExecutor) -> pd.DataFrame:
    """Five stocks' monthly prices, like vega-datasets' stocks.csv."""
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    symbols = ["MSFT", "AMZN", "IBM", "GOOG", "AAPL"]
    rows = [(s, f"2001-{m:02d}-01", round(20 + k * 30 + m * (k + 1) * 0.7, 2))
            for k, s in enumerate(symbols) for m in range(1, 13)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["symbol", "date", "price"])
    frame.to_csv(executor.data_dir / "stocks.csv", index=False)
    return frame


def test_total_per_month_groups_by_the_month_of_the_date(
    executor: KernelExecutor, weather: pd.DataFrame
) -> None:
    outcome = ask(executor, "total precipitation per month")
    months = weather.groupby(pd.to_datetime(weather["date"]).dt.to_period("M"))
    totals = months["precipitation"].sum()
    answer = outcome["answer"]
    assert answer.startswith("Total precipitation per month of date (4 months)"), answer
    for month, total in totals.items():
        assert f"{month} {round(total, 4)}" in answer, (month, answer)
    assert not mentions(answer, weather["precipitation"].sum())  # not the total of all rows
    outcome = ask(executor, "average temp_max by month")
    for value in months["temp_max"].mean():
        assert mentions(outcome["answer"], value), outcome["answer"]
    outcome = ask(executor, "line chart of precipitation per month")
    assert "to_period('M')" in outcome["steps"][0]["code"] and "(4 points)" in outcome["answer"]


def test_a_price_over_dates_of_several_stocks_is_one_line_per_stock(
    executor: KernelExecutor, stocks: pd.DataFrame
) -> None:
    outcome = ask(executor, "chart of price over date")
    result = outcome["steps"][0]["result"]
    assert len(result["figures"]) == 1
    answer = outcome["answer"]
    assert "5 lines, one per symbol, over 12 points" in answer, answer
    for symbol, prices in stocks.groupby("symbol")["price"]:
        assert f"{symbol}: first {prices.iloc[0]}, last {prices.iloc[-1]}" in answer, symbol
    # Never one line of the five prices added up.
    summed = stocks.groupby("date")["price"].sum()
    assert not mentions(answer, summed.iloc[-1])


def test_top_symbols_by_price_rank_by_the_price_not_a_sum(
    executor: KernelExecutor, stocks: pd.DataFrame
) -> None:
    outcome = ask(executor, "top 3 symbols by price")
    means = stocks.groupby("symbol")["price"].mean().nlargest(3)
    answer = outcome["answer"]
    assert answer.startswith("Top 3 symbol by average price:"), answer
    for symbol, mean in means.items():
        assert f"{symbol}: {round(mean, 4)}" in answer, answer
    sums = stocks.groupby("symbol")["price"].sum()
    assert not any(mentions(answer, total) for total in sums)


def test_a_part_it_cannot_do_is_said(executor: KernelExecutor, weather: pd.DataFrame) -> None:
    outcome = ask(executor, "total precipitation per flavour")
    answer = outcome["answer"]
    assert mentions(answer, weather["precipitation"].sum())
    assert "I did not do the “per flavour” part" in answer, answer
    assert "no column of seattle-weather.csv is called that" in answer


def test_per_month_without_dates_is_said(executor: KernelExecutor) -> None:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    (executor.data_dir / "units.csv").write_text("region,units\nEast,5\nWest,7\n")
    answer = ask(executor, "total units per month")["answer"]
    assert mentions(answer, 12) and "“per month” part: no column of units.csv holds dates" in answer
