"""The headline numbers of an evaluation, and one row per question, from its runs.

Rates are over all runs unless said (grounded answers: over the answered ones; the
check's rates: over the runs it checked); a rate with nothing to count is ``None``,
not 0. The definitions are in ``_eval``'s docstring and docs/evaluation.md.
"""

from __future__ import annotations

from typing import Any

from reckon.eval._questions import Question
from reckon.eval._record import RunRecord

__all__ = ["summarize"]


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2, 3)


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def summarize(questions: list[Question], records: list[RunRecord]) -> dict[str, Any]:
    """The headline numbers and one row per question."""
    rows = []
    reproducible = repeated = 0
    for question in questions:
        runs = [r for r in records if r.question_id == question.id]
        same = len(runs) > 1 and len({r.normalized for r in runs}) == 1
        reproducible += same
        repeated += len(runs) > 1
        rows.append(
            {
                "id": question.id,
                "runs": len(runs),
                "correct": sum(r.correct for r in runs),
                "correct_lenient": sum(r.correct_lenient for r in runs),
                "executed": sum(r.executed for r in runs),
                "grounded": sum(r.grounded for r in runs),
                "reproducible": same if len(runs) > 1 else None,
                "steps": [r.steps for r in runs],
                "retries": [r.retries for r in runs],
                "seconds": [r.seconds for r in runs],
                "fresh": _rate(
                    sum(r.fresh_matched for r in runs), sum(r.fresh_cells for r in runs)
                ),
                "cpython": _rate(
                    sum(r.cpython_matched for r in runs), sum(r.cpython_cells for r in runs)
                ),
                "mean_seconds": round(sum(r.seconds for r in runs) / len(runs), 3) if runs else 0,
            }
        )
    total = len(records)
    answered = [r for r in records if r.status == "ok"]
    return {
        "questions": len(questions),
        "runs": total,
        "execution_success_rate": _rate(sum(r.executed for r in records), total),
        "answer_accuracy": _rate(sum(r.correct for r in records), total),
        "answer_accuracy_lenient": _rate(sum(r.correct_lenient for r in records), total),
        "correct_and_computed": _rate(sum(r.correct and r.computed for r in records), total),
        "grounded_answer_rate": _rate(sum(r.grounded for r in answered), len(answered)),
        "grounded_first_answer_rate": _rate(sum(r.first_grounded for r in answered), len(answered)),
        "ungrounded_answer_rate": _rate(sum(bool(r.ungrounded) for r in answered), len(answered)),
        "median_seconds_per_run": _median([r.seconds for r in records]),
        "reproducibility": _rate(reproducible, repeated),
        "reproducibility_in_fresh_sandbox": _rate(
            sum(r.fresh_matched for r in records), sum(r.fresh_cells for r in records)
        ),
        "reproducibility_vs_cpython": _rate(
            sum(r.cpython_matched for r in records), sum(r.cpython_cells for r in records)
        ),
        "completion_rate": _rate(sum(r.status == "ok" for r in records), total),
        "mean_steps": round(sum(r.steps for r in records) / total, 3) if total else None,
        "total_retries": sum(r.retries for r in records),
        "mean_seconds_per_run": round(sum(r.seconds for r in records) / total, 3)
        if total
        else None,
        "mean_setup_seconds": round(sum(r.setup_seconds for r in records) / total, 3)
        if total
        else None,
        "per_question": rows,
        "verification": _verification(records),
    }


def _verification(records: list[RunRecord]) -> dict[str, Any] | None:
    """How often the check confirmed right answers and caught wrong ones (--verify)."""
    checked = [r for r in records if r.verification is not None]
    if not checked:
        return None
    right = [r for r in checked if r.correct]
    wrong = [r for r in checked if not r.correct]
    return {
        "checked": len(checked),
        "confirmed": sum(r.verification == "confirmed" for r in checked),
        "disagrees": sum(r.verification == "disagrees" for r in checked),
        "unavailable": sum(r.verification == "unavailable" for r in checked),
        "confirms_correct": _rate(sum(r.verification == "confirmed" for r in right), len(right)),
        "catches_wrong": _rate(sum(r.verification == "disagrees" for r in wrong), len(wrong)),
        "false_alarms": _rate(sum(r.verification == "disagrees" for r in right), len(right)),
    }
