"""``reckon eval QUESTIONS.jsonl``: run a question set through the product, write a report.

Exit codes: 0 when the evaluation ran (whatever the answers were), 2 when it
could not start (bad flags, a bad question file, no built site, no Chromium),
each with one line on stderr that says what to fix.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

from reckon._exceptions import ConfigError, SessionError
from reckon.agent.demo import DEMO_MODEL

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message} (see 'reckon eval --help')")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="reckon eval",
        description="Ask every question of a JSONL file through Reckon (relay, agent, browser "
        "sandbox, headless Chromium), each in a fresh session, and write report.md and "
        "report.json.",
    )
    add = parser.add_argument
    add("questions", metavar="QUESTIONS.jsonl", help="one JSON object a line (docs/evaluation.md)")
    add("--model", metavar="NAME", help=f"model to ask (default: {DEMO_MODEL}, or the upstream's)")
    add("--upstream", metavar="URL", help="OpenAI-compatible base URL (default: the demo model)")
    add("--key-env", metavar="NAME", help="env var holding the upstream's API key")
    add(
        "--tools",
        choices=["auto", "on", "off"],
        default="auto",
        help="offer the upstream tools (auto: detect; off: the model writes code blocks)",
    )
    add("--context-window", type=int, metavar="TOKENS", help="the upstream's context window")
    add("--site", metavar="PATH", default="dist/site", help="the built site (default dist/site)")
    add(
        "--out", metavar="DIR", default="eval-report", help="report directory (default eval-report)"
    )
    add("--repeat", type=int, default=2, help="runs per question (default 2, for reproducibility)")
    add("--chromium", metavar="PATH", help="Chromium executable (default: chromium on PATH)")
    add(
        "--verify",
        action="store_true",
        help="check each answer by a second route (docs/control.md)",
    )
    add(
        "--reproduce-on-host",
        action="store_true",
        help="also run each exported notebook on this machine's CPython, OUTSIDE the sandbox: "
        "the model's code gets your network and your files (default: only a fresh browser "
        "sandbox re-runs it)",
    )
    return parser


HOST_WARNING = (
    "reckon eval: WARNING: --reproduce-on-host runs the code the model wrote on this "
    "machine, in plain CPython outside the browser sandbox, as you: it can use your network "
    "and read, change or send your files. Use it only with a model and question files you "
    "trust, or inside a container or VM with no network and nothing of yours in it."
)


def _run(argv: list[str]) -> int:
    from reckon.client._session import Runtime
    from reckon.eval._eval import evaluate, summarize
    from reckon.eval._questions import load_questions
    from reckon.eval._report import build_report, write_report

    args = _parser().parse_args(argv)
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    if not args.upstream and args.model not in (None, DEMO_MODEL):
        raise ConfigError(f"--model {args.model} needs --upstream URL (without it: {DEMO_MODEL})")
    if args.key_env and not args.upstream:
        raise ConfigError("--key-env needs --upstream URL")
    questions_file = Path(args.questions)
    questions = load_questions(questions_file)
    model = args.model or (None if args.upstream else DEMO_MODEL)
    if args.reproduce_on_host:
        print(HOST_WARNING, file=sys.stderr, flush=True)

    started, clock = datetime.now(UTC), time.monotonic()
    runtime = Runtime(
        args.site,
        upstream=args.upstream,
        model=args.model if args.upstream else None,
        key_env=args.key_env,
        chromium=args.chromium,
        tools=args.tools,
        context_window=args.context_window,
    )
    try:
        records = evaluate(
            runtime,
            questions,
            model=model,
            repeat=args.repeat,
            verify=args.verify,
            reproduce_on_host=args.reproduce_on_host,
        )
    finally:
        runtime.close()
    answered_by = next((r.model for r in records if r.model), None)
    setup = {
        "questions_file": str(questions_file),
        "model": answered_by or model or "(relay default)",
        "upstream": args.upstream,
        "tools": args.tools,
        "repeat": args.repeat,
        "verify": args.verify,
        "reproduce_on_host": args.reproduce_on_host,
        "started": started.isoformat(timespec="seconds"),
        "wall_seconds": round(time.monotonic() - clock, 1),
    }
    summary = summarize(questions, records)
    report = build_report(questions, records, summary, setup=setup)
    json_path, md_path = write_report(report, Path(args.out))
    print(
        f"accuracy {summary['answer_accuracy']} (lenient {summary['answer_accuracy_lenient']}), "
        f"grounded {summary['grounded_answer_rate']}, execution success "
        f"{summary['execution_success_rate']}, reproducibility {summary['reproducibility']}, "
        f"in a fresh sandbox {summary['reproducibility_in_fresh_sandbox']} "
        f"({summary['runs']} runs); report: {md_path} and {json_path}",
        flush=True,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``reckon eval``'s entry point; returns the exit code."""
    try:
        return _run(sys.argv[2:] if argv is None else argv)
    except (ConfigError, SessionError) as exc:
        print(f"reckon eval: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
