"""The README stays short and points into docs/: under 300 lines, the two commands,
every public entry point named with a link to its page, and every relative link of the
README and docs/ (its anchor included) leads somewhere that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "tests" / "README.md"]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of `path` (outside code blocks)."""
    found: set[str] = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (heading := re.match(r"#+ (.+)", line)):
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            found.add(text.replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    for link in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), (page.name, link)
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), (page.name, link)


def test_the_readme_is_short_and_names_each_entry_point_with_its_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    assert "scripts/run " in text and "scripts/test " in text
    sections = re.split(r"\n(?=#+ )", text)
    for name, page in [
        ("createReckon", "docs/javascript.md"),
        ("<reckon-chat>", "docs/javascript.md"),
        ("reckon serve", "docs/configuration.md"),
        ("reckon eval", "docs/evaluation.md"),
        ("reckon.Session", "docs/python.md"),
    ]:
        assert any(name in s and f"]({page}" in s for s in sections), (name, page)
