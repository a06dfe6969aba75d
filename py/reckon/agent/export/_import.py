"""Import a notebook or a script into a session as its starting cells.

The cells run in the sandbox in order (so their variables exist), enter the
transcript as one ask named after the file (so persistence and later exports
keep them), or, for a notebook Reckon exported, as the asks it was exported from
(``_import_asks``); the model's history gets a short account of what ran, so the
next question can build on them.
"""

from __future__ import annotations

import ast
import json
import time
from typing import Any

from reckon.agent._loop import Agent
from reckon.agent._observe import format_observation
from reckon.agent._types import JSONDict
from reckon.agent.export._export import import_cells
from reckon.agent.export._import_asks import ImportedAsk, asks_of

__all__ = ["check_source", "import_into", "refused_while_busy"]

_WHAT_TO_DO = "Import a Jupyter notebook (.ipynb, nbformat 4) or a Python script (.py)."
_CONTEXT_LIMIT = 12_000  # characters of imported code and output shown to the model
_OBSERVATION_LIMIT = 1500  # per cell


def check_source(text: str, *, name: str) -> list[str]:
    """The code cells of ``text``; raises ``ValueError`` saying what is wrong and what to do."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} is empty. {_WHAT_TO_DO}")
    if "\x00" in text or text.count("\ufffd") > 2:
        raise ValueError(f"{name} is not text (it looks like a binary file). {_WHAT_TO_DO}")
    if text.lstrip().startswith("{"):
        _check_notebook(text, name)
    else:
        try:
            ast.parse(text)
        except SyntaxError as exc:
            raise ValueError(
                f"{name} is neither a notebook nor valid Python (line {exc.lineno}: {exc.msg}). "
                f"{_WHAT_TO_DO}"
            ) from None
    try:
        cells = import_cells(text)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}. {_WHAT_TO_DO}") from None
    if not cells:
        raise ValueError(f"{name} has no code cells to import. {_WHAT_TO_DO}")
    return cells


def _check_notebook(text: str, name: str) -> None:
    try:
        notebook: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not valid JSON ({exc}). {_WHAT_TO_DO}") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError(
            f"{name} is JSON but not a Jupyter notebook (no 'cells' list). {_WHAT_TO_DO}"
        )
    version = notebook.get("nbformat")
    if version != 4:
        raise ValueError(
            f"{name} is an nbformat {version} notebook; only nbformat 4 can be imported. "
            "Open it in Jupyter and save it again (that converts it to version 4)."
        )
    if not all(isinstance(cell, dict) for cell in notebook["cells"]):
        raise ValueError(f"{name} has cells that are not objects. {_WHAT_TO_DO}")


async def import_into(agent: Agent, text: str, *, name: str) -> JSONDict:
    """Run the cells of ``text`` and record them; returns
    ``{status, question, cells, ok, failed, asks, conversation, message?}`` (an error
    changes nothing; ``conversation``: it came back as the asks it was exported from).
    A notebook Reckon exported comes back as its asks (``_import_asks``); any other
    file as one ask named after it."""
    # No ask may interleave with the imported cells (see _turns).
    async with agent.turns.join() as ours:
        if not ours:
            return refused_while_busy()
        try:
            cells = check_source(text, name=name)
        except ValueError as exc:
            return _error(str(exc))
        asks = asks_of(text) if text.lstrip().startswith("{") else None
        whole = asks is not None
        if asks is None:
            asks = [ImportedAsk({"question": f"Imported {name}"}, cells)]
        steps: list[JSONDict] = []
        for ask in asks:
            made = [await _run(agent, code, len(steps) + n) for n, code in enumerate(ask.cells)]
            steps += made
            ask.words.setdefault("answer", _summary(name, made))
            agent.transcript.add(ask.words["question"], ask.outcome(made))
    failed = [s for s in steps if s["result"].get("status") != "ok"]
    ok = len(steps) - len(failed)
    agent.messages += _context(name, steps, _summary(name, steps), outputs=not agent.privacy.hides)
    if whole:
        for ask in asks:  # the conversation's own words, after what its cells did
            agent.messages += [{"role": "user", "content": ask.words["question"]},
                               {"role": "assistant", "content": ask.words["answer"]}]  # fmt: skip
    reply: JSONDict = {"status": "ok", "question": asks[-1].words["question"], "cells": len(steps),
                       "ok": ok, "failed": len(failed), "asks": len(asks),
                       "conversation": whole}  # fmt: skip
    if failed:
        first = failed[0]
        error = first["result"].get("error") or {}
        reply["status"] = "error"
        reply["message"] = (
            f"{len(failed)} of {len(steps)} imported cells failed (first: cell "
            f"{first['index'] + 1}, {error.get('type', first['result'].get('status'))}: "
            f"{error.get('message', '')}); the others ran and are part of the session."
        )
    return reply


async def _run(agent: Agent, code: str, index: int) -> JSONDict:
    started = time.monotonic()
    result = await agent.executor.run(code)
    ms = round((time.monotonic() - started) * 1000, 1)
    return {"index": index, "kind": "code", "text": "", "code": code, "result": result,
            "model": "import", "ms": ms}  # fmt: skip


def _summary(name: str, steps: list[JSONDict]) -> str:
    failed = sum(1 for s in steps if s["result"].get("status") != "ok")
    summary = f"Imported {len(steps)} cell{'s' if len(steps) != 1 else ''} from {name}: "
    return summary + f"{len(steps) - failed} ran" + (f", {failed} failed." if failed else ".")


def _context(name: str, steps: list[JSONDict], summary: str, *, outputs: bool) -> list[JSONDict]:
    """What the model is told: the code that ran and what it printed, within a budget.
    In schema privacy the outputs (which may quote the files) are left out."""
    parts = [
        f"I imported {name}. These cells already ran in the sandbox, in order, so their "
        "variables and files exist; build on them."
    ]
    used = len(parts[0])
    for step in steps:
        result = step["result"]
        observation = (
            format_observation(result, limit=_OBSERVATION_LIMIT)
            if outputs
            else f"status: {result.get('status')} (output not shown: schema privacy)"
        )
        part = f"Cell {step['index'] + 1}:\n```python\n{step['code'].rstrip()}\n```\n{observation}"
        if used + len(part) > _CONTEXT_LIMIT:
            parts.append(f"(… {len(steps) - step['index']} more cells not shown)")
            break
        parts.append(part)
        used += len(part)
    return [
        {"role": "user", "content": "\n\n".join(parts)},
        {"role": "assistant", "content": summary},
    ]


def refused_while_busy() -> JSONDict:
    return _error("the agent is answering a question; import when it is done")


def _error(message: str) -> JSONDict:
    return {"status": "error", "cells": 0, "ok": 0, "failed": 0, "message": message}
