"""What one answer has done so far: its steps as the page gets them, and the tally the
loop decides by (failures in a row, whether code ran, rechecks sent)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reckon.agent._types import JSONDict

__all__ = ["STOPPED", "Correction", "Progress", "StepLog", "outcome", "sandbox_failed"]

STOPPED = "Stopped by the user."


class StepLog:
    """The steps of one answer, each told to ``on_step`` as it is written down."""

    def __init__(
        self, model: str, *, phase: str = "", on_step: Callable[[JSONDict], None] | None = None
    ) -> None:
        self.steps: list[JSONDict] = []
        self.model = model
        self.phase = phase  # "verify": the check of an answer (kept out of the history)
        self._on_step = on_step
        # The wait for the reply's first token: only its first step waited for it.
        self.first_token_ms: float | None = None

    def add(self, step: JSONDict, started: float) -> None:
        steps = self.steps
        full: JSONDict = {"index": len(steps), "kind": step["kind"], "text": step.get("text", "")}
        full.update({k: v for k, v in step.items() if k not in full})
        full["model"] = self.model
        if self.first_token_ms is not None:
            full["first_token_ms"] = self.first_token_ms
            self.first_token_ms = None
        if self.phase:
            full["phase"] = self.phase
        full["ms"] = round((time.monotonic() - started) * 1000, 1)
        steps.append(full)
        if self._on_step is not None:
            self._on_step(full)


@dataclass(frozen=True)
class Correction:
    """The model's cell with the one number put right, for Reckon to run: ``message``
    goes to the model with the cell's output after it; ``note`` names the step."""

    code: str
    message: str
    note: str


@dataclass
class Progress:
    """The loop's tally for one answer."""

    has_files: bool
    calls: int = 0
    last_text: str = ""  # the model's last words, the answer when it gives up
    last_code: str = ""  # the last cell that ran without error
    failures: int = 0  # in a row
    last_error: str = ""
    ran_code: bool = False
    rechecks: set[str] = field(default_factory=set)  # the kinds already sent back
    correction: Correction | None = None  # a cell Reckon runs before the next call
    draft: str = ""  # what the next call asks in place of the question (``_recheck``)
    printed: str = ""  # the answer a cell printed, taken without a call (``_printed``)
    failed_code: str = ""  # the last cell that failed (a reply may quote it beside its fix)
    # Where in the history the replies of the last two cells that ran without error
    # began: a repeat of a noted cell is cut with the exchange it repeats (``_retry``).
    ok_marks: tuple[int | None, int | None] = (None, None)
    # The run of failures (``_retry``): where in the history it began, its errors, and
    # whether it was started again fresh.
    streak_start: int | None = None
    streak_errors: list[str] = field(default_factory=list)
    restarted: bool = False

    def tally(self, results: list[tuple[str, JSONDict]], *, mark: int | None = None) -> None:
        """Count the cells of one reply (a rejected cell is no failure); ``mark``: the
        history's length before the reply, where a run of failures begins."""
        for code, result in results:
            if result.get("status") == "ok":
                self.failures, self.last_code = 0, code
                if mark is not None and mark != self.ok_marks[1]:
                    self.ok_marks = (self.ok_marks[1], mark)
                self.ran_code = True
                self.streak_start, self.streak_errors, self.restarted = None, [], False
            elif result.get("status") != "rejected":
                self.failures, self.failed_code = self.failures + 1, code
                self.ran_code = True
                self.last_error = _describe_failure(result)
                self.streak_errors.append(self.last_error)
                if self.streak_start is None:
                    self.streak_start = mark


def outcome(status: str, answer: str, steps: list[JSONDict], message: str = "") -> JSONDict:
    """What ``ask`` returns (before usage, records and privacy are added)."""
    result: JSONDict = {"status": status, "answer": answer, "steps": steps}
    if status != "ok":
        result["message"] = message
    return result


def _describe_failure(result: JSONDict) -> str:
    error = result.get("error")
    if isinstance(error, dict):
        kind = error.get("type")
        said = f"{kind}: {error.get('message', '')}" if kind else str(error.get("message", ""))
        return f"{said}; hint: {error['hint']}" if error.get("hint") else said
    return f"the cell ended with status {result.get('status')!r}"


def sandbox_failed(exc: Exception, progress: Progress, log: StepLog, at: float) -> JSONDict:
    """The outcome of an answer the sandbox failed under (our bug, not the cell's)."""
    message = f"The sandbox failed: {exc}"
    log.add({"kind": "error", "text": message}, at)
    return outcome("error", progress.last_text, log.steps, message)
