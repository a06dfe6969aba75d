"""The CodeAct baseline of benchmarks/real_model.py, against a scripted model server.

A real HTTP server on 127.0.0.1 plays the model's replies; the baseline runs the code
on CPython and is scored by reckon eval's functions. No real model needed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.responses import JSONResponse, Response

from reckon.agent._observe import OBSERVATION_HEADER
from reckon.agent._prompt import build_system_prompt
from reckon.eval._eval import summarize
from reckon.eval._questions import Question, load_questions
from support import QUESTION_SETS, ROOT, FakeUpstream

sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "scripts")]

import codeact_baseline  # noqa: E402
import real_model  # noqa: E402

REAL = QUESTION_SETS / "real" / "questions.jsonl"
QUANTITY = next(q for q in load_questions(REAL) if q.id == "easy-sales-quantity")
PACKAGES = ["numpy", "pandas"]


def reply(content: str) -> Any:
    def handler(payload: dict[str, Any]) -> Response:
        message = {"role": "assistant", "content": content}
        return JSONResponse({"object": "chat.completion", "choices": [{"message": message}]})

    return handler


def ask(upstream: FakeUpstream, question: Question, *replies: str) -> codeact_baseline.RunRecord:
    upstream.handlers.extend(reply(r) for r in replies)
    with httpx.Client() as client:
        return codeact_baseline.ask(client, f"{upstream.url}/v1", "scripted", question,
                                    python="3.12.7", packages=PACKAGES)  # fmt: skip


def test_code_runs_on_the_sandbox_paths_and_a_failure_is_sent_back(upstream: FakeUpstream) -> None:
    record = ask(
        upstream,
        QUANTITY,
        "Let me look.\n```python\nimport pandas as pd\ndf = pd.read_csv('/data/sales.csv')\n"
        "print(df.shape)\nprint(df['quantty'].sum())\n```",
        "A typo.\n```python\nprint('total', df['quantity'].sum())\n```",
        "The total quantity is 119.\n\n@total_quantity[119]",
    )
    assert (record.status, record.answer[-20:]) == ("ok", "@total_quantity[119]")
    assert (record.correct, record.correct_lenient, record.grounded) == (True, True, True)
    # One cell failed (a retry), so the run did not execute cleanly, as reckon eval counts it.
    assert (record.executed, record.computed, record.retries, record.code_steps) == (
        False, True, 1, 2)  # fmt: skip
    first, second, third = upstream.payloads
    assert (first["temperature"], first["stream"], first["model"]) == (0, False, "scripted")
    system = first["messages"][0]["content"]
    assert "- /data/sales.csv: table (csv), 20 rows" in system
    assert "codeact-" not in system  # the temporary folder is never shown
    assert "reply with one ```python code block" in system  # the fenced-code rules
    assert first["messages"][1] == {"role": "user", "content": QUANTITY.question}
    failed = second["messages"][-1]
    assert failed["role"] == "user" and failed["content"].startswith(OBSERVATION_HEADER)
    assert "(20, 7)" in failed["content"] and "KeyError: 'quantty'" in failed["content"]
    assert 'File "<cell>"' in failed["content"] and "codeact_baseline" not in failed["content"]
    assert third["messages"][-1]["content"] == f"{OBSERVATION_HEADER}\ntotal 119"
    assert len(third["messages"]) == 6  # system, question, then two code turns


def test_the_prompt_is_reckons_own(upstream: FakeUpstream) -> None:
    files = [QUESTION_SETS / "real" / "mixedGLB.csv"]
    with codeact_baseline.workspace(files, python="3.12.7", packages=PACKAGES) as space:
        assert space.system_prompt == build_system_prompt(space.environment, tools=False)
        assert space.environment["files"][0]["path"] == "/data/mixedGLB.csv"
        # The sandbox's inspect, as Reckon shows it: the tidied read (its '****' are NaN).
        assert "read_table('/data/mixedGLB.csv')" in space.system_prompt
        result = codeact_baseline.run_cell(space, "x = read_table('/data/mixedGLB.csv')")
        assert result == {"status": "ok", "stdout": ""}
        later = codeact_baseline.run_cell(space, "print(len(x), run_sql('SELECT 1 AS one'))")
        assert later["status"] == "ok" and later["stdout"].startswith("133")


def test_an_answer_no_output_holds_is_ungrounded_and_wrong(upstream: FakeUpstream) -> None:
    record = ask(
        upstream,
        QUANTITY,
        "```python\nprint(open('/data/sales.csv').read().count('\\n'))\n```",
        "There are 1234 units in all.\n@total_quantity[1234]",
    )
    assert record.status == "ok" and record.executed
    assert (record.correct, record.grounded, record.ungrounded) == (False, False, ["1234", "1234"])


def test_prose_without_the_format_is_only_leniently_correct(upstream: FakeUpstream) -> None:
    record = ask(upstream, QUANTITY, "```python\nprint(119)\n```", "The total is 119 units.")
    assert (record.correct, record.correct_lenient, record.executed) == (False, True, True)


def test_a_model_that_never_stops_writing_code_is_stopped(upstream: FakeUpstream) -> None:
    record = ask(upstream, QUANTITY, *["```python\nprint(1)\n```"] * codeact_baseline.MAX_CALLS)
    assert record.status == "error" and "12 model calls" in str(record.message)
    assert len(upstream.payloads) == codeact_baseline.MAX_CALLS
    assert not (record.correct or record.executed or record.grounded)


def test_a_failing_server_is_a_failed_run_not_a_crash(upstream: FakeUpstream) -> None:
    record = ask(upstream, QUANTITY)  # no script: the server answers 500
    assert record.status == "error" and "500" in str(record.message)


def test_the_table_scores_the_baseline_like_reckon_eval(upstream: FakeUpstream) -> None:
    # Computed from literals, not printed as one: a printed literal grounds nothing.
    good = ask(upstream, QUANTITY, "```python\nprint(100 + 19)\n```", "@total_quantity[119]")
    bad = ask(upstream, QUANTITY, "@total_quantity[500]")  # no code, a number from nowhere
    summary = summarize([QUANTITY], [good, bad])
    row = real_model.table_row("baseline", summary)
    assert row[:6] == ["baseline", "50%", "50%", "50%", "50%", "50%"]
    assert row[6] == f"{summary['median_seconds_per_run']:.1f}" and row[7] == "1"
    assert real_model.markdown([row]).splitlines()[0].startswith("| system | accuracy (strict)")


def test_a_cell_that_runs_too_long_is_stopped_and_the_namespace_survives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(codeact_baseline, "CELL_SECONDS", 0.5)
    with codeact_baseline.workspace([], python="3.12.7", packages=PACKAGES) as space:
        assert codeact_baseline.run_cell(space, "kept = 7")["status"] == "ok"
        stopped = codeact_baseline.run_cell(space, "while True:\n    pass")
        assert stopped["status"] == "timeout" and "longer than 0.5 s" in stopped["stdout"]
        assert codeact_baseline.run_cell(space, "print(kept)") == {"status": "ok", "stdout": "7\n"}


def test_limit_writes_the_first_questions_with_their_files(tmp_path: Path) -> None:
    path = real_model.subset(REAL, 3, tmp_path)
    chosen = load_questions(path)
    assert [q.id for q in chosen] == [q.id for q in load_questions(REAL)[:3]]
    assert all(f.is_file() for q in chosen for f in q.files)
    assert real_model.subset(REAL, None, tmp_path) == REAL


def test_a_baseline_only_run_prints_the_table_and_writes_the_results(
    upstream: FakeUpstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Question 1 computed and right; 2 right but from no code; 3: the server fails (500).
    script = ["```python\nprint(164578 / 1000)\n```", "@mean_value[164.58]", "@total[944]"]
    upstream.handlers.extend(reply(r) for r in script)
    argv = ["--only", "baseline", "--limit", "3", "--out", str(tmp_path / "out"),
            "--site", str(tmp_path / "no-site"), "--upstream", f"{upstream.url}/v1",
            "--model", "scripted"]  # fmt: skip
    assert real_model.main(argv) == 0
    printed = capsys.readouterr().out
    assert "| baseline | 67% | 67% | 33% | 50% | 50% |" in printed
    assert "| baseline | 2/3 |" in printed  # by difficulty: the first three are easy
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["table"][0][:6] == ["baseline", "67%", "67%", "33%", "50%", "50%"]
    assert results["setup"]["limit"] == 3
    runs = results["runs"]["baseline"]
    assert [r["question_id"] for r in runs] == ["easy-tsv-mean", "easy-tsv-sum", "easy-tsv-max"]
    assert [r["status"] for r in runs] == ["ok", "ok", "error"]
    assert runs[0]["steps_detail"][0]["result"] == {"status": "ok", "stdout": "164.578\n"}
    kept = json.loads((tmp_path / "out" / "baseline" / "report.json").read_text())
    assert len(kept["runs"]) == 3 and (tmp_path / "out" / "table.md").is_file()


def test_the_model_alone_answers_once_and_is_scored_by_its_last_number(
    upstream: FakeUpstream,
) -> None:
    math = load_questions(QUESTION_SETS / "math" / "questions.jsonl")
    bakery = next(q for q in math if q.id == "math-bakery")
    upstream.handlers += [reply("14 * 12 = 168 muffins; 126 sold, 19 more: 23 are left.")]
    with httpx.Client() as client:
        record = codeact_baseline.ask_plain(client, f"{upstream.url}/v1", "scripted", bakery)
    assert (record.status, record.correct, record.code_steps) == ("ok", True, 0)
    sent = upstream.payloads[-1]["messages"]
    assert sent == [{"role": "user", "content": bakery.question}]
    assert not record.grounded  # its numbers came from no code
