"""The real-file question set (benchmarks/questions/real): every expected answer again.

make_questions.py computes the answers with pandas; here each one is recomputed by
another route (the csv module, openpyxl, the ODS file's XML), so a slip in one
pandas expression (a tie, a NaN, a thousands separator read as a decimal point)
shows up as a disagreement. Nothing here needs a browser or a model.
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import sys
import warnings
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from xml.etree import ElementTree

import openpyxl
import pytest

from reckon.eval._answers import matches_expected, pairs_in
from reckon.eval._questions import Question, load_questions
from support import QUESTION_SETS, ROOT

REAL = QUESTION_SETS / "real"
QUESTION_SETS = load_questions(REAL / "questions.jsonl")
BY_ID = {q.id: q for q in QUESTION_SETS}


def rows(name: str, *, delimiter: str = ",", encoding: str = "utf-8") -> list[list[str]]:
    with (REAL / name).open(newline="", encoding=encoding) as handle:
        return list(csv.reader(handle, delimiter=delimiter))


def records(name: str, **options: str) -> list[dict[str, str]]:
    head, *body = rows(name, **options)
    return [dict(zip(head, row, strict=True)) for row in body if row]


def number(text: str) -> float:
    return float(text.replace(",", "").replace(" ", ""))


def only_top(pairs: Iterable[tuple[object, float]], *, largest: bool = True) -> object:
    """The key of the largest (smallest) value; a tie fails the test."""
    ordered = sorted(pairs, key=lambda p: p[1], reverse=largest)
    assert ordered[0][1] != ordered[1][1], f"tie at the top: {ordered[:2]}"
    return ordered[0][0]


def sheet(name: str) -> list[dict[str, object]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # simple.xlsx has an extension openpyxl does not know
        book = openpyxl.load_workbook(REAL / name, read_only=True, data_only=True)
        head, *body = book.worksheets[0].iter_rows(values_only=True)
    return [dict(zip(head, row, strict=False)) for row in body if any(v is not None for v in row)]


def ods_column(name: str, column: int) -> list[float]:
    """One numeric column of an ODS sheet, from office:value in its content.xml."""
    ns = {"table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
          "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0"}  # fmt: skip
    tree = ElementTree.fromstring(zipfile.ZipFile(REAL / name).read("content.xml"))
    values = []
    for row in tree.iter(f"{{{ns['table']}}}table-row"):
        cells = row.findall("table:table-cell", ns)
        if len(cells) > column:
            value = cells[column].get(f"{{{ns['office']}}}value")
            if value is not None:
                values.append(float(value))
    return values


def example() -> list[dict[str, str]]:
    return records("example.tsv", delimiter="\t")


def glb() -> list[list[str]]:
    table = rows("mixedGLB.csv")
    start = next(i for i, row in enumerate(table) if row[:2] == ["Year", "Jan"])
    return [row for row in table[start:] if row and row[0]]


def glb_column(name: str) -> list[tuple[int, float]]:
    head, *body = glb()
    at = head.index(name)
    return [(int(r[0]), float(r[at])) for r in body if not set(r[at]) <= {"*"}]


def co2() -> dict[str, dict[str, float]]:
    table = rows("excel_pasting.csv")
    start = next(i for i, row in enumerate(table) if row[0] == "Year")
    head = table[start]
    out = {}
    for row in table[start + 1 :]:
        if row[0] and row[1]:
            years = zip(head[1:9], row[1:9], strict=True)
            out[" ".join(row[0].split())] = {y: number(v) for y, v in years}
    return out


def provinces() -> dict[str, dict[str, str]]:
    table = rows("begrotingsanalyse-2011.csv")
    names = next(r for r in table if "Groningen" in r)
    first = names.index("Groningen")
    columns = slice(first, first + 12)
    return {r[1]: dict(zip(names[columns], r[columns], strict=True)) for r in table if r[1]}


def doctors(year: str) -> dict[str, float]:
    table = rows("weird_head_padding.csv", delimiter=";")
    head = next(r for r in table if len(r) > 2 and r[1] == "1985")
    at = head.index(year)
    found: dict[str, float] = {}
    for row in table:
        # Sub-specialties are indented by six spaces, their groups by three.
        if len(row) > at and row[0].startswith("      ") and row[at].strip():
            name = row[0].strip()
            found[name] = found.get(name, 0) + float(row[at].strip().replace(".", ""))
    return found


def budget() -> list[dict[str, str]]:
    return records("spanish_chars.csv", encoding="cp1252")


def admissions() -> list[dict[str, str]]:
    return records("utf-16le_encoded.csv", encoding="utf-16")


def _mean(values: Iterable[float]) -> float:
    return statistics.fmean(values)


def _window() -> float:
    return _mean(float(r["expr1_0_imp"]) for r in example() if 9 <= int(r["hour"][11:13]) <= 17)


def _ratio() -> object:
    table = provinces()
    people, towns = table["Aantal inwoners"], table["Aantal gemeenten"]
    return only_top((p, number(people[p]) / number(towns[p])) for p in people)


def _fall() -> object:
    table = co2()
    return only_top(((k, v["2007"] - v["2000"]) for k, v in table.items() if k != "Total"),
                    largest=False)  # fmt: skip


# Each question's answer by the second route: {name: value}.
ROUTES: dict[str, Callable[[], dict[str, object]]] = {
    "easy-tsv-mean": lambda: {"mean_value": _mean(float(r["expr1_1_imp"]) for r in example())},
    "easy-tsv-sum": lambda: {"total": sum(int(r["ctrl1_0_hist"]) for r in example())},
    "easy-tsv-max": lambda: {"max_value": max(int(r["expr1_0_imp"]) for r in example())},
    "easy-tsv-rows": lambda: {"rows": len(example())},
    "easy-psv-mean": lambda: {"mean_value": _mean(
        float(r["First time buyers"]) for r in records("simple.psv", delimiter="|"))},
    "easy-psv-max": lambda: {"max_value": max(
        int(r["New dwellings"]) for r in records("simple.psv", delimiter="|"))},
    "easy-xlsx-mean": lambda: {"mean_temperature": _mean(
        float(str(r["temperature"])) for r in sheet("simple.xlsx"))},
    "easy-ods-mean": lambda: {"mean_age": _mean(ods_column("simple.ods", 1))},
    "easy-people-median": lambda: {"median_salary": statistics.median(
        int(r["salary"]) for r in records("../people.csv"))},
    "easy-people-cities": lambda: {"cities": len({r["city"] for r in records("../people.csv")})},
    "easy-sales-quantity": lambda: {"total_quantity": sum(
        int(r["quantity"]) for r in records("../sales.csv"))},
    "easy-xlsx-retweets": lambda: {"total_retweets": sum(
        int(str(r["retweet_count"])) for r in sheet("sw_gen.xlsx"))},
    "medium-tsv-peak-hour": lambda: {"hour": only_top(
        (r["hour"], float(r["expr1_1_imp"])) for r in example())},
    "medium-tsv-hour-window": lambda: {"mean_value": _window()},
    "medium-tsv-day-total": lambda: {"total": sum(
        int(r["expr1_0_hist"]) for r in example() if r["hour"].startswith("2012-06-24"))},
    "medium-people-department": lambda: {"department": only_top(
        (d, _mean(float(r["salary"]) for r in records("../people.csv") if r["department"] == d))
        for d in {r["department"] for r in records("../people.csv")})},
    "medium-people-berlin-age": lambda: {"mean_age": _mean(
        float(r["age"]) for r in records("../people.csv") if r["city"] == "Berlin")},
    "medium-sales-region": lambda: {"region": only_top(_totals(
        (r["region"], float(r["sales"])) for r in records("../sales.csv")))},
    "medium-sales-february": lambda: {"total_sales": sum(
        float(r["sales"]) for r in records("../sales.csv") if r["date"][:7] == "2024-02")},
    "medium-psv-count": lambda: {"years": sum(
        int(r["First time buyers"]) > 100000 for r in records("simple.psv", delimiter="|"))},
    "medium-xlsx-place-mean": lambda: {"mean_temperature": _mean(
        float(str(r["temperature"])) for r in sheet("simple.xlsx") if r["place"] == "Berkeley")},
    "medium-glb-january": lambda: {"year": only_top(glb_column("Jan"))},
    "medium-xlsx-top-user": lambda: {"screen_name": only_top(
        Counter(r["screen_name"] for r in sheet("sw_gen.xlsx")).items())},
    "medium-utf16-count": lambda: {"count": sum(
        r["Organisation_classification"].strip() == "Independent Hospitals"
        for r in admissions())},
    "hard-glb-warmest-year": lambda: {"year": only_top(glb_column("J-D"))},
    "hard-glb-missing": lambda: {"missing": sum(
        1 for row in glb()[1:] for cell in row if cell and set(cell) == {"*"})},
    "hard-co2-largest-fall": lambda: {"subgroup": _fall()},
    "hard-co2-sum": lambda: {"sum_2007": sum(
        v["2007"] for k, v in co2().items() if k != "Total")},
    "hard-provinces-ratio": lambda: {"province": _ratio()},
    "hard-doctors-top": lambda: {"specialty": only_top(doctors("2010").items())},
    "hard-doctors-total": lambda: {"total": sum(doctors("2010").values())},
    "hard-budget-function": lambda: {"function": only_top(
        (r["F"], number(r["Gasto total 2011"])) for r in budget() if r["F"])},
    "hard-budget-groups": lambda: {"total": sum(
        number(r["Gasto total 2011"]) for r in budget() if r["GF_ID"] in ("1", "2", "3"))},
    "hard-utf16-admissions": lambda: {"total": sum(
        number(r["All_admissions_including_place_of_safety_detentions"]) for r in admissions()
        if r["Organisation_classification"].strip() == "NHS Facilities")},
}  # fmt: skip


def _totals(pairs: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    sums: dict[str, float] = defaultdict(float)
    for key, value in pairs:
        sums[key] += value
    return list(sums.items())


def test_the_set_is_large_varied_and_inside_the_repository() -> None:
    assert len(QUESTION_SETS) >= 30
    tiers = Counter(q.id.split("-", 1)[0] for q in QUESTION_SETS)
    assert set(tiers) == {"easy", "medium", "hard"}
    assert min(tiers.values()) >= 8, tiers
    files = {f for q in QUESTION_SETS for f in q.files}
    assert len(files) >= 10
    for path in files:
        assert path.is_file() and path.is_relative_to(ROOT), path
        assert path.stat().st_size < 400_000, path
    assert set(ROUTES) == set(BY_ID), "every question needs a second route"


@pytest.mark.parametrize("question", QUESTION_SETS, ids=lambda q: q.id)
def test_the_question_states_the_format_and_the_rounding(question: Question) -> None:
    assert question.expected is not None
    for name, value in pairs_in(question.expected).items():
        assert f"@{name}[" in question.question
        places = len(value.split(".", 1)[1]) if re.fullmatch(r"-?\d+\.\d+", value) else 0
        if places:
            assert f"Round to {places} decimal" in question.question, value
        else:
            assert "Round to" not in question.question


@pytest.mark.parametrize("question", QUESTION_SETS, ids=lambda q: q.id)
def test_a_second_route_gives_the_expected_answer(question: Question) -> None:
    assert question.expected is not None
    got = ROUTES[question.id]()
    answer = " ".join(f"@{name}[{value}]" for name, value in got.items())
    assert matches_expected(question.expected, answer, strict=True), (question.expected, answer)


def test_a_wrong_reading_of_a_messy_file_is_not_accepted() -> None:
    """The checks can fail: the answers a naive reading gives do not match."""
    naive_total = sum(float(v) for v in doctors_naive("2010"))  # '2.830' read as 2.83
    assert not matches_expected(str(BY_ID["hard-doctors-total"].expected), f"@total[{naive_total}]",
                                strict=True)  # fmt: skip
    total_row = co2()["Total"]["2007"]  # the file's own Total is 1 lower (rounding)
    assert not matches_expected(str(BY_ID["hard-co2-sum"].expected), f"@sum_2007[{total_row}]",
                                strict=True)  # fmt: skip
    assert not matches_expected(str(BY_ID["easy-tsv-mean"].expected), "@mean_value[164.6]",
                                strict=True)  # fmt: skip


def doctors_naive(year: str) -> list[str]:
    table = rows("weird_head_padding.csv", delimiter=";")
    head = next(r for r in table if len(r) > 2 and r[1] == "1985")
    at = head.index(year)
    return [r[at] for r in table if len(r) > at and r[0].startswith("      ") and r[at].strip()]


def test_the_file_is_what_make_questions_writes() -> None:
    sys.path.insert(0, str(REAL))
    try:
        import make_questions
    finally:
        sys.path.remove(str(REAL))
    written = [json.loads(line) for line in (REAL / "questions.jsonl").read_text().splitlines()]
    assert make_questions.build() == written
