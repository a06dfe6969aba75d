"""Reckon against the simplest CodeAct loop, with a real local model, in one run.

    .venv/bin/python benchmarks/real_model.py [--questions PATH] [--limit N]
        [--only auto,tools,code,baseline,plain] [--out DIR] [--site dist/site]
        [--upstream URL --model NAME --context-window N] [--join DIR ...]

Three systems answer the same questions (default: benchmarks/questions/real, 34
questions over messy public files) with the same model, one after the other:

1. Reckon, tools mode: ``reckon eval --tools on`` (relay, agent worker, browser
   sandbox, headless Chromium), one run per question;
2. Reckon, fenced-code mode: the same with ``--tools off``;
3. the baseline (benchmarks/codeact_baseline.py): the same system prompt as mode 2,
   exec on CPython, nothing else;
4. ``plain``, the model alone: the question, one reply, no code (for questions without
   files, such as benchmarks/questions/math).

The model is Qwen2.5-Coder-1.5B-Instruct under llama-cpp-python
(scripts/local_model.py, started here and stopped at the end), unless ``--upstream``
names a server already running. All systems are scored by reckon eval's own functions
(``summarize``): accuracy (strict: the @name[value] form the question asks for;
lenient: the values anywhere), execution success (every code step ran without error),
grounded answers (every number traced to a step's output; and of the first answer the
model gave, before a recheck sent it back), median seconds per question.
Prints one markdown table and writes DIR/results.json (the table, per-question
results of each system) and DIR/table.md; Reckon's own reports are in DIR/auto,
DIR/tools and DIR/code. The model takes 20-60 s per question on a 2-core machine: the full set
runs for hours.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "py"), str(ROOT / "scripts"), str(ROOT / "benchmarks")]

import local_model  # noqa: E402

import codeact_baseline  # noqa: E402
from reckon.eval._eval import RunRecord, summarize  # noqa: E402
from reckon.eval._questions import Question, load_questions  # noqa: E402

DEFAULT_QUESTIONS = ROOT / "benchmarks" / "questions" / "real" / "questions.jsonl"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "real-model"
Report = dict[str, Any]  # report.json of reckon eval, or the same shape
SYSTEMS = {
    "auto": "Reckon (auto, the default)",
    "tools": "Reckon (tools)",
    "code": "Reckon (code blocks)",
    "baseline": "baseline",
    "plain": "the model alone",
}
# What each Reckon system passes as ``reckon eval --tools``.
TOOL_MODES = {"auto": "auto", "tools": "on", "code": "off"}
COLUMNS = [
    "accuracy (strict)",
    "accuracy (lenient)",
    "execution success",
    "grounded answers",
    "grounded first answers",
    "median s/question",
    "questions",
]


def subset(questions_file: Path, limit: int | None, out: Path) -> Path:
    """The question file to run: the whole file, or its first ``limit`` questions written
    to ``out`` with absolute file paths (they are relative to the file's folder)."""
    if limit is None:
        return questions_file
    base = questions_file.parent
    lines = [
        json.loads(line)
        for line in questions_file.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("//")
    ]
    chosen = [
        {**q, "files": [str((base / f).resolve()) for f in q.get("files", [])]}
        for q in lines[:limit]
    ]
    target = out / "questions.jsonl"
    target.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in chosen))
    return target


