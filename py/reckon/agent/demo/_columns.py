"""Finding column and file names inside a question, forgiving case, spacing and plurals."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from reckon.agent._types import JSONDict

__all__ = ["Column", "choose_file", "columns_of", "find_columns", "tokens"]


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str

    @property
    def numeric(self) -> bool:
        dtype = self.dtype.lower()
        return dtype.startswith(("int", "uint", "float", "complex")) or dtype == "number"

    @property
    def temporal(self) -> bool:
        dtype = self.dtype.lower()
        named = re.search(r"date|time|year|month|day|week", self.name.lower()) is not None
        return dtype.startswith("datetime") or named


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, singularised, with ``_``/``-``/camelCase split."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return [_singular(t) for t in re.findall(r"[0-9a-z]+", text.lower())]


def columns_of(entry: JSONDict) -> list[Column]:
    columns: list[Column] = []
    for column in entry.get("columns") or []:
        if isinstance(column, dict):
            columns.append(Column(str(column.get("name")), str(column.get("dtype") or "")))
        else:
            columns.append(Column(str(column), ""))
    return columns


def find_columns(question: str, columns: list[Column]) -> list[Column]:
    """Columns mentioned in ``question``, in the order they appear in it.

    Longer names are matched first and claim their words, so "unit price" is not
    also read as "price". A one-word name also matches a close misspelling.
    """
    words = tokens(question)
    taken = [False] * len(words)
    found: list[tuple[int, Column]] = []
    for column in sorted(columns, key=lambda c: -len(tokens(c.name))):
        name = tokens(column.name)
        if not name:
            continue
        position = _locate(words, taken, name)
        if position is None and len(name) == 1 and len(name[0]) >= 4:
            position = _fuzzy(words, taken, name[0])
        if position is None:
            continue
        length = len(name) if words[position : position + len(name)] == name else 1
        for i in range(position, position + length):
            taken[i] = True
        found.append((position, column))
    return [column for _, column in sorted(found, key=lambda item: item[0])]


def _locate(words: list[str], taken: list[bool], name: list[str]) -> int | None:
    size = len(name)
    for start in range(len(words) - size + 1):
        if words[start : start + size] == name and not any(taken[start : start + size]):
            return start
    joined = "".join(name)
    for start, word in enumerate(words):
        if len(name) > 1 and word == joined and not taken[start]:
            return start  # "unitprice" for "unit_price"
    return None


def _fuzzy(words: list[str], taken: list[bool], name: str) -> int | None:
    for start, word in enumerate(words):
        if taken[start] or len(word) < 4:
            continue
        if difflib.SequenceMatcher(None, word, name).ratio() >= 0.85:
            return start
    return None


def choose_file(question: str, files: list[JSONDict]) -> JSONDict | None:
    """The table the question is about: named in it, else most columns mentioned, else newest.

    Files are assumed to be listed in upload order, so ties go to the last one.
    """
    tables = [f for f in files if f.get("status", "ok") == "ok" and f.get("kind") == "table"]
    if not tables:
        return None
    lowered = question.lower()
    best: JSONDict = tables[-1]
    best_score = 0.0
    for entry in tables:
        name = str(entry.get("name") or str(entry.get("path", "")).rsplit("/", 1)[-1]).lower()
        stem = name.rsplit(".", 1)[0]
        score = float(len(find_columns(question, columns_of(entry))))
        if name and (name in lowered or (len(stem) >= 3 and stem in lowered)):
            score += 10
        if score >= best_score and score > 0:
            best, best_score = entry, score
    return best
