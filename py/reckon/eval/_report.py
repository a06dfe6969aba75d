"""``report.json`` (everything, as data) and ``report.md`` (the same, for people).

report.md quotes the model: its answers, step prose, code and outputs, which may copy
text from an uploaded file. None of it may render as HTML or a link where the report
is read (GitHub, an editor's preview), so each piece goes through
``_inert_markdown``: prose stays Markdown without anything live, one-line values are
literal text, and code and outputs are fenced by a run longer than any inside them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reckon.agent.export._inert_markdown import fenced, inert_markdown, markdown_line
from reckon.eval._eval import RunRecord
from reckon.eval._questions import Question

__all__ = ["build_report", "write_report"]

_TEXT_LIMIT = 2000  # characters of stdout/traceback per step in report.md


def build_report(
    questions: list[Question],
    records: list[RunRecord],
    summary: dict[str, Any],
    *,
    setup: dict[str, Any],
) -> dict[str, Any]:
    """The whole report as one JSON-ready dict."""
    by_id = {q.id: q for q in questions}
    failures = [
        {
            "question_id": r.question_id,
            "attempt": r.attempt,
            "reasons": _reasons(r),
            "question": by_id[r.question_id].question,
            "answer": r.answer,
            "transcript": r.steps_detail,
        }
        for r in records
        if not (r.correct and r.executed)
    ]
    return {
        "version": 1,
        "setup": setup,
        "summary": summary,
        "questions": [
            {
                "id": q.id,
                "question": q.question,
                "files": [p.name for p in q.files],
                "expected": q.expected,
                "check": q.check,
            }
            for q in questions
        ],
        "runs": [{k: v for k, v in r.as_dict().items() if k != "steps_detail"} for r in records],
        "failures": failures,
    }


def _reasons(record: RunRecord) -> list[str]:
    reasons = []
    if record.status != "ok":
        reasons.append(f"ask ended with status {record.status}: {record.message or ''}".strip())
    elif not record.correct:
        reasons.append("wrong answer" + (f" ({record.check_error})" if record.check_error else ""))
    if record.status == "ok" and not record.computed:
        reasons.append("no code ran")
    if record.ungrounded:
        reasons.append(f"not computed by any step: {', '.join(record.ungrounded)}")
    if record.retries:
        reasons.append(f"{record.retries} code step(s) failed")
    return reasons


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


def _on_host(report: dict[str, Any]) -> bool:
    """Whether the exported notebooks also ran on this machine's CPython."""
    runs = report["runs"]
    return bool(report["setup"].get("reproduce_on_host")) or any(
        r.get("cpython_cells") or r.get("cpython_error") for r in runs
    )


def _markdown(report: dict[str, Any]) -> str:
    setup, summary = report["setup"], report["summary"]
    host = _on_host(report)
    cpython = (
        _percent(summary.get("reproducibility_vs_cpython"))
        if host
        else "not run (opt-in: --reproduce-on-host runs the code outside the sandbox)"
    )
    lines = [
        "# Reckon evaluation",
        "",
        f"- questions: {markdown_line(str(setup['questions_file']))} "
        f"({summary['questions']} questions, "
        f"{setup['repeat']} run(s) each, {summary['runs']} runs)",
        f"- model: {markdown_line(str(setup['model']))}"
        + (f" via {markdown_line(str(setup['upstream']))}" if setup["upstream"] else ""),
        f"- started: {setup['started']}, took {setup['wall_seconds']:.0f} s",
        "",
        "| measure | value |",
        "|---|---|",
        f"| execution success rate | {_percent(summary['execution_success_rate'])} |",
        f"| answer accuracy (strict: @name[value] as asked) | "
        f"{_percent(summary['answer_accuracy'])} |",
        f"| answer accuracy (lenient: values anywhere) | "
        f"{_percent(summary.get('answer_accuracy_lenient'))} |",
        f"| correct and computed by code | {_percent(summary.get('correct_and_computed'))} |",
        f"| grounded answers (every number traced to a step) | "
        f"{_percent(summary.get('grounded_answer_rate'))} |",
        "| grounded first answers (before a recheck sent any back) | "
        f"{_percent(summary.get('grounded_first_answer_rate'))} |",
        f"| reproducibility | {_percent(summary['reproducibility'])} |",
        "| reproducibility in a fresh sandbox (exported notebook cells that match) | "
        f"{_percent(summary.get('reproducibility_in_fresh_sandbox'))} |",
        f"| reproducibility vs CPython (exported notebook cells that match) | {cpython} |",
        f"| asks completed | {_percent(summary['completion_rate'])} |",
        f"| mean steps per run | {summary['mean_steps']} |",
        f"| retries (failed code steps) | {summary['total_retries']} |",
        f"| mean seconds per ask | {summary['mean_seconds_per_run']} |",
        f"| median seconds per ask | {summary.get('median_seconds_per_run')} |",
        f"| mean seconds to start a session | {summary['mean_setup_seconds']} |",
        "",
        "Definitions: docs/evaluation.md.",
        "",
        "## Per question",
        "",
        "| id | correct | executed | reproducible | fresh sandbox match "
        + ("| CPython match " if host else "")
        + "| steps | retries | seconds |",
        "|---|---|---|---|---|" + ("---|" if host else "") + "---|---|---|",
    ]
    for row in summary["per_question"]:
        same = {True: "yes", False: "no", None: "n/a"}[row["reproducible"]]
        lines.append(
            f"| {markdown_line(str(row['id']))} | {row['correct']}/{row['runs']} "
            f"| {row['executed']}/{row['runs']} "
            f"| {same} | {_percent(row.get('fresh'))} "
            + (f"| {_percent(row.get('cpython'))} " if host else "")
            + f"| {_join(row['steps'])} | {_join(row['retries'])} | {_join(row['seconds'])} |"
        )
    lines += _differences_section(report["runs"], "fresh")
    if host:
        lines += _differences_section(report["runs"], "cpython")
    lines += _verification_section(summary.get("verification"))
    lines += ["", f"## Failures ({len(report['failures'])})", ""]
    if not report["failures"]:
        lines.append("None.")
    for failure in report["failures"]:
        lines += _failure(failure)
    return "\n".join(lines) + "\n"


