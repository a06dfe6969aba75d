"""A line of a cell that is the answer's form, run as the print it was meant to be.

A small model that prints its answer in the asked form often breaks the f-string over
two lines, so the second starts with the form itself:

    print(f"@parent[name]: {parent}")
    @active[value]: {active.sum()}")

That is a SyntaxError. Its hint says the form is for the answer, not for code; seen on
a question not written for the agent, the 1.5B model wrote the same line four times
with that hint beside it, until the answer gave up. What it meant is plain: print the
line, its ``{...}`` filled. So when a cell does not parse, each line that starts with a
form and holds a ``{...}`` runs as ``print(f"...")`` (a dangling ``")`` of the broken
print left out), and so does a form given a value (``@province[name] =
top['Cluster'].values[0]``, twice in a row in a benchmark run), as the form with that
value after a colon; if the cell then parses, the step keeps the model's code as
``proposed``, and the model is told. A line without ``{...}`` or a value
(``@is_normal[p < 0.05]``), or with a value typed out (``@total[value] = 3``), has
nothing to print but the model's own text: it is left to fail with the hint.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["FormLines", "print_form_lines"]

# A form at the start of a line, with a {...} to fill after it.
_FORM_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<text>@[A-Za-z_]\w*\[[^\[\]\n]*\].*\{.+\}.*)$")
# A form given a value as if it were a variable.
_FORM_SET = re.compile(
    r"^(?P<indent>[ \t]*)(?P<form>@[A-Za-z_]\w*\[[^\[\]\n]*\])\s*=(?!=)\s*(?P<value>\S.*)$"
)
# What is left of the broken print at the line's end: its closing quote and bracket.
_DANGLING = re.compile(r"""["']*\)?\s*$""")


@dataclass(frozen=True)
class FormLines:
    """The code to run and the lines of it that were forms (none: ``code`` as given)."""

    code: str
    lines: tuple[str, ...] = ()

    def note(self) -> str:
        if not self.lines:
            return ""
        shown = self.lines[0] if len(self.lines) == 1 else f"{self.lines[0]} (and more)"
        return (
            f"\nnote: the line {shown} is the answer's form, not Python: it ran as "
            'print(f"..."). Print values with code; write the form in your final answer'
        )


def print_form_lines(code: str) -> FormLines:
    """``code`` with each line that starts with a form to fill, or gives a form a
    value, as a print of it, when ``code`` does not parse and the result does."""
    if "@" not in code or _parses(code):
        return FormLines(code)
    lines = code.split("\n")
    found: list[str] = []
    for number, line in enumerate(lines):
        if (setting := _FORM_SET.match(line)) and not _literal(setting["value"]):
            indent, text = setting["indent"], f"{setting['form']}: {{{setting['value']}}}"
        elif shown := _FORM_LINE.match(line):
            indent, text = shown["indent"], _DANGLING.sub("", shown["text"])
        else:
            continue
        if '"""' in text:
            continue
        found.append(line.strip())
        lines[number] = f'{indent}print(f"""{text}""")'
    fixed = "\n".join(lines)
    if not found or not _parses(fixed):
        return FormLines(code)
    return FormLines(fixed, tuple(found))


def _literal(value: str) -> bool:
    """Whether ``value`` is a number or text typed out (``3``, ``-2.5``, ``'East'``):
    printed, it would pass the model's guess off as output; it is left to the hint."""
    try:
        node = ast.parse(value.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return False
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True
