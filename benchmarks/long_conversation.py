"""Twelve questions in one conversation against a small context window, then the first
answer asked for again: are the answers right, and is the first one still known?

    .venv/bin/python benchmarks/long_conversation.py [--context-window 3000]
        [--site dist/site] [--upstream URL --model NAME] [--out DIR]

One Reckon session (relay, agent worker, browser sandbox, headless Chromium) with
benchmarks/questions/people.csv uploaded, the relay told the model's window is
``--context-window`` tokens (3,000 by default: the conversation outgrows it by the
fourth question, so what is sent must be cut). The expected values are computed here
from the file with the standard library, never written down; answers are scored by
reckon eval's strict form check. The model is Qwen2.5-Coder-1.5B-Instruct under
llama-cpp-python (scripts/local_model.py, started here and stopped at the end) unless
``--upstream`` names a server already running. Prints a markdown table and writes
DIR/long-conversation.json. About 15 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "py"), str(ROOT / "scripts")]

import local_model  # noqa: E402

from reckon.client import Runtime, Session  # noqa: E402
from reckon.eval._answers import appears, matches_expected  # noqa: E402

DATA = ROOT / "benchmarks" / "questions" / "people.csv"
Rows = list[dict[str, str]]


def _num(rows: Rows, column: str) -> list[float]:
    return [float(r[column]) for r in rows]


def _top(counts: dict[str, float]) -> str:
    """The one key with the largest value (a tie would make the question ambiguous)."""
    best = max(counts.values())
    keys = [k for k, v in counts.items() if v == best]
    if len(keys) != 1:
        raise SystemExit(f"the data gives a tie ({keys}): the question would be ambiguous")
    return keys[0]


def _mean_by(rows: Rows, key: str, column: str) -> dict[str, float]:
    groups: defaultdict[str, list[float]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(float(r[column]))
    return {k: statistics.mean(v) for k, v in groups.items()}


# (question, the form's name, how the value is computed from the rows)
QUESTIONS: list[tuple[str, str, Callable[[Rows], str]]] = [
    ("What is the mean age, rounded to 2 decimals?", "mean_age",
     lambda r: f"{statistics.mean(_num(r, 'age')):.2f}"),
    ("How many people live in Berlin?", "count",
     lambda r: str(sum(x["city"] == "Berlin" for x in r))),
    ("What is the highest salary?", "max_salary", lambda r: f"{max(_num(r, 'salary')):.0f}"),
    ("Which department has the most people?", "department",
     lambda r: _top(dict(Counter(x["department"] for x in r)))),
    ("What is the median of the years column?", "median_years",
     lambda r: f"{statistics.median(_num(r, 'years')):g}"),
    ("What is the total salary of the Engineering department?", "total",
     lambda r: f"{sum(float(x['salary']) for x in r if x['department'] == 'Engineering'):.0f}"),
    ("What is the name of the youngest person?", "name",
     lambda r: min(r, key=lambda x: float(x["age"]))["name"]),
    ("How many people earn more than 70000?", "count",
     lambda r: str(sum(float(x["salary"]) > 70000 for x in r))),
    ("What is the mean salary of the people in Berlin, rounded to 2 decimals?", "mean_salary",
     lambda r: f"{statistics.mean(float(x['salary']) for x in r if x['city'] == 'Berlin'):.2f}"),
    ("Which city has the highest mean salary?", "city",
     lambda r: _top(_mean_by(r, "city", "salary"))),
    ("How many years has the oldest person worked (the years column)?", "years",
     lambda r: max(r, key=lambda x: float(x["age"]))["years"]),
    ("What is the difference between the highest and the lowest salary?", "range",
     lambda r: f"{max(_num(r, 'salary')) - min(_num(r, 'salary')):.0f}"),
]  # fmt: skip
RECALL = "What was your answer to my first question in this conversation? Answer as @first[value]."


@contextlib.contextmanager
def _upstream(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with local_model.serving() as started:
        yield started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    parser.add_argument("--upstream", help="a model server already running (base URL .../v1)")
    parser.add_argument("--model", default=local_model.MODEL_NAME)
    parser.add_argument("--context-window", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    with DATA.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    asks = [
        (f"{q} Answer as @{form}[value].", form, compute(rows)) for q, form, compute in QUESTIONS
    ]
    results: list[dict[str, Any]] = []
    with _upstream(args.upstream) as url:
        runtime = Runtime(args.site, upstream=url, model=args.model,
                          context_window=args.context_window)  # fmt: skip
        try:
            with Session.on(runtime, model=args.model, ask_timeout_s=900) as session:
                session.upload(str(DATA))
                first = asks[0][2]
                for question, form, expected in [*asks, (RECALL, "first", first)]:
                    started = time.monotonic()
                    outcome = session.ask(question)
                    answer = str(outcome.get("answer") or "")
                    right = matches_expected(f"@{form}[{expected}]", answer, strict=True)
                    # The value anywhere in the answer, under any name: a recall can be
                    # known but written under the first question's form.
                    value = appears(str(expected), answer)
                    results.append({"question": question, "expected": expected, "answer": answer,
                                    "status": outcome.get("status"), "right": right,
                                    "value_right": value,
                                    "seconds": round(time.monotonic() - started, 1)})  # fmt: skip
                    print(f"{'right' if right else 'WRONG'} {results[-1]['seconds']:>6} s "
                          f"{question[:60]!r} -> {answer[-80:]!r}", flush=True)  # fmt: skip
        finally:
            runtime.close()
    table = _table(results, args.context_window)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"context_window": args.context_window, "model": args.model, "results": results}
    (args.out / "long-conversation.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


def _table(results: list[dict[str, Any]], window: int) -> str:
    lines = ["| # | question | expected | right | s |", "|---|---|---|---|---|"]
    for n, r in enumerate(results, start=1):
        lines.append(f"| {n} | {r['question']} | {r['expected']} | {'yes' if r['right'] else 'no'} "
                     f"| {r['seconds']} |")  # fmt: skip
    right = sum(r["right"] for r in results[:-1])
    last = results[-1] if results else {}
    known = "yes" if last.get("right") else "no"
    if not last.get("right") and last.get("value_right"):
        known += " (its value is in the answer, under another form)"
    median = statistics.median(r["seconds"] for r in results) if results else 0
    lines.append(f"\n{right}/{len(results) - 1} right in a {window}-token window; the first "
                 f"answer known at the end: {known}; median {median:.1f} s an ask.")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
