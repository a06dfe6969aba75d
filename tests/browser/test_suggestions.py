"""The example questions offered after an upload (page/suggestions.js), over every real
table of tests/data and benchmarks/questions and over tables shaped like the public
ones people try first (airports, stocks, weather): only what a person would ask. No
total or average of coordinates, ids, codes, years or bare-number columns; no total of
a price, a temperature or a rate; a price averaged only per item."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.kernel import inspect
from support import QUESTION_SETS, TEST_DATA


def shaped_like_public_tables(folder: Path) -> list[Path]:
    """Small tables with the columns of vega-datasets' airports, stocks and Seattle weather."""
    days = pd.date_range("2012-01-01", periods=60, freq="D")
    tables = {
        "airports.csv": pd.DataFrame({
            "iata": ["00M", "00R", "00V"], "name": ["Thigpen", "Livingston", "Meadow Lake"],
            "city": ["Bay Springs", "Livingston", "Colorado Springs"], "state": ["MS", "TX", "CO"],
            "country": ["USA"] * 3, "latitude": [31.95, 30.68, 38.94],
            "longitude": [-89.23, -95.01, -104.56]}),
        "stocks.csv": pd.DataFrame({
            "symbol": [s for s in ("MSFT", "AMZN", "IBM", "GOOG", "AAPL") for _ in range(12)],
            "date": [f"2001-{m:02d}-01" for _ in range(5) for m in range(1, 13)],
            "price": [round(10 + i * 1.7 % 90, 2) for i in range(60)]}),
        "seattle-weather.csv": pd.DataFrame({
            "date": days.strftime("%Y-%m-%d"), "precipitation": [i % 7 * 0.8 for i in range(60)],
            "temp_max": [5 + i % 9 for i in range(60)], "temp_min": [i % 5 for i in range(60)],
            "wind": [2 + i % 4 * 0.5 for i in range(60)],
            "weather": ["rain", "sun", "drizzle"] * 20}),
    }  # fmt: skip
    for name, frame in tables.items():
        frame.to_csv(folder / name, index=False)
    return [folder / name for name in tables]


@pytest.fixture(scope="module")
def infos(tmp_path_factory: Any) -> list[dict[str, Any]]:
    paths = [p for root in (TEST_DATA, QUESTION_SETS) for p in sorted(root.rglob("*"))
             if p.is_file() and p.suffix not in {".md", ".jsonl", ".py", ".json"}]  # fmt: skip
    paths += shaped_like_public_tables(tmp_path_factory.mktemp("public"))
    found = []
    for path in paths:
        info = inspect(str(path))
        if info.get("kind") == "table":
            found.append({**info, "name": path.name})
    assert len(found) > 40
    return found


@pytest.fixture(scope="module")
def questions(
    a_browser: Any, a_static_server: str, infos: list[dict[str, Any]]
) -> Iterator[dict[str, list[str]]]:
    context = a_browser.new_context()
    page = context.new_page()
    page.goto(f"{a_static_server}/index.html")
    asked = page.evaluate(
        """async (infos) => {
          const { exampleQuestions } = await import("./page/chat-welcome.js");
          return infos.map((info) => [info.path, exampleQuestions(info)]);
        }""",
        infos,
    )
    yield dict(asked)
    context.close()


def by_name(questions: dict[str, list[str]], name: str) -> list[str]:
    [found] = [
        q for path, q in questions.items() if path.endswith(f"/{name}") and "real" not in path
    ]
    return found


EXPECTED = {
    "questions/sales.csv": ["Summarize sales.csv", "Total sales by region",
                            "Line chart of sales over date", "Average price by product"],
    "questions/people.csv": ["Summarize people.csv", "Total salary by city",
                             "Histogram of salary", "Average age by city"],
    "messy/simple.csv": ["Summarize simple.csv", "Line chart of temperature over date",
                         "Average temperature by place"],
    "airports.csv": ["Summarize airports.csv", "Count by country"],
    "stocks.csv": ["Summarize stocks.csv", "Line chart of price over date",
                   "Average price by symbol"],
    "seattle-weather.csv": ["Summarize seattle-weather.csv", "Total precipitation by weather",
                            "Line chart of precipitation over date",
                            "Average temp_max by weather"],
    "messy/mixedGLB.csv": ["Summarize mixedGLB.csv", "Line chart of Jan over Year",
                           "Correlation between Jan and Feb"],
    "customers.csv": ["Summarize customers.csv", "Total monthly_spend by city",
                      "Line chart of monthly_spend over signup_date", "Count by city"],
}  # fmt: skip


@pytest.mark.parametrize("name", EXPECTED)
def test_the_questions_for_familiar_tables(questions: dict[str, list[str]], name: str) -> None:
    assert by_name(questions, name) == EXPECTED[name]


# Independent of the page's word lists: what must never be totalled or averaged.
NEVER_A_MEASURE = re.compile(
    r"lat|lng|lon|坐標|(^|[\s_])id($|[\s_])|_id$|^id|code$|code|year|^\d+$|^unnamed|num$|^nr\.?$"
    r"|url|phone|zip|iata",
    re.I,
)
NEVER_TOTALLED = re.compile(r"price|temp|age|rate|ctr|score|percent|wind", re.I)
ITEMS = re.compile(r"product|symbol|item|ticker|stock|brand", re.I)
FORMS = [
    re.compile(r"^(?P<agg>Total|Average) (?P<x>.+) by (?P<by>.+)$"),
    re.compile(r"^Line chart of (?P<x>.+) over (?P<over>.+)$"),
    re.compile(r"^Histogram of (?P<x>.+)$"),
    re.compile(r"^Correlation between (?P<x>.+) and (?P<y>.+)$"),
    re.compile(r"^Count by (?P<by>.+)$"),
]


def test_every_question_makes_sense(
    questions: dict[str, list[str]], infos: list[dict[str, Any]]
) -> None:
    for info in infos:
        asked = questions[info["path"]]
        assert asked[0] == f"Summarize {info['name']}"
        columns = {" ".join(c["name"].split()) for c in info["columns"]}
        personal = {p["column"] for p in info.get("personal") or []}
        for question in asked[1:]:
            match = next((m for form in FORMS if (m := form.match(question))), None)
            assert match is not None, (info["name"], question)
            parts = match.groupdict()
            for key in ("x", "y", "by", "over"):
                if parts.get(key) is not None:
                    assert parts[key] in columns, (info["name"], question)
            for key in ("x", "y"):
                if parts.get(key):
                    assert not NEVER_A_MEASURE.search(parts[key]), (info["name"], question)
            if parts.get("agg") == "Total":
                assert not NEVER_TOTALLED.search(parts["x"]), (info["name"], question)
            if parts.get("agg") == "Average" and re.search("price", parts["x"], re.I):
                assert ITEMS.search(parts["by"]), (info["name"], question)
            if parts.get("by"):
                assert parts["by"] not in personal, (info["name"], question)
                assert not re.search(r"(^|[\s_])id$|code|url|lat|lng", parts["by"], re.I)
