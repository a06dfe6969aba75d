"""docs/python.md lists exactly the keyword-only options of Session and Runtime, with
the defaults the code has: the page is the API's reference, so it must not drift."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from reckon.client import Runtime, Session
from support import ROOT

DOC = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")


def documented(heading: str) -> dict[str, str]:
    """The option table under `heading`: option name -> its default cell."""
    section = DOC.split(heading, 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, flags=re.M))


def keyword_only(target: Any) -> dict[str, Any]:
    return {
        name: p.default
        for name, p in inspect.signature(target).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


@pytest.mark.parametrize(
    ("heading", "target", "also_from"),
    [
        ("## `reckon.Session(", Session.__init__, None),
        # The Runtime table lists only what Session lacks; the rest is "as above".
        ("## `reckon.client.Runtime(", Runtime.__init__, "## `reckon.Session("),
    ],
)
def test_the_option_tables_match_the_signatures(
    heading: str, target: Any, also_from: str | None
) -> None:
    options = documented(heading)
    if also_from is not None:
        options |= {k: v for k, v in documented(also_from).items() if k in keyword_only(target)}
    assert set(options) == set(keyword_only(target))
    for name, default in keyword_only(target).items():
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            assert options[name].strip().replace(",", "") == f"{default:g}", name
        elif isinstance(default, str):
            assert f'"{default}"' in options[name], name
