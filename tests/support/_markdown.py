"""What a real CommonMark renderer makes live of some Markdown: the oracle of the tests
that exported notebooks, scripts and eval reports render nothing from model text.

markdown-it-py renders it twice: as CommonMark (raw HTML on, as Jupyter and VS Code
allow it), and with GFM's tables and strikethrough (tables cut code spans at ``|``).
Any element outside the inert set below, or any attribute but a code block's
language class and a table cell's alignment, counts: an ``<img>``, a link, an
autolink, a tag or comment passed through as raw HTML.
"""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

__all__ = ["live_markdown", "rendered"]

_RENDERERS = {
    "commonmark": MarkdownIt("commonmark"),
    "gfm": MarkdownIt("commonmark").enable(["table", "strikethrough"]),
}
_INERT = {
    *("p", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br", "s"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"),
}


def _inert_attribute(tag: str, name: str, value: str | None) -> bool:
    return (
        (tag == "code" and name == "class" and (value or "").startswith("language-"))
        or (tag in ("th", "td") and name == "style" and (value or "").startswith("text-align:"))
        or (tag == "ol" and name == "start")
    )


class _Live(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _INERT:
            self.found.append(f"<{tag}>")
        self.found += [f"<{tag} {n}>" for n, v in attrs if not _inert_attribute(tag, n, v)]

    def handle_comment(self, data: str) -> None:
        self.found.append("<!-- -->")

    def handle_decl(self, decl: str) -> None:
        self.found.append(f"<!{decl}>")

    def handle_pi(self, data: str) -> None:
        self.found.append(f"<?{data}>")


def rendered(markdown: str, renderer: str = "commonmark") -> str:
    """``markdown`` as HTML, by ``renderer`` ("commonmark" or "gfm")."""
    return _RENDERERS[renderer].render(markdown)


def live_markdown(markdown: str) -> list[str]:
    """Every live element either renderer makes of ``markdown`` (empty: inert)."""
    found = []
    for name in _RENDERERS:
        parser = _Live()
        parser.feed(rendered(markdown, name))
        parser.close()
        found += [f"{name}: {item}" for item in parser.found]
    return found
