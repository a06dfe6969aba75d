"""Where `reckon eval --help` and report.md send a reader exists: each docs/ page it
names is there, and a README section it names is a heading of README.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reckon.eval._command import main
from support import ROOT

from .test_report_inert import report_md

_DOC = re.compile(r"\b(docs/[\w-]+\.md)\b")
_README_SECTION = re.compile(r"README(?:\.md)?(?::|,| section)\s*\*?\"?([A-Z][\w ]+?)[*\".)]")


def pointers_in(text: str) -> tuple[list[str], list[str]]:
    return _DOC.findall(text), _README_SECTION.findall(text)


def check(text: str) -> None:
    docs, sections = pointers_in(text)
    assert docs or sections, text[:400]
    for doc in docs:
        assert (ROOT / doc).is_file(), doc
    headings = re.findall(r"^#+ (.+)$", (ROOT / "README.md").read_text(), re.M)
    for section in sections:
        assert any(h.strip().startswith(section) for h in headings), (section, headings)


def test_the_help_points_at_documents_that_exist(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    check(capsys.readouterr().out)


def test_report_md_points_at_documents_that_exist(tmp_path: Path) -> None:
    check(report_md(tmp_path, "an answer"))
