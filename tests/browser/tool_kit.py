"""The host page of the host-tool tests: a few tools over a small orders "API" that lives
in the page's own JS, a canary URL the tools must never hand out, and what the page saw
(web/tools.js; docs/javascript.md, *Host tools*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .helpers import page_call

# `arg`: the canary's URL. The page keeps a fake credential and its own fetch, and counts
# every tool run, so a test can say what ran on the page and what never did.
REGISTER = (Path(__file__).parent / "tool_page.js").read_text()


def register(page: Any, canary_url: str) -> list[str]:
    names: list[str] = page_call(page, REGISTER, canary_url)
    return names


def ran(page: Any) -> list[Any]:
    out: list[Any] = page.evaluate("() => window.__ran.splice(0)")
    return out


def tool_events(page: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = page.evaluate("() => window.__tools.splice(0)")
    return out
