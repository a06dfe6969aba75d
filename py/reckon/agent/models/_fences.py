"""Fenced blocks in a model's reply: one reading of the Markdown fence for every reader
(the code to run, tool calls written as text, an answer given as JSON) and the one way
we write one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Fenced", "fence", "fenced_blocks", "only_block", "prose_around"]

# An opening fence at the start of a line, an optional info string, the body, the
# closing fence. Three or more backticks; the closing run must be at least as long.
_FENCE = re.compile(
    r"^[ \t]{0,3}(?P<ticks>`{3,})[ \t]*(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^[ \t]{0,3}(?P=ticks)`*[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


# Code between HTML code tags, each on a line of its own: seen from the 1.5B model in
# place of a fence (``<code>\nimport pandas as pd\n…\n</code>``); read as an
# untagged fence, it runs only when it is code.
_TAGS = re.compile(
    r"^[ \t]*<code>[ \t]*\n(?P<body>.*?)^[ \t]*</code>[ \t]*$", re.MULTILINE | re.DOTALL
)


@dataclass(frozen=True)
class Fenced:
    """One fenced block: its language (the info string's first word, lower case, ``""``
    when untagged), its body and where the whole block stands in the text."""

    language: str
    body: str
    start: int
    end: int


def fenced_blocks(text: str) -> list[Fenced]:
    """Every fenced block of ``text``, in order (a ``<code>`` block as an untagged one,
    unless it stands inside a fence)."""
    fenced = [
        Fenced(
            language=match.group("info").strip().split(" ")[0].lower(),
            body=match.group("body"),
            start=match.start(),
            end=match.end(),
        )
        for match in _FENCE.finditer(text)
    ]
    if "<code>" not in text:
        return fenced
    tagged = [
        Fenced(language="", body=match.group("body"), start=match.start(), end=match.end())
        for match in _TAGS.finditer(text)
    ]
    inside = [t for t in tagged if any(f.start <= t.start < f.end for f in fenced)]
    return sorted(fenced + [t for t in tagged if t not in inside], key=lambda b: b.start)


def only_block(text: str) -> str | None:
    """The body of ``text`` when it is one fenced block and nothing else, or ``None``."""
    blocks = fenced_blocks(text)
    if len(blocks) != 1:
        return None
    block = blocks[0]
    outside = text[: block.start] + text[block.end :]
    return None if outside.strip() else block.body


def prose_around(text: str, spans: Iterable[tuple[int, int]]) -> tuple[str, str]:
    """The prose of ``text`` before and between ``spans`` (runs of blank lines left by a
    span folded to one) and the prose after the last of them."""
    kept, position = [], 0
    for start, end in sorted(spans):
        kept.append(text[position:start])
        position = max(position, end)
    return re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip(), text[position:].strip()


def fence(code: str) -> str:
    """``code`` as a python block, with a longer fence when it holds one itself."""
    ticks = "````" if "```" in code else "```"
    return f"{ticks}python\n{code.rstrip()}\n{ticks}"
