"""``reckon eval``'s report.md renders nothing live from what the model wrote (issue 32,
E2): its step prose, answer, code, outputs and the reasons a run failed may carry
text copied from an upload. ``support.live_markdown`` (markdown-it-py, CommonMark and
GFM tables) is the judge; what a person reads is still there, fenced or as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from reckon.eval._eval import RunRecord, summarize
from reckon.eval._questions import Question
from reckon.eval._report import build_report, write_report
from support import live_markdown, rendered

SETUP = {"questions_file": "q.jsonl", "repeat": 1, "model": "m", "upstream": None,
         "started": "now", "wall_seconds": 1.0, "reproduce_on_host": False}  # fmt: skip

HOSTILE = [
    pytest.param("<img src=http://127.0.0.1:9/leak onerror=alert(1)>", id="raw-html"),
    pytest.param("see ![chart](http://127.0.0.1:9/leak?d=secret)", id="an-image"),
    pytest.param("![a][r]\n\n[r]: http://127.0.0.1:9/leak", id="reference-style-image"),
    pytest.param("`` <img src=x onerror=alert(1)> `", id="mismatched-backtick-runs"),
    pytest.param("done\n````\n<img src=x onerror=alert(1)>\n````", id="a-bare-four-backtick-line"),
    pytest.param("ok\n```\n<img src=x>\n```\n~~~~~\n<div onclick=x>", id="fences-and-tildes"),
    pytest.param("<http://127.0.0.1:9/leak> [x](http://127.0.0.1:9/l)", id="links"),
    pytest.param("a | <img src=x> | b\r<div>", id="pipes-and-a-lone-cr"),
    pytest.param("~~~\n<img src=x>\n`````\n<div onclick=x>", id="an-open-tilde-fence"),
    pytest.param("<!--\n\n<img src=x>\n-->", id="an-html-comment"),
    pytest.param("<HTTPS://127.0.0.1:9/x> <mailto:a@b.c>", id="autolinks"),
    pytest.param("Title\n===\n<img src=x>", id="a-setext-heading"),
]


def report_md(tmp_path: Path, text: str) -> str:
    """report.md of one failed run whose every model-written field is ``text``."""
    question = Question(text.replace("\n", " ") or "q", f"{text} @x[1]", expected="@x[1]")
    record = RunRecord(question.id, 1, "ok", answer=text, message=text, ungrounded=[text])
    record.fresh_error = text
    record.fresh_differences = [{"cell": 1, "output": text, "why": text}]
    result = {"status": "ok", "stdout": text, "stderr": text, "error": {"traceback": text}}
    record.steps_detail = [
        {"index": 0, "kind": "text", "text": text},
        {"index": 1, "kind": "code", "text": text, "code": text, "result": result},
    ]
    summary = summarize([question], [record])
    report = build_report([question], [record], summary, setup={**SETUP, "model": text})
    _, path = write_report(report, tmp_path)
    return path.read_text()


@pytest.mark.parametrize("text", HOSTILE)
def test_nothing_the_model_wrote_renders_live_in_report_md(tmp_path: Path, text: str) -> None:
    markdown = report_md(tmp_path, text)
    assert live_markdown(markdown) == [], markdown


def test_code_and_answers_stay_whole_inside_their_fences(tmp_path: Path) -> None:
    answer = "The answer:\n````\n<b>kept</b>\n```\nstill the answer"
    markdown = report_md(tmp_path, answer)
    html = rendered(markdown)
    blocks = html.split("<pre><code")[1:]
    # Answer, code, output: each holds the whole text, the bare fences included.
    whole = "The answer:\n````\n&lt;b&gt;kept&lt;/b&gt;\n```\nstill the answer"
    assert sum(whole in block.split("</code></pre>")[0] for block in blocks) >= 3


def test_step_prose_keeps_its_formatting(tmp_path: Path) -> None:
    prose = "I **grouped** by `region` <img src=x>, then [looked](http://e/x)."
    html = rendered(report_md(tmp_path, prose))
    assert "<strong>grouped</strong> by <code>region</code> &lt;img src=x&gt;" in html
    assert "[looked](http://e/x)" in html  # as text


def test_a_pipe_in_a_question_id_stays_in_its_cell(tmp_path: Path) -> None:
    html = rendered(report_md(tmp_path, "a | b | <i>c</i>"), "gfm")
    # GFM drops the cells a row has beyond its header's, so an unescaped id lost parts.
    assert "<td>a | b | &lt;i&gt;c&lt;/i&gt;</td>" in html
