"""The asks of a notebook Reckon exported: a conversation imported whole.

An export keeps each ask's words in the notebook's metadata and marks each code cell
with the ask it belongs to (``_export``). Read back, the conversation is its asks again:
the cells run in order, and each ask keeps its question and answer. A notebook edited
so that a code cell belongs to no ask (or one not listed) is imported as cells only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reckon.agent._types import JSONDict
from reckon.agent.export._portable import sandbox_paths

__all__ = ["ImportedAsk", "asks_of"]


@dataclass
class ImportedAsk:
    """One ask of an exported conversation: its words and the code of its cells."""

    words: JSONDict
    cells: list[str] = field(default_factory=list)

    def outcome(self, steps: list[JSONDict]) -> JSONDict:
        """The ask as the transcript keeps it, with the steps its cells made again."""
        status = str(self.words.get("status") or "ok")
        said: JSONDict = {
            k: self.words[k] for k in ("answer", "message", "model") if k in self.words
        }
        return {"status": status, "answer": "", **said, "steps": steps}


def asks_of(text: str) -> list[ImportedAsk] | None:
    """The asks ``text`` (an exported notebook) carries, or None when it carries none."""
    try:
        notebook: Any = json.loads(text)
    except ValueError:
        return None
    meta = notebook.get("metadata") if isinstance(notebook, dict) else None
    listed = ((meta or {}).get("reckon") or {}).get("asks") if isinstance(meta, dict) else None
    if not isinstance(listed, list) or not listed:
        return None
    asks = [ImportedAsk({k: str(v) for k, v in a.items() if isinstance(v, str)})
            for a in listed if isinstance(a, dict)]  # fmt: skip
    if len(asks) != len(listed) or not all(a.words.get("question") for a in asks):
        return None
    for cell in notebook.get("cells") or []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        mark = (cell.get("metadata") or {}).get("reckon") or {}
        if mark.get("setup"):
            continue
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else str(source)
        if not code.strip():
            continue
        number = mark.get("ask")
        if not isinstance(number, int) or not 0 <= number < len(asks):
            return None
        asks[number].cells.append(sandbox_paths(code))
    return asks
