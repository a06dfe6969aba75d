"""A conversation as one self-contained HTML page: the report a person keeps or sends.

Each ask is its question, its code steps with what they printed (text, tables, charts
as ``data:`` images) and its answer. Nothing in it runs or loads: a Content-Security-
Policy allows only inline styles and ``data:`` images, every text is escaped, answers
are shown as written (not rendered as Markdown), and tables keep table markup only
(``_inert``). It opens from a file, offline, in any browser.
"""

from __future__ import annotations

import base64
import binascii
import re
from html import escape

from reckon.agent._types import JSONDict
from reckon.agent.export._inert import safe_table_html
from reckon.agent.export._portable import portable_paths
from reckon.agent.export._transcript import Transcript

__all__ = ["export_report"]

_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; color: #1b1f24; }
h2 { font-size: 1.1rem; background: #eef2fb; padding: .5rem .75rem; border-radius: 6px; }
details { border: 1px solid #d8dde3; border-radius: 6px; margin: .5rem 0; padding: .25rem .75rem; }
summary { color: #57606a; cursor: pointer; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
pre.error { color: #a40e26; background: #fff5f5; }
.answer { white-space: pre-wrap; margin: .75rem 0; }
.muted { color: #57606a; font-size: .85rem; }
img { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: .85rem; }
th, td { border: 1px solid #d8dde3; padding: 2px 6px; }
"""


def export_report(transcript: Transcript | JSONDict, *, title: str = "Reckon session") -> str:
    """The conversation as a self-contained, inert HTML document."""
    asks = transcript.asks if isinstance(transcript, Transcript) else transcript.get("asks", [])
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    for ask in asks if isinstance(asks, list) else []:
        if isinstance(ask, dict):
            parts.append(_ask(ask))
    parts.append("</body></html>")
    return "\n".join(parts)


def _ask(ask: JSONDict) -> str:
    html = [f'<section class="ask"><h2>{escape(str(ask.get("question", "")))}</h2>']
    for step in ask.get("steps") or []:
        if isinstance(step, dict) and step.get("kind") == "code":
            html.append(_step(step))
    answer = str(ask.get("answer") or ask.get("message") or "")
    if answer:
        html.append(f'<div class="answer">{escape(answer)}</div>')
    if ask.get("model"):
        html.append(f'<p class="muted">Answered by {escape(str(ask["model"]))}</p>')
    html.append("</section>")
    return "\n".join(html)


def _step(step: JSONDict) -> str:
    result: JSONDict = step["result"] if isinstance(step.get("result"), dict) else {}
    status = str(result.get("status", ""))
    number = f"Step {step['index'] + 1}" if isinstance(step.get("index"), int) else "Step"
    who = "Reckon loaded a table" if step.get("origin") == "reckon" else "ran code"
    code = escape(portable_paths(str(step.get("code", ""))))
    html = [f"<details open><summary>{number}: {who} ({escape(status)})</summary>",
            f"<pre><code>{code}</code></pre>"]  # fmt: skip
    for name in ("stdout", "stderr"):
        if result.get(name):
            kind = ' class="error"' if name == "stderr" else ""
            html.append(f"<pre{kind}>{escape(str(result[name]))}</pre>")
    for figure in result.get("figures") or []:
        html.append(_figure(figure))
    value = result.get("result")
    if isinstance(value, dict):
        table = safe_table_html(str(value["html"])) if value.get("html") else None
        html.append(
            table if table is not None else f"<pre>{escape(str(value.get('text', '')))}</pre>"
        )
    error = result.get("error")
    if isinstance(error, dict):
        shown = (
            error.get("traceback") or f"{error.get('type', 'Error')}: {error.get('message', '')}"
        )
        html.append(f'<pre class="error">{escape(str(shown))}</pre>')
    html.append("</details>")
    return "\n".join(html)


def _figure(figure: object) -> str:
    """A chart as a ``data:`` image (only a real base64 PNG; anything else is left out).
    In the browser the agent holds a reference instead, which the page fills in with the
    PNG, checked the same way (PROTOCOL.md §4)."""
    if not isinstance(figure, dict):
        return ""
    ref = figure.get("ref")
    if not isinstance(figure.get("png"), str) and isinstance(ref, str) and _REF.fullmatch(ref):
        return _img(ref, figure)
    if not isinstance(figure.get("png"), str):
        return ""
    png = figure["png"]
    try:
        if not base64.b64decode(png[:64], validate=True).startswith(b"\x89PNG"):
            return ""
    except (binascii.Error, ValueError):
        return ""
    if not all(c.isalnum() or c in "+/=" for c in png):
        return ""
    return _img(png, figure)


_REF = re.compile(r"[a-z0-9-]{1,80}")


def _img(source: str, figure: JSONDict) -> str:
    alt = escape(str(figure.get("description") or "a chart"))
    size = "".join(
        f' {k}="{figure[k]}"' for k in ("width", "height") if isinstance(figure.get(k), int)
    )
    return f'<img src="data:image/png;base64,{source}" alt="{alt}"{size}>'
