"""``reckon eval``'s engine: every question through the real product path, as data.

Each run is a fresh session (a fresh browser context: its own sandbox, agent
and files) on one shared relay and Chromium, so runs cannot leak state into
each other, and only the browser start-up is shared.

Definitions (also in docs/evaluation.md):

- a run **executed** when its ask ended with status ``ok``, at least one code step
  ran, and every code step's result had status ``ok`` (no error, timeout or
  interrupt, even one the model then fixed; those are counted as retries); an
  answer with no code at all did not execute anything;
- a run is **correct** when its ask ended ``ok`` and the answer matches
  ``expected`` or makes ``check`` true; when the question asks for the
  ``@name[value]`` form, the answer must use it (strict);
  **correct (lenient)** also accepts the expected values anywhere in the prose;
- a run is **computed** when at least one of its code steps succeeded;
- a run's answer is **grounded** when every number in it is traced to a step's
  output (``reckon.agent`` grounding); **ungrounded** lists the numbers that were not;
- a question is **reproducible** when all its runs gave the same normalized
  answer (``normalized_answer``: the @name[value] pairs, else the numbers);
- **retries** are code steps that failed, each of which sent the traceback back;
- with ``--verify``, **confirms correct** is the share of correct runs whose check
  (the key number recomputed another way) agreed, **catches wrong** the share of
  ask-ok-but-wrong runs whose check disagreed;
- **reproducibility in a fresh sandbox**: each completed run's exported notebook is
  run again in a fresh browser sandbox (a new session with only the same files, each
  code cell through the page's ``run``: ``reproduce_in_sandbox``); the share of its
  code cells whose outputs all match what the session showed;
- **reproducibility vs CPython** (only with ``reproduce_on_host``, the CLI's
  ``--reproduce-on-host``): the same on plain CPython on this machine
  (``reproduce_notebook``), which runs the model's code outside any sandbox, with
  this machine's network and files. Never by default.

A run's record and whether its answer is correct are in ``_record``; the headline
numbers over all runs, in ``_summary``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import suppress

from reckon._exceptions import SessionError
from reckon.client._session import Runtime, Session
from reckon.eval._answers import normalized_answer
from reckon.eval._questions import Question
from reckon.eval._record import RunRecord, _is_correct, _slim
from reckon.eval._summary import summarize
from reckon.reproduce import reproduce_in_sandbox, reproduce_notebook

__all__ = ["RunRecord", "evaluate", "run_question", "summarize"]


def run_question(
    runtime: Runtime,
    question: Question,
    attempt: int,
    *,
    model: str | None,
    verify: bool = False,
    reproduce_on_host: bool = False,
) -> RunRecord:
    """Ask ``question`` once, in a fresh session; never raises for a failed run.

    A completed run's exported notebook is run again in another fresh session's
    sandbox; with ``reproduce_on_host`` also on this machine's CPython (outside any
    sandbox: the model's code gets this machine's network and files).
    """
    record = RunRecord(question.id, attempt, "session-error")
    started = time.monotonic()
    session: Session | None = None
    notebook: str | None = None
    try:
        session = Session.on(runtime, model=model)
        for path in question.files:
            session.upload(path)
        asked = time.monotonic()
        record.setup_seconds = round(asked - started, 3)
        outcome = session.ask(question.question, verify=verify)
        record.seconds = round(time.monotonic() - asked, 3)
        if outcome.get("status") == "ok":
            try:
                notebook = session.export_notebook()
            except SessionError as exc:  # the run stands; only its reproduction is missing
                record.fresh_error = f"the notebook could not be exported: {exc}"
                if reproduce_on_host:
                    record.cpython_error = record.fresh_error
    except SessionError as exc:
        record.message = str(exc)
        record.seconds = round(time.monotonic() - started, 3)
        return record
    finally:
        if session is not None:
            session.close()
    if notebook is not None:
        _reproduce_in_sandbox(record, runtime, notebook, question)
        if reproduce_on_host:
            _reproduce_on_host(record, notebook, question)
    steps = [s for s in outcome.get("steps") or [] if isinstance(s, dict)]
    # The model's cells: a table Reckon loaded for it (origin "reckon") is not its work.
    code = [s for s in steps if s.get("kind") == "code" and s.get("origin") != "reckon"]
    failed = [s for s in code if (s.get("result") or {}).get("status") != "ok"]
    record.status = str(outcome.get("status"))
    record.answer = str(outcome.get("answer") or "")
    record.message = outcome.get("message")
    record.model = outcome.get("model")
    record.steps, record.code_steps, record.retries = len(steps), len(code), len(failed)
    record.executed = record.status == "ok" and bool(code) and not failed
    record.computed = any((s.get("result") or {}).get("status") == "ok" for s in code)
    grounding = outcome.get("grounding")
    grounding = grounding if isinstance(grounding, dict) else {}
    record.ungrounded = [str(n) for n in grounding.get("ungrounded") or []]
    record.grounded = record.status == "ok" and not record.ungrounded
    said = [s for s in steps if s.get("kind") in ("recheck", "answer") and not s.get("phase")]
    first = said[0].get("grounding") if said else None
    record.first_grounded = (
        record.status == "ok" and isinstance(first, dict) and not first.get("ungrounded")
    )
    if record.status == "ok":
        record.correct, record.check_error = _is_correct(question, record.answer)
        record.correct_lenient, _ = _is_correct(question, record.answer, strict=False)
    if verify and isinstance(outcome.get("verification"), dict):
        record.verification = str(outcome["verification"].get("status"))
    record.normalized = normalized_answer(record.answer)
    record.steps_detail = [_slim(s) for s in steps]
    return record


def _reproduce_in_sandbox(
    record: RunRecord, runtime: Runtime, notebook: str, question: Question
) -> None:
    """Run the exported notebook again in a fresh session's sandbox (nothing from the
    asked session, only the question's files); a failure is reported, not raised."""
    fresh: Session | None = None
    try:
        fresh = Session.on(runtime)
        report = reproduce_in_sandbox(fresh, notebook, question.files)
    except (SessionError, OSError) as exc:
        record.fresh_error = str(exc)
        return
    finally:
        if fresh is not None:
            with suppress(SessionError):  # the measurement stands; the context goes later
                fresh.close()
    record.fresh_cells, record.fresh_matched = report["cells"], report["matched"]
    record.fresh_differences = report["differences"]


