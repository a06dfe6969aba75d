"""`reckon eval` run as the CLI against a model that writes hostile Markdown everywhere
it can (issue 32, E2): in its code, in what that code prints and in its answer, a wrong
one so that the run lands in the report's failures with its whole transcript. Nothing of
it renders live in report.md (``support.live_markdown``: markdown-it-py, CommonMark and
GFM tables), and what the model wrote is still there to read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reckon.agent.checks._recheck import is_question
from support import CHROMIUM, SALES, Script, ScriptedModel, Seen, a_model_server, live_markdown

from .helpers import read_report, reckon_eval

# What a file could steer a model into writing: raw HTML, images and links to a canary,
# a bare four-backtick line that closes a fence, a tilde fence, a reference definition,
# an HTML comment, a setext heading and an autolink.
HOSTILE = (
    "Done <img src=http://127.0.0.1:9/a onerror=alert(1)>\n````\n<script>x()</script>\n"
    "~~~\n<div onclick=x>\n![c](http://127.0.0.1:9/i) [r]\n\n[r]: http://127.0.0.1:9/l\n"
    "<!--\n\n<iframe src=http://127.0.0.1:9/f>\n-->\nTitle\n===\n<http://127.0.0.1:9/u>"
)


class HostileModel(ScriptedModel):
    """One cell that prints HOSTILE (with HOSTILE in a comment), then HOSTILE as the
    answer, whatever the agent sends back."""

    async def chat(self, seen: Seen) -> Script:  # type: ignore[override]
        messages = seen.json["messages"]
        self.requests.append({"payload": seen.json})
        if not any(m.get("role") == "tool" for m in messages):
            assert [m for m in messages if is_question(m)]
            comment = "".join(f"# {line}\n" for line in HOSTILE.splitlines())
            return self.tool_call(f"{comment}print({HOSTILE!r})", "c1")
        return self.text(HOSTILE + " @mean_price[1]")


@pytest.fixture(scope="module")
def a_hostile_model() -> Iterator[str]:
    model = HostileModel()
    with a_model_server(model.chat) as url:
        yield url


def test_report_md_renders_nothing_the_model_wrote(
    a_hostile_model: str, a_built_site: Path, tmp_path: Path
) -> None:
    (tmp_path / "sales.csv").write_text(SALES)
    questions = tmp_path / "questions.jsonl"
    line = {"id": "mean", "question": "What is the mean price?", "files": ["sales.csv"],
            "expected": "@mean_price[16.25]"}  # fmt: skip
    questions.write_text(json.dumps(line) + "\n")
    out = tmp_path / "report"
    code = reckon_eval(
        questions, "--upstream", a_hostile_model, "--model", "scripted", "--site", a_built_site,
        "--out", out, "--chromium", CHROMIUM, "--repeat", "1",
    )  # fmt: skip
    assert code == 0
    report = read_report(out)
    assert [f["question_id"] for f in report["failures"]] == ["mean"]  # with its transcript
    markdown = (out / "report.md").read_text()
    assert markdown.count("onerror=alert(1)") >= 3  # code, output and answer, as text
    assert live_markdown(markdown) == [], markdown
