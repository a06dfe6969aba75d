"""Text from a model or a person written into Markdown that renders nothing live.

An exported notebook's Markdown cells, a ``# %%`` script's Markdown comments and
``reckon eval``'s report.md are opened in renderers we do not control (Jupyter,
VS Code, GitHub). Text there may have been copied from an uploaded file, so no part
of it may become raw HTML, a link, an image or an autolink under a CommonMark
renderer (nor GFM's tables, which split code spans at ``|``).

Finding which parts of the text a renderer would take as code is what went wrong
before (mismatched backtick runs, a code span a heading cuts in two). So the text is
not edited in place but written out again in a form with one reading:

- prose keeps its line structure and emphasis, with every character that could
  start HTML, a link, an image or an entity escaped (``<`` ``&`` ``[`` ``]`` and
  unmatched backticks), and the ``://``, ``www.`` and ``@`` that GFM renderers turn
  into links broken by a backslash (which CommonMark shows as nothing);
- a code span becomes one balanced span on one line (CommonMark reads its line
  breaks as spaces anyway), or escaped text when it holds a ``|``;
- a fenced block becomes a fence at the left margin after a blank line, longer than
  any backtick run inside it: the only construct that can end it is its own closing
  fence, and no list or quote around it survives the blank line.

Everything outside a span or a fence is inert wherever a renderer puts it; a span or
fence, wherever it lands, is code. Only the standard library is used: this runs in
the agent worker.
"""

from __future__ import annotations

import bisect
import re
import string

__all__ = ["fenced", "inert_markdown", "markdown_line"]

_PUNCTUATION = frozenset(string.punctuation)
_FENCE_OPEN = re.compile(r"^( *)(`{3,}|~{3,})(.*)$")
_INFO = re.compile(r"^[A-Za-z0-9_+#.-]{1,40}$")
_TEXT = {"<": "&lt;", "&": "&amp;", "[": "\\[", "]": "\\]", "`": "\\`"}
# For one-line literal text: the characters that mean something anywhere in a line.
_LITERAL = frozenset("\\`*_[]<>&|~")


def _lines(text: str) -> list[str]:
    # CommonMark ends a line at \n, \r\n and a lone \r: all become \n first, or a
    # lone \r would start a line (an HTML block) inside what looked like one line.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _starts_bare_link(text: str, i: int) -> bool:
    """Whether ``text[i]`` is the ``:`` of ``scheme://``, the ``.`` of ``www.`` or an
    ``@``: what GFM renderers (marked, markdown-it's linkify) make links of without
    brackets. A backslash before it stops them; CommonMark shows the text as is."""
    char = text[i]
    if char == "@":
        return True
    if char == ":":
        return i > 0 and text[i - 1].isalnum() and text.startswith("//", i + 1)
    if char == ".":
        before = text[max(0, i - 4) : i].lower()
        return before.endswith("www") and not (len(before) == 4 and before[0].isalnum())
    return False


def _escaped_text(text: str) -> str:
    """Prose with nothing that can open HTML, a link, an image or an entity."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCTUATION:
            out.append(text[i : i + 2])  # the writer's own escape: already literal
            i += 2
            continue
        out.append("\\" + char if _starts_bare_link(text, i) else _TEXT.get(char, char))
        i += 1
    return "".join(out)


def _run_at(text: str, start: int) -> int:
    end = start
    while end < len(text) and text[end] == "`":
        end += 1
    return end - start


class _Runs:
    """Where the backtick runs of a paragraph start, by length: finding the run that
    closes a span is a lookup, so a text of many unmatched runs costs no rescans."""

    def __init__(self, text: str) -> None:
        self.starts: dict[int, list[int]] = {}
        for run in re.finditer(r"`+", text):
            self.starts.setdefault(len(run[0]), []).append(run.start())

    def closing(self, after: int, length: int) -> int | None:
        """Where the first run of exactly ``length`` at or after ``after`` begins (inside
        a code span a backslash escapes nothing, so raw runs are what close it)."""
        starts = self.starts.get(length, [])
        index = bisect.bisect_left(starts, after)
        return starts[index] if index < len(starts) else None


def _paragraph(text: str) -> str:
    """One paragraph (no blank line inside): code spans kept, the rest escaped."""
    out: list[str] = []
    runs = _Runs(text)
    prose_start = i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCTUATION:
            i += 2
            continue
        if char != "`":
            i += 1
            continue
        length = _run_at(text, i)
        close = runs.closing(i + length, length)
        if close is None:
            i += length  # an unmatched run is text (and escaped as such)
            continue
        out.append(_escaped_text(text[prose_start:i]))
        code = text[i + length : close].replace("\n", " ")
        ticks = "`" * length
        if "|" in code:
            # A GFM table cuts a row at every `|`, even inside a code span.
            out.append("\\`" * length + _escaped_text(code) + "\\`" * length)
        else:
            out.append(ticks + code + ticks)
        prose_start = i = close + length
    out.append(_escaped_text(text[prose_start:]))
    return "".join(out)


def fenced(text: str, info: str = "") -> str:
    """``text`` as a fenced code block that nothing inside it can close; ``info`` (a
    language name) is kept only when it is one plain word. Put it after a blank line."""
    lines = _lines(text.rstrip())
    longest = max((len(run) for run in re.findall(r"`+", "\n".join(lines))), default=0)
    fence = "`" * max(3, longest + 1)
    word = info.strip().split(" ", 1)[0] if info.strip() else ""
    word = word if _INFO.match(word) else ""
    return "\n".join([fence + word, *lines, fence])


def _fence_end(lines: list[str], start: int, char: str, length: int) -> int:
    closing = re.compile(rf"^ *{re.escape(char)}{{{length},}}[ \t]*$")
    for index in range(start, len(lines)):
        if closing.match(lines[index]):
            return index
    return len(lines)  # unclosed: CommonMark makes the rest of the text code


def inert_markdown(text: str) -> str:
    """``text`` as Markdown whose emphasis, lists, headings and code still render, and
    in which nothing is HTML, a link or an image (see the module's docstring)."""
    lines = _lines(text)
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.extend(_paragraph("\n".join(paragraph)).split("\n"))
            paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening[2][0] == "`" and "`" in opening[3]):
            flush()
            indent, run = len(opening[1]), opening[2]
            end = _fence_end(lines, index + 1, run[0], len(run))
            body = [_dedent(body_line, indent) for body_line in lines[index + 1 : end]]
            if not out or out[-1].strip():
                out.append("")  # a fence after a blank line belongs to no list or quote
            out.extend(fenced("\n".join(body), opening[3]).split("\n"))
            index = end + 1
            continue
        if line.strip():
            paragraph.append(line)
        else:
            flush()
            out.append(line)
        index += 1
    flush()
    return "\n".join(out)


def _dedent(line: str, indent: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def markdown_line(text: str) -> str:
    """``text`` shown literally on one line of Markdown (a table cell, a list item, a
    heading): every character that means something escaped, line breaks as spaces."""
    flat = " ".join(part.strip() for part in _lines(text)).strip()
    out = []
    for i, char in enumerate(flat):
        # A first character could start a block (a heading, a list, a quote).
        special = char in _LITERAL or (i == 0 and char in _PUNCTUATION)
        out.append("\\" + char if special or _starts_bare_link(flat, i) else char)
    return "".join(out)
