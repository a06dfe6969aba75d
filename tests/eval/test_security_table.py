"""docs/security-tests.md names, for each finding of issue 32, the tests that attack
it: every file and test it names exists, so the table cannot point at nothing."""

from __future__ import annotations

import ast
import re

from support import ROOT

TABLE = ROOT / "docs" / "security-tests.md"
_NAMED = re.compile(r"`(tests/[\w/]+\.py)((?:::\w+)?)`((?:, `::\w+`)*)")


def defined_in(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_test_the_table_names_exists() -> None:
    named = 0
    for path, first, more in _NAMED.findall(TABLE.read_text(encoding="utf-8")):
        assert (ROOT / path).is_file(), path
        defined = defined_in(path)
        for name in [first, *re.findall(r"::\w+", more)]:
            if name:
                assert name[2:] in defined, f"{path}{name}"
                named += 1
    assert named >= 40, named


def test_every_finding_of_issue_32_has_a_row() -> None:
    text = TABLE.read_text(encoding="utf-8")
    findings = ["P1", "P2", "P3", "P4", "P5", "M1", "M2", "M3", "M4", "A1", "E1", "E2", "R1", "U1"]
    assert [f for f in findings if f"| {f} " not in text] == []
