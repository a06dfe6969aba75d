"""A session as a Jupyter notebook or a plain script, and back.

The notebook holds each question as Markdown, each cell that ran ``ok`` as code
with the outputs the browser produced (text, HTML tables, PNG figures), and each
answer as Markdown; HTML that could act when the notebook is opened is made inert
(``_inert``), and so is every Markdown text (``_inert_markdown``: no HTML, link or
image renders). Paths are made portable: the sandbox reads ``/data`` and writes
``/output``; the exported code reads ``data/`` and writes ``output/`` next to the
notebook, so it runs anywhere the input files are copied. Importing turns them back.
The setup cell that makes this work and the rewriting of paths are in ``_portable``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reckon.agent._types import JSONDict
from reckon.agent.export._inert import safe_table_html
from reckon.agent.export._inert_markdown import inert_markdown, markdown_line
from reckon.agent.export._portable import SETUP_CODE, portable_paths, sandbox_paths
from reckon.agent.export._tool_calls import recorded_calls
from reckon.agent.export._transcript import Transcript

__all__ = ["export_notebook", "export_script", "import_cells", "portable_paths", "sandbox_paths"]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _outputs(result: JSONDict, count: int) -> list[JSONDict]:
    outputs: list[JSONDict] = []
    for name in ("stdout", "stderr"):
        if result.get(name):
            outputs.append({"output_type": "stream", "name": name, "text": _lines(result[name])})
    for figure in result.get("figures") or []:
        outputs.append(
            {
                "output_type": "display_data",
                "data": {
                    # In the browser a reference the page fills in (PROTOCOL.md §4).
                    "image/png": figure.get("png") or figure.get("ref", ""),
                    "text/plain": [str(figure.get("description", "a figure"))],
                },
                "metadata": _figure_size(figure),
            }
        )
    value = result.get("result")
    if isinstance(value, dict):
        data: JSONDict = {"text/plain": _lines(str(value.get("text", "")))}
        table = safe_table_html(str(value["html"])) if value.get("html") else None
        if table is not None:
            data["text/html"] = _lines(table)
        outputs.append(
            {
                "output_type": "execute_result",
                "data": data,
                "metadata": {},
                "execution_count": count,
            }
        )
    return outputs


def _figure_size(figure: JSONDict) -> JSONDict:
    # Jupyter's convention for an image's display size; the comparison with a
    # re-run uses it too, since PNG bytes differ between font rasterisers.
    size = {k: figure[k] for k in ("width", "height") if isinstance(figure.get(k), int)}
    return {"image/png": size} if size else {}


def _asks(transcript: Transcript | JSONDict) -> list[JSONDict]:
    if isinstance(transcript, Transcript):
        return transcript.asks
    asks = transcript.get("asks", [])
    return asks if isinstance(asks, list) else []


def export_notebook(transcript: Transcript | JSONDict, *, title: str = "Reckon session") -> str:
    """The session as nbformat 4 JSON text (valid under the ``nbformat`` validator)."""
    cells: list[JSONDict] = [
        {"cell_type": "markdown", "metadata": {}, "source": _lines(f"# {markdown_line(title)}")},
        {
            "cell_type": "code",
            "metadata": {"reckon": {"setup": True}},
            "execution_count": None,
            "outputs": [],
            "source": _lines(SETUP_CODE),
        },
    ]
    count = 0
    asks = _asks(transcript)
    for number, ask in enumerate(asks):
        question = str(ask.get("question", ""))
        cells.append(
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": _lines(f"## {inert_markdown(question)}"),
            }
        )
        for step in ask.get("steps") or []:
            result = step.get("result")
            if step.get("kind") != "code" or not isinstance(result, dict):
                continue
            if result.get("status") != "ok":
                continue
            count += 1
            meta: JSONDict = {"step": step.get("index"), "ms": step.get("ms"), "ask": number}
            calls = recorded_calls(result)
            if calls:  # the page's host tools it called, with what they returned when kept
                meta["tools"] = calls
            cells.append(
                {
                    "cell_type": "code",
                    "metadata": {"reckon": meta},
                    "execution_count": count,
                    "outputs": _outputs(result, count),
                    "source": _lines(portable_paths(str(step.get("code", "")))),
                }
            )
        answer = str(ask.get("answer") or ask.get("message") or "")
        if answer:
            source = _lines(inert_markdown(answer))
            cells.append({"cell_type": "markdown", "metadata": {}, "source": source})
    for index, cell in enumerate(cells):  # nbformat 4.5 wants cell ids
        cell["id"] = f"reckon-{index}"
    notebook: JSONDict = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            # The conversation's words, for an import that brings it back whole (the
            # cells say which ask they belong to); Jupyter renders none of it.
            "reckon": {"asks": [_words(ask) for ask in asks]},
        },
        "cells": cells,
    }
    return json.dumps(notebook, indent=1, ensure_ascii=False)


def _words(ask: JSONDict) -> JSONDict:
    """What an ask said: its question, status, answer (or message) and model."""
    return {key: str(ask[key]) for key in ("question", "status", "answer", "message", "model")
            if isinstance(ask.get(key), str)}  # fmt: skip


# A cell's `%pip install` / `!pip install` line (the kernel installs a dropped-in wheel
# with it) is not Python: a script carries it commented out, as jupytext does, and an
# import takes it back.
_PIP_LINE = re.compile(r"^([ \t]*)([!%][ \t]*(?:pip3?|python3?[ \t]+-m[ \t]+pip)\b.*)$", re.M)
_COMMENTED_PIP_LINE = re.compile(
    r"^([ \t]*)# ([!%][ \t]*(?:pip3?|python3?[ \t]+-m[ \t]+pip)\b.*)$", re.M
)


def export_script(transcript: Transcript | JSONDict) -> str:
    """The session as a ``.py`` script in the percent format (``# %%`` cells); a
    ``%pip`` line is commented out (``# %pip install …``), so the script parses."""
    parts = ["# Reckon session, exported as a script.\n", "# %%\n" + SETUP_CODE + "\n"]
    for ask in _asks(transcript):
        parts.append(_comment("Question: " + inert_markdown(str(ask.get("question", "")))))
        for code in _ok_cells(ask):
            # Commented first, so the rest of the cell parses and its paths are rewritten.
            script = portable_paths(_PIP_LINE.sub(r"\1# \2", code))
            parts.append("# %%\n" + script.rstrip() + "\n")
        answer = str(ask.get("answer") or "")
        if answer:
            parts.append(_comment("Answer: " + inert_markdown(answer)))
    return "\n".join(parts)


def _ok_cells(ask: JSONDict) -> list[str]:
    cells = []
    for step in ask.get("steps") or []:
        result = step.get("result")
        if step.get("kind") == "code" and isinstance(result, dict) and result.get("status") == "ok":
            cells.append(str(step.get("code", "")))
    return cells


def _comment(markdown: str) -> str:
    """A Markdown cell of the percent format (jupytext and VS Code render it). A line
    that would read as a cell marker (``# %%``) starts with an escape instead."""
    lines = [f"\\{line}" if line.startswith("%%") else line for line in markdown.split("\n")]
    return "# %% [markdown]\n" + "".join(f"# {line}\n" for line in lines)


def import_cells(text: str) -> list[str]:
    """Code cells of an ``.ipynb`` (JSON) or a ``.py`` script, with sandbox paths.

    The setup cell an export adds is left out; a script without ``# %%`` markers
    is one cell.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            notebook: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"this .ipynb file is not valid JSON ({exc}); export it again"
            ) from exc
        cells = []
        for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
            if cell.get("cell_type") != "code" or cell.get("metadata", {}).get("reckon", {}).get(
                "setup"
            ):
                continue
            source = cell.get("source", "")
            code = "".join(source) if isinstance(source, list) else str(source)
            if code.strip():
                cells.append(sandbox_paths(code))
        return cells
    chunks = re.split(r"^# %%.*$\n?", _COMMENTED_PIP_LINE.sub(r"\1\2", text), flags=re.M)
    cells = [c.strip("\n") for c in chunks if c.strip() and not _only_comments(c)]
    return [sandbox_paths(c) for c in cells if c.strip() != SETUP_CODE.strip()]


def _only_comments(chunk: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in chunk.splitlines())