def run_reckon(mode: str, questions: Path, args: argparse.Namespace, url: str, out: Path) -> Report:
    """``reckon eval`` in a subprocess; its report.json."""
    folder = out / mode
    cmd = [
        str(ROOT / ".venv" / "bin" / "reckon"),
        "eval",
        str(questions),
        "--upstream",
        url,
        "--model",
        args.model,
        "--tools",
        TOOL_MODES[mode],
        "--context-window",
        str(args.context_window),
        "--repeat",
        "1",
        "--site",
        str(args.site),
        "--out",
        str(folder),
    ]
    print(f"[real-model] {SYSTEMS[mode]}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    code = subprocess.call(cmd, cwd=ROOT)
    if code != 0:
        raise SystemExit(f"[real-model] reckon eval --tools {mode} exited with {code}")
    report: dict[str, Any] = json.loads((folder / "report.json").read_text())
    return report


def run_baseline(
    questions: list[Question], url: str, model: str, site: Path, out: Path, *, plain: bool = False
) -> Report:
    """The CodeAct loop over every question (``plain``: the model alone, one reply, no
    code); a report shaped like reckon eval's, written to ``out``/<system>/report.json
    after each question (a crash keeps what ran)."""
    system = "plain" if plain else "baseline"
    info = site / "build-info.json"
    # The sandbox's Python and packages, so the prompt is Reckon's to the letter.
    build = json.loads(info.read_text()) if info.is_file() else {}
    python = str(build.get("python") or platform.python_version())
    packages = [str(p) for p in (build.get("sandbox") or {}).get("all_packages") or []]
    records: list[RunRecord] = []
    with httpx.Client() as client:
        for number, question in enumerate(questions, start=1):
            record = (
                codeact_baseline.ask_plain(client, url, model, question)
                if plain
                else codeact_baseline.ask(
                    client, url, model, question, python=python, packages=packages
                )
            )
            records.append(record)
            verdict = "correct" if record.correct else "WRONG"
            print(
                f"[{system} {number}/{len(questions)}] {question.id}: {record.status}, "
                f"{verdict}, {record.steps} steps, {record.seconds:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            report = {"summary": summarize(questions[:number], records),
                      "runs": [r.as_dict() for r in records]}  # fmt: skip
            (out / system).mkdir(exist_ok=True)
            (out / system / "report.json").write_text(json.dumps(report, indent=1))
    return {"summary": summarize(questions, records), "runs": [r.as_dict() for r in records]}


def table_row(name: str, summary: dict[str, Any]) -> list[str]:
    def percent(key: str) -> str:
        rate = summary.get(key)
        return "n/a" if rate is None else f"{rate:.0%}"

    median = summary.get("median_seconds_per_run")
    return [
        name,
        percent("answer_accuracy"),
        percent("answer_accuracy_lenient"),
        percent("execution_success_rate"),
        percent("grounded_answer_rate"),
        percent("grounded_first_answer_rate"),
        "n/a" if median is None else f"{median:.1f}",
        str(summary.get("questions")),
    ]


def markdown(rows: list[list[str]]) -> str:
    lines = ["| system | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def by_tier(questions: list[Question], reports: dict[str, Report]) -> str:
    """Strict accuracy per difficulty (the question id's prefix)."""
    order = ["easy", "medium", "hard"]
    found = {q.id.split("-", 1)[0] for q in questions}
    tiers = sorted(found, key=lambda t: (order.index(t) if t in order else len(order), t))
    lines = ["| system | " + " | ".join(tiers) + " |", "|---" * (len(tiers) + 1) + "|"]
    for key, report in reports.items():
        cells = []
        for tier in tiers:
            runs = [r for r in report["runs"] if str(r["question_id"]).startswith(f"{tier}-")]
            cells.append(f"{sum(r['correct'] for r in runs)}/{len(runs)}")
        lines.append(f"| {SYSTEMS[key]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def finished(folder: Path, questions: int, reuse: bool) -> Report | None:
    """A report made before in ``folder`` that covers all ``questions``, if asked to reuse."""
    path = folder / "report.json"
    if not reuse or not path.exists():
        return None
    report: Report = json.loads(path.read_text())
    return report if len(report.get("runs", [])) >= questions else None


def joined(folders: list[Path], system: str, questions: list[Question]) -> Report:
    """One report from the parts' reports of ``system``, summarized over ``questions``."""
    names = {f.name for f in fields(RunRecord)}
    reports = [json.loads((folder / system / "report.json").read_text()) for folder in folders]
    runs = [run for report in reports for run in report["runs"]]
    records = [RunRecord(**{k: v for k, v in run.items() if k in names}) for run in runs]
    return {"summary": summarize(questions, records), "runs": runs}


@contextlib.contextmanager
def model_server(args: argparse.Namespace) -> Iterator[str]:
    if args.upstream:
        yield args.upstream
        return
    with local_model.serving() as url:
        yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--limit", type=int, help="only the first N questions (a quick check)")
    parser.add_argument(
        "--only", default="auto,tools,code,baseline", help="systems to run, in order"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    parser.add_argument("--upstream", help="a model server already running (base URL .../v1)")
    parser.add_argument("--model", default=local_model.MODEL_NAME)
    parser.add_argument("--context-window", type=int, default=local_model.CONTEXT_TOKENS)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="take a system's report from DIR/<system>/report.json when it covers every "
        "question (to join runs made side by side against two model servers)",
    )
    parser.add_argument(
        "--join",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="run nothing: join the reports of runs made side by side over parts of the "
        "question file (DIR/<system>/report.json), scored over the whole file",
    )
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if not only or set(only) - set(SYSTEMS):
        parser.error(f"--only takes a comma-separated list of {', '.join(SYSTEMS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    questions_file = subset(args.questions.resolve(), args.limit, args.out)
    questions = load_questions(questions_file)
    started, clock = datetime.now(UTC), time.monotonic()
    reports: dict[str, Report] = {}
    if args.join:
        done = {k: joined(args.join, k, questions) for k in only}
    else:
        done = {k: r for k in only if (r := finished(args.out / k, len(questions), args.reuse))}
    with model_server(args) if len(done) < len(only) else contextlib.nullcontext("") as url:
        for key in only:
            if key in done:
                how = "joined from the parts" if args.join else f"reused {args.out / key}"
                print(f"[real-model] {SYSTEMS[key]}: {how}", file=sys.stderr)
                reports[key] = done[key]
            elif key in ("baseline", "plain"):
                reports[key] = run_baseline(
                    questions, url, args.model, args.site, args.out, plain=key == "plain"
                )
            else:
                reports[key] = run_reckon(key, questions_file, args, url, args.out)
    rows = [table_row(SYSTEMS[k], r["summary"]) for k, r in reports.items()]
    table = markdown(rows)
    tiers = by_tier(questions, reports)
    setup = {
        "questions_file": str(args.questions),
        "limit": args.limit,
        "model": args.model,
        "context_window": args.context_window,
        "started": started.isoformat(timespec="seconds"),
        "wall_seconds": round(time.monotonic() - clock, 1),
        "cpus": os.cpu_count(),
    }
    results = {
        "setup": setup,
        "columns": ["system", *COLUMNS],
        "table": rows,
        "summaries": {k: r["summary"] for k, r in reports.items()},
        "runs": {k: r["runs"] for k, r in reports.items()},
    }
    (args.out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    (args.out / "table.md").write_text(f"{table}\n\nStrict accuracy by difficulty:\n\n{tiers}\n")
    print(f"{table}\n\nStrict accuracy by difficulty:\n\n{tiers}")
    print(f"\n[real-model] results: {args.out / 'results.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
