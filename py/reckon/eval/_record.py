"""One run of one question as data (``RunRecord``), and whether its answer is correct.

``run_question`` fills a record from what the ask returned; the definitions of its
fields (executed, correct, computed, grounded, retries) are in ``_eval``'s docstring
and docs/evaluation.md.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from reckon.eval._answers import matches_expected, run_check
from reckon.eval._questions import Question

__all__ = ["RunRecord", "_is_correct", "_slim"]

_ASKS_FORMAT = re.compile(r"@[A-Za-z_]\w*\[")


@dataclass
class RunRecord:
    """One run of one question."""

    question_id: str
    attempt: int
    status: str  # the ask's status (ok, error, stopped), or "session-error"
    answer: str = ""
    message: str | None = None
    model: str | None = None
    correct: bool = False
    correct_lenient: bool = False
    executed: bool = False
    computed: bool = False
    grounded: bool = False
    ungrounded: list[str] = field(default_factory=list)
    # The model's first answer, before any recheck sent it back: its numbers all traced.
    first_grounded: bool = False
    steps: int = 0
    code_steps: int = 0
    retries: int = 0
    setup_seconds: float = 0.0
    seconds: float = 0.0
    normalized: str = ""
    check_error: str | None = None
    fresh_cells: int = 0  # the exported notebook, run again in a fresh browser sandbox
    fresh_matched: int = 0
    fresh_differences: list[dict[str, Any]] = field(default_factory=list)
    fresh_error: str | None = None
    cpython_cells: int = 0  # the same on this machine's CPython: only with reproduce_on_host
    cpython_matched: int = 0
    cpython_differences: list[dict[str, Any]] = field(default_factory=list)
    cpython_error: str | None = None
    verification: str | None = None  # with --verify: confirmed, disagrees or unavailable
    steps_detail: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_correct(question: Question, answer: str, *, strict: bool = True) -> tuple[bool, str | None]:
    if question.expected is not None:
        # Strict only where the question itself asks for the @name[value] form.
        strict = strict and bool(_ASKS_FORMAT.search(question.question))
        return matches_expected(question.expected, answer, strict=strict), None
    assert question.check_tree is not None
    try:
        return run_check(question.check_tree, answer), None
    except Exception as exc:  # a check that raises is a wrong answer, with the reason kept
        return False, f"{type(exc).__name__}: {exc}"


def _slim(step: dict[str, Any]) -> dict[str, Any]:
    """A step without figure images (kilobytes of base64 nobody reads in a report)."""
    result = step.get("result")
    if not isinstance(result, dict) or not result.get("figures"):
        return step
    figures = [
        {k: v for k, v in f.items() if k != "png"} | {"png_chars": len(f.get("png") or "")}
        for f in result["figures"]
    ]
    return {**step, "result": {**result, "figures": figures}}