def _reproduce_on_host(record: RunRecord, notebook: str, question: Question) -> None:
    """Run the exported notebook on this machine's CPython, outside any sandbox (only
    when asked: ``--reproduce-on-host``); a failure to do so is reported, not raised."""
    try:
        report = reproduce_notebook(notebook, question.files)
    except (SessionError, OSError) as exc:
        record.cpython_error = str(exc)
        return
    record.cpython_cells, record.cpython_matched = report["cells"], report["matched"]
    record.cpython_differences = report["differences"]


def evaluate(
    runtime: Runtime,
    questions: list[Question],
    *,
    model: str | None = None,
    repeat: int = 2,
    verify: bool = False,
    reproduce_on_host: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[RunRecord]:
    """Every question ``repeat`` times (all first runs, then all second runs, so a
    flaky minute of the machine does not hit both runs of one question).

    ``reproduce_on_host`` also runs each exported notebook on this machine's CPython,
    outside any sandbox (see ``run_question``); off by default."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    records: list[RunRecord] = []
    total = len(questions) * repeat
    for attempt in range(1, repeat + 1):
        for question in questions:
            record = run_question(
                runtime,
                question,
                attempt,
                model=model,
                verify=verify,
                reproduce_on_host=reproduce_on_host,
            )
            records.append(record)
            verdict = "correct" if record.correct else "WRONG"
            say(
                f"[{len(records)}/{total}] {question.id} run {attempt}: {record.status}, "
                f"{verdict}, {record.steps} steps, {record.seconds:.1f} s"
            )
    return records
