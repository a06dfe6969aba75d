"""The baseline of benchmarks/real_model.py: the simplest CodeAct loop on CPython.

Same model, same system prompt as Reckon's fenced-code mode (``build_system_prompt``
with ``tools=False``, the files described by ``reckon.kernel.inspect`` as the sandbox
describes them, under /data), and nothing else Reckon does: one chat call at a time
(temperature 0, no streaming), every ```python block of the reply run with ``exec``
in one namespace (``read_table`` and ``run_sql`` pre-loaded, as in the sandbox), what
it printed (or its traceback) sent back as "Output of the code you ran:", until a
reply has no code block; that reply is the answer. No value display of the last
expression, no recovery of malformed replies, no grounding retry, no context fitting.

The files are copied into a temporary folder and the code's '/data' paths are
rewritten to it before ``exec``, so code written for the sandbox runs unchanged.
Scored with reckon eval's own functions (``RunRecord``, ``summarize``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from reckon.agent._observe import OBSERVATION_HEADER
from reckon.agent._prompt import build_system_prompt
from reckon.agent.checks._grounding import ground_answer, step_sources
from reckon.agent.models._code import extract_code_blocks
from reckon.eval._answers import normalized_answer
from reckon.eval._eval import RunRecord, _is_correct
from reckon.eval._questions import Question
from reckon.kernel import inspect, read_table, run_sql

__all__ = ["MAX_CALLS", "Workspace", "ask", "ask_plain", "run_cell", "workspace"]

MAX_CALLS = 12  # model calls per question, as Reckon's agent (max_steps)
CELL_SECONDS = 60  # per cell, as a Reckon session's cell timeout
ASK_SECONDS = 600.0  # per question, as a Reckon session's ask timeout
OUTPUT_LIMIT = 6000  # characters of output sent back, as Reckon's observation limit
_SANDBOX_PATH = re.compile(r"(?<![\w.])/(data|output)(?=[/'\"])")


class Workspace:
    """A question's files in a temporary folder, and how the prompt describes them."""

    def __init__(self, root: Path, files: list[Path], *, python: str, packages: list[str]):
        self.root = root
        (root / "data").mkdir()
        (root / "output").mkdir()
        described = []
        for source in files:
            target = root / "data" / source.name
            shutil.copyfile(source, target)
            entry = json.dumps(inspect(str(target)))
            # The prompt shows sandbox paths: /data/<name>, as Reckon's does.
            described.append(json.loads(entry.replace(f"{root}/data", "/data")))
        self.environment = {
            "python": python,
            "packages": packages,
            "files": described,
            "data_dir": "/data",
            "output_dir": "/output",
        }
        self.system_prompt = build_system_prompt(self.environment, tools=False)
        self.namespace: dict[str, Any] = {
            "__name__": "__main__",
            "read_table": read_table,
            "run_sql": functools.partial(run_sql, data_dir=str(root / "data")),
        }

    def local(self, code: str) -> str:
        """``code`` with its /data and /output paths pointing into this folder."""
        return _SANDBOX_PATH.sub(lambda m: f"{self.root}/{m.group(1)}", code)

    def given(self) -> list[str]:
        """File paths and column names: numbers in them count as given (Agent._ground)."""
        texts = []
        for entry in self.environment["files"]:
            texts.append(str(entry.get("path") or ""))
            for column in entry.get("columns") or []:
                texts.append(str(column.get("name") if isinstance(column, dict) else column))
        return texts


@contextlib.contextmanager
def workspace(files: list[Path], *, python: str, packages: list[str]) -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory(prefix="codeact-") as folder:
        yield Workspace(Path(folder), files, python=python, packages=packages)


class _CellTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _CellTimeout(f"the cell ran longer than {CELL_SECONDS} s and was stopped")


def run_cell(space: Workspace, code: str) -> dict[str, Any]:
    """Run ``code`` in the workspace's namespace: ``{status, stdout}`` (stdout holds what
    was printed, stderr, and the traceback when it failed)."""
    out = io.StringIO()
    status = "ok"
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CELL_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(space.local(code), "<cell>", "exec"), space.namespace)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the model's code failing is data, not our error
        status = "timeout" if isinstance(exc, _CellTimeout) else "error"
        frames = exc.__traceback__.tb_next if exc.__traceback__ else None  # drop our frame
        out.write("".join(traceback.format_exception(type(exc), exc, frames)))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return {"status": status, "stdout": out.getvalue()}


