"""The HTML report of a conversation (#34): self-contained and inert. A real demo
session (the kernel draws its chart), and a hostile one: model text, outputs and a
table's HTML that would run script if any of it were markup."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser

from reckon.agent import Agent
from reckon.agent.export._export import export_notebook
from reckon.agent.export._report import export_report
from reckon.agent.export._transcript import Transcript
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, run


class Markup(HTMLParser):
    """Every tag and attribute of a document, and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_a_session_report_holds_its_questions_code_outputs_and_chart(
    a_finished_session: tuple[KernelExecutor, Transcript],
) -> None:
    _, transcript = a_finished_session
    html = export_report(transcript, title="Sales")
    markup = Markup(html)
    text = "".join(markup.text)
    for ask in transcript.asks:
        assert ask["question"] in text and ask["answer"] in text
    images = [attrs for tag, attrs in markup.tags if tag == "img"]
    assert len(images) == 1  # the bar chart, as a data: image
    png = base64.b64decode(str(images[0]["src"]).removeprefix("data:image/png;base64,"))
    assert png.startswith(b"\x89PNG")
    assert any(tag == "table" for tag, _ in markup.tags)  # the summary's table


def test_nothing_the_model_or_a_cell_wrote_becomes_markup(executor: KernelExecutor) -> None:
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    table = f'<table><tr><td onclick="x()">1</td></tr></table>{hostile}'
    cell = f"print({hostile!r})\nclass Evil:\n    def _repr_html_(self): return {table!r}\nEvil()"
    agent = Agent(ScriptedModel([code_reply(cell), answer(f"Done. {hostile}")]), executor)
    run(agent.ask(f"Show {hostile}", environment={}))
    markup = Markup(export_report(agent.transcript, title=hostile))
    assert any(tag == "table" for tag, _ in markup.tags)  # kept, as table markup only
    assert not [tag for tag, _ in markup.tags if tag in ("script", "img", "a", "iframe")]
    assert not [a for _, attrs in markup.tags for a in attrs if a.startswith("on")]
    policy = [a for t, a in markup.tags if t == "meta" and a.get("http-equiv")]
    assert policy and "default-src 'none'" in str(policy[0]["content"])
    text = "".join(markup.text)
    assert text.count(hostile) >= 3  # the question, the output and the answer, as text


def test_a_figure_the_page_lent_is_a_reference_the_page_fills_in(
    a_finished_session: tuple[KernelExecutor, Transcript],
) -> None:
    """In the browser the agent holds {ref, chars} for a figure; the exports put the
    reference where the PNG goes (web/agent/figures.js fills it in), and only one of
    the page's own shape: anything else is left out."""
    _, transcript = a_finished_session
    ref = "reckon-figure-0123456789abcdef-7"

    def lent(new_ref: str) -> Transcript:
        asks = []
        for ask in transcript.asks:
            steps = []
            for step in ask["steps"]:
                result = step.get("result")
                if isinstance(result, dict) and result.get("figures"):
                    figures = [{**{k: v for k, v in f.items() if k != "png"}, "ref": new_ref,
                                "chars": len(f["png"])} for f in result["figures"]]  # fmt: skip
                    step = {**step, "result": {**result, "figures": figures}}
                steps.append(step)
            asks.append({**ask, "steps": steps})
        return Transcript(asks=asks)

    images = [a for t, a in Markup(export_report(lent(ref))).tags if t == "img"]
    assert [a["src"] for a in images] == [f"data:image/png;base64,{ref}"]
    notebook = json.loads(export_notebook(lent(ref)))
    outputs = [o for c in notebook["cells"] for o in c.get("outputs", [])]
    assert [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})] == [ref]
    hostile = '" onerror="alert(1)'
    assert not [t for t, _ in Markup(export_report(lent(hostile))).tags if t == "img"]