def _verification_section(stats: dict[str, Any] | None) -> list[str]:
    if not stats:
        return []
    return [
        "",
        "## Verification (--verify)",
        "",
        f"{stats['checked']} answers checked by a second route: {stats['confirmed']} confirmed, "
        f"{stats['disagrees']} disagree, {stats['unavailable']} unavailable.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| confirms correct answers | {_percent(stats['confirms_correct'])} |",
        f"| catches wrong answers | {_percent(stats['catches_wrong'])} |",
        f"| flags correct answers (false alarms) | {_percent(stats['false_alarms'])} |",
    ]


_RERUN_NAMES = {"fresh": "in a fresh sandbox", "cpython": "on CPython"}


def _differences_section(runs: list[dict[str, Any]], rerun: str) -> list[str]:
    """Each exported cell whose output, run again ``rerun`` ("fresh": in a fresh
    browser sandbox; "cpython": on this machine's CPython), differed, and why."""
    name = _RERUN_NAMES[rerun]
    lines = ["", f"## Differences {name}", ""]
    found = False
    for run in runs:
        where = f"{markdown_line(str(run['question_id']))}, run {run['attempt']}"
        if run.get(f"{rerun}_error"):
            error = markdown_line(str(run[f"{rerun}_error"]))
            lines.append(f"- {where}: could not be run {name}: {error}")
            found = True
        for item in run.get(f"{rerun}_differences") or []:
            cell, output, why = (markdown_line(str(item[k])) for k in ("cell", "output", "why"))
            lines.append(f"- {where}, cell {cell} ({output}): {why}")
            found = True
    if not found:
        lines.append(f"None: every exported cell gave the same output {name}.")
    return lines


def _join(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values)


def _failure(failure: dict[str, Any]) -> list[str]:
    head = f"{markdown_line(str(failure['question_id']))}, run {failure['attempt']}"
    lines = [
        f"### {head}: {markdown_line('; '.join(failure['reasons']))}",
        "",
        f"**Question:** {markdown_line(str(failure['question']))}",
        "",
        "**Answer:**",
        "",
        _fenced(failure["answer"] or "(none)", ""),
    ]
    for step in failure["transcript"]:
        kind = markdown_line(str(step.get("kind")))
        prose = inert_markdown(str(step.get("text") or ""))
        lines.append(f"Step {markdown_line(str(step.get('index')))} ({kind}): {prose}")
        lines.append("")
        if step.get("code"):
            lines.append(_fenced(step["code"], "python"))
        result = step.get("result") or {}
        if result:
            lines.append(f"status: {markdown_line(str(result.get('status')))}")
            lines.append("")
            output = (result.get("stdout") or "") + (result.get("stderr") or "")
            error = result.get("error") or {}
            if error.get("traceback"):
                output += error["traceback"]
            if output.strip():
                lines.append(_fenced(output[:_TEXT_LIMIT], "text"))
    return lines


def _fenced(text: str, language: str) -> str:
    # After a blank line (the caller's), and followed by one: a block of its own.
    return fenced(str(text), language) + "\n"


def write_report(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.md`` into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "report.json", out / "report.md"
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(_markdown(report), encoding="utf-8")
    return json_path, md_path
