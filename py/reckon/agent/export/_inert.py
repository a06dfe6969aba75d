"""HTML outputs made inert before they leave in an exported notebook.

A notebook opened in Jupyter, VS Code or a viewer renders its ``text/html`` outputs.
They can come from a file's contents: a cell whose value has a ``_repr_html_`` of
the file's text. So an export keeps what the page itself shows (``render.js``
``safeTable``): the first table, its table tags and text, ``colspan``/``rowspan``.
(Markdown cells: ``_inert_markdown``.)
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

__all__ = ["safe_table_html"]

_TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption"}
_SPAN = re.compile(r"^\d{1,3}$")
_DROPPED = {"script", "style", "template", "noscript", "iframe", "object", "svg", "math"}


class _TableCopy(HTMLParser):
    """Copies the first ``<table>``: table tags kept, text escaped, all else dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []  # the table tags open inside the first table
        self.done = False
        self.skipping = 0  # inside an element whose text is not text (a script)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self.skipping += 1
        if self.done or self.skipping or tag not in _TABLE_TAGS:
            return
        if not self.open and tag != "table":
            return
        kept = "".join(
            f' {name}="{value}"'
            for name, value in attrs
            if name in ("colspan", "rowspan") and value and _SPAN.match(value)
        )
        extra = ' class="dataframe"' if not self.open else ""
        self.open.append(tag)
        self.out.append(f"<{tag}{extra}{kept}>")

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.done or self.skipping or tag not in self.open:
            return
        while self.open:  # an end tag closes what was left open inside it, as HTML does
            last = self.open.pop()
            self.out.append(f"</{last}>")
            if last == tag:
                break
        self.done = not self.open

    def handle_data(self, data: str) -> None:
        if self.open and not self.done and not self.skipping:
            self.out.append(escape(data, quote=False))


def safe_table_html(html: str) -> str | None:
    """The first table of ``html`` with only table markup and text; ``None`` without one."""
    parser = _TableCopy()
    parser.feed(html)
    parser.close()
    if not parser.out:
        return None
    # A cut-off table (a repr that was capped) is closed, so the notebook's HTML is whole.
    return "".join(parser.out) + "".join(f"</{tag}>" for tag in reversed(parser.open))
