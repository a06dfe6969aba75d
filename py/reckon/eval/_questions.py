"""The question file of ``reckon eval``: one JSON object a line, checked up front.

Every mistake is found before a browser starts, and named with its line, so a
long run never dies on line 37.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reckon._exceptions import ConfigError
from reckon.eval._answers import compile_check, pairs_in

__all__ = ["Question", "load_questions"]

_KEYS = {"id", "question", "files", "expected", "check"}


@dataclass(frozen=True)
class Question:
    """One line: what to ask, with which files, and how to tell a right answer."""

    id: str
    question: str
    files: list[Path] = field(default_factory=list)
    expected: str | None = None
    check: str | None = None
    check_tree: ast.Expression | None = field(default=None, compare=False, repr=False)


def load_questions(path: Path) -> list[Question]:
    """Parse and validate ``path``; raises ConfigError naming the line at fault."""
    if not path.is_file():
        raise ConfigError(f"question file {path} does not exist")
    questions: list[Question] = []
    seen: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text (one JSON object a line)") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path.name}:{number}"
        question = _question(line, where, path.parent)
        if question.id in seen:
            raise ConfigError(f"{where}: id {question.id!r} is used twice")
        seen.add(question.id)
        questions.append(question)
    if not questions:
        raise ConfigError(f"{path} has no questions (one JSON object a line)")
    return questions


def _question(line: str, where: str, base: Path) -> Question:
    try:
        raw: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each line must be a JSON object")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}; allowed: {sorted(_KEYS)}")
    qid, text = raw.get("id"), raw.get("question")
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
        raise ConfigError(f"{where}: 'id' must be a non-empty string or number")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{where}: 'question' must be a non-empty string")
    files = raw.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfigError(f"{where}: 'files' must be a list of paths (relative to the file)")
    paths = [(base / f).resolve() for f in files]
    for name, resolved in zip(files, paths, strict=True):
        if not resolved.is_file():
            raise ConfigError(f"{where}: file {name!r} not found (looked at {resolved})")
    expected, check = raw.get("expected"), raw.get("check")
    if (expected is None) == (check is None):
        raise ConfigError(f"{where}: give exactly one of 'expected' (@name[value]) or 'check'")
    if expected is not None and (not isinstance(expected, str) or not pairs_in(expected)):
        raise ConfigError(
            f"{where}: 'expected' must be a string of @name[value] pairs, e.g. '@mean_price[20.5]'"
        )
    tree = None
    if check is not None:
        if not isinstance(check, str):
            raise ConfigError(f"{where}: 'check' must be a Python expression (a string)")
        try:
            tree = compile_check(check)
        except (SyntaxError, ValueError) as exc:
            reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
            raise ConfigError(f"{where}: 'check' is not a valid expression: {reason}") from None
    return Question(str(qid), text, paths, expected, check, tree)