def _observation(result: dict[str, Any]) -> str:
    text = result["stdout"].strip() or "(no output)"
    if len(text) > OUTPUT_LIMIT:
        half = OUTPUT_LIMIT // 2
        text = (
            f"{text[:half]}\n… ({len(text) - OUTPUT_LIMIT} characters left out) …\n{text[-half:]}"
        )
    return f"{OBSERVATION_HEADER}\n{text}"


def ask(
    client: httpx.Client,
    upstream: str,
    model: str,
    question: Question,
    *,
    python: str,
    packages: list[str],
) -> RunRecord:
    """One question through the loop, scored as ``reckon eval`` scores a run."""
    record = RunRecord(question.id, 1, "error", model=model)
    steps: list[dict[str, Any]] = []
    started = time.monotonic()
    with workspace(question.files, python=python, packages=packages) as space:
        messages = [
            {"role": "system", "content": space.system_prompt},
            {"role": "user", "content": question.question},
        ]
        try:
            for _ in range(MAX_CALLS):
                left = ASK_SECONDS - (time.monotonic() - started)
                if left <= 0:
                    record.message = f"no answer within {ASK_SECONDS:.0f} s"
                    break
                reply = _complete(client, upstream, model, messages, timeout=left)
                blocks = extract_code_blocks(reply)
                if blocks is None:
                    record.status, record.answer = "ok", reply
                    break
                result = run_cell(space, blocks.code)
                steps.append(
                    {
                        "kind": "code",
                        "index": len(steps),
                        "code": blocks.code,
                        "text": blocks.text,
                        "result": result,
                    }
                )
                messages += [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": _observation(result)},
                ]
            else:
                record.message = f"Stopped after {MAX_CALLS} model calls without a final answer."
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            record.message = f"model call failed: {type(exc).__name__}: {exc}"
        given = [question.question, *space.given()]
    record.seconds = round(time.monotonic() - started, 3)
    _score(record, question, steps, given)
    return record


def ask_plain(client: httpx.Client, upstream: str, model: str, question: Question) -> RunRecord:
    """The model alone: the question as the only message, one reply, no code run (what
    a code interpreter must beat on questions without files)."""
    record = RunRecord(question.id, 1, "error", model=model)
    started = time.monotonic()
    messages = [{"role": "user", "content": question.question}]
    try:
        record.answer = _complete(client, upstream, model, messages, timeout=ASK_SECONDS)
        record.status = "ok"
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        record.message = f"model call failed: {type(exc).__name__}: {exc}"
    record.seconds = round(time.monotonic() - started, 3)
    _score(record, question, [], [question.question])
    return record


def _complete(
    client: httpx.Client,
    upstream: str,
    model: str,
    messages: list[dict[str, Any]],
    *,
    timeout: float,
) -> str:
    body = {"model": model, "messages": messages, "temperature": 0, "stream": False}
    response = client.post(f"{upstream.rstrip('/')}/chat/completions", json=body, timeout=timeout)
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"].get("content") or "")


def _score(
    record: RunRecord, question: Question, steps: list[dict[str, Any]], given: list[str]
) -> None:
    failed = [s for s in steps if s["result"]["status"] != "ok"]
    record.steps = len(steps) + (record.status == "ok")
    record.code_steps, record.retries = len(steps), len(failed)
    record.executed = record.status == "ok" and bool(steps) and not failed
    record.computed = len(failed) < len(steps)
    if record.status == "ok":
        grounding = ground_answer(record.answer, step_sources(steps), given=given)
        record.ungrounded = [str(n) for n in grounding["ungrounded"]]
        record.grounded = not record.ungrounded
        record.first_grounded = record.grounded  # nothing is sent back: the first is the last
        record.correct, record.check_error = _is_correct(question, record.answer)
        record.correct_lenient, _ = _is_correct(question, record.answer, strict=False)
    record.normalized = normalized_answer(record.answer)
    record.steps_detail = steps
