"""The demo model in the browser, through the page: a price over dates of five stocks
is five lines, and a total per month groups by the date's month (#34). The same
questions on CPython: tests/agent/test_agent_demo_parts.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .helpers import last_answer


def ask(page: Any, question: str) -> Any:
    before = page.locator("#messages .answer[class*='status-']").count()
    page.locator("#question").fill(question)
    page.locator("#question").press("Enter")
    page.wait_for_function(
        "(n) => document.querySelectorAll(\"#messages .answer[class*='status-']\").length > n",
        arg=before,
        timeout=120_000,
    )
    page.locator("#ask:not([disabled])").wait_for(timeout=30_000)
    return last_answer(page)


def test_stocks_are_one_line_each_and_rain_is_totalled_per_month(
    a_chat: Any, tmp_path: Path
) -> None:
    page = a_chat
    symbols = ["MSFT", "AMZN", "IBM", "GOOG", "AAPL"]
    stocks = pd.DataFrame(
        [(s, f"2001-{m:02d}-01", round(20 + k * 30 + m * (k + 1) * 0.7, 2))
         for k, s in enumerate(symbols) for m in range(1, 13)],
        columns=["symbol", "date", "price"],
    )  # fmt: skip
    days = pd.date_range("2012-01-01", "2012-03-31", freq="D")
    rain = pd.DataFrame({"date": days.strftime("%Y-%m-%d"),
                         "precipitation": [i % 5 * 0.5 for i in range(len(days))]})  # fmt: skip
    stocks.to_csv(tmp_path / "stocks.csv", index=False)
    rain.to_csv(tmp_path / "rain.csv", index=False)
    page.locator("#upload").set_input_files(
        [str(tmp_path / "stocks.csv"), str(tmp_path / "rain.csv")]
    )
    page.locator("#file-list li.file").filter(has_text="rain.csv").locator(".file-shape").wait_for()

    answer = ask(page, "chart of price over date in stocks.csv")
    text = answer.inner_text()
    assert "5 lines, one per symbol, over 12 points" in text, text
    turn = page.locator("#messages .turn").last
    assert turn.locator("img.figure").count() == 1
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        turn.locator("img.figure").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"stock-lines-{width}.png"))
    page.set_viewport_size({"width": 1280, "height": 900})

    text = ask(page, "total precipitation per month in rain.csv").inner_text()
    totals = rain.groupby(pd.to_datetime(rain["date"]).dt.to_period("M"))["precipitation"].sum()
    assert "per month of date (3 months)" in text, text
    for month, total in totals.items():
        assert f"{month} {round(total, 4)}" in text, text
