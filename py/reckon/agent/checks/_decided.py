"""A label the question's own rule decides from a computed number, given in words but
decided by no code: ``@distribution_normality[normal]`` after a cell that printed the
test's result (``pvalue=0.0``) and nothing else, where the question said "normal if
the p-value is greater than 0.05".

Seen in public benchmark questions: the 1.5B model printed the statistic, then read it
against the rule in its head, and got the side wrong. Numbers are traced to outputs
(``_grounding``) and names too (``_names``), but a label the question offers ("normal"
or "not normal", "linear", "none", true or false) is in the question, so it passed as
given. Told to decide it in code (an ``if`` on the value, printing the label), a coder
model does what it is good at; the label is then in an output like any other value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM
from reckon.agent.checks._names import plain

__all__ = ["DECISION_MESSAGE", "NUMBER_GIVEN", "undecided_label"]

DECISION_MESSAGE = (
    "Your answer gives {form}, a label the question's rule decides from a computed value, "
    "but no code decided it: no output shows it. Decide it in code: compare the computed "
    "value with the rule's threshold in an if statement and print the label it picks, "
    "then give the final answer from that output, ending with {asked} filled."
)
# A rule over a number: "greater than 0.05", "less than or equal to 0.1", ">= 0.5",
# "a significance level (alpha) of 0.05".
_RULE = re.compile(
    r"\b(?:greater|less|smaller|larger|more|lower|higher|bigger|above|below)\b"
    r"(?:\s+than)?(?:\s+or\s+equal\s+to)?\s*\(?[-+]?(?:\d*\.)?\d"
    r"|[<>]=?\s*[-+]?(?:\d*\.)?\d|\bsignificance\s+level\b|\balpha\b",
    re.IGNORECASE,
)
# The labels the question offers: quoted ("normal" or "not normal"), or a truth value.
_QUOTED = re.compile(r"[\"“']([^\"”'\n]{1,40})[\"”']")
_TRUTH = re.compile(r"\b(true|false|yes|no)\b", re.IGNORECASE)
# A number where one of the form's labels goes: the question says which ("where
# "skewness" is a string that can be "symmetric", "skewed_right" or "skewed_left"").
NUMBER_GIVEN = (
    "Your answer gives {form}, a number, where the question asks for one of its labels "
    "({labels}), decided by its rule from the computed value. Decide it in code: compare "
    "the value with the rule's thresholds in an if statement and print the label it "
    "picks, then give the final answer from that output, ending with {asked} filled."
)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?%?", re.IGNORECASE)


def undecided_label(question: str, answer: str, cells: Iterable[tuple[str, str]]) -> str:
    """``DECISION_MESSAGE`` for the first asked form whose value is a label the question
    offers under a rule over a number, when no output of ``cells`` (``(code, output)``
    of this answer's cells that ran) shows that label, or ``NUMBER_GIVEN`` for a number
    given where the question names the labels that go; else ``""``. A label inside a
    longer one the output shows ("normal" in "not normal") is not shown."""
    if not _RULE.search(question):
        return ""
    asked = ASKED_FORM.findall(question)
    names = {name.lower() for name, _ in asked}
    placeholders = {plain(p) for _, p in asked} | names
    offered = {plain(q) for q in _QUOTED.findall(question) if re.search(r"[^\W\d_]", q)}
    offered = (offered | {plain(t) for t in _TRUTH.findall(question)}) - placeholders
    shown = _labels_in("\n".join(output for _, output in cells), offered)
    forms = " ".join(dict.fromkeys(f"@{n}[{p}]" for n, p in asked))
    for name, value in GIVEN_FORM.findall(answer):
        label, form = plain(value), f"@{name}[{value.strip()}]"
        if name.lower() in names and label in offered and label not in shown:
            return DECISION_MESSAGE.format(form=form, asked=forms)
        placeholder = next((p for n, p in asked if n.lower() == name.lower()), "")
        labels = _labels_of(question, placeholder) if _NUMBER.fullmatch(value.strip()) else []
        if labels:
            listed = ", ".join(f'"{label}"' for label in labels)
            return NUMBER_GIVEN.format(form=form, labels=listed, asked=forms)
    return ""


def _labels_of(question: str, placeholder: str) -> list[str]:
    """The labels the question names for a form's ``placeholder``: the quoted texts of
    the sentence that calls it a string."""
    said = re.search(
        rf"[\"“]{re.escape(placeholder.strip())}[\"”]\s+is\s+a\s+string\b([^\n.;]*)", question
    )
    return _QUOTED.findall(said.group(1)) if said and placeholder.strip() else []


def _labels_in(text: str, offered: set[str]) -> set[str]:
    """The offered labels ``text`` shows, longest first: a shorter one inside a longer
    one's place does not count."""
    found: set[str] = set()
    taken: list[tuple[int, int]] = []
    flat = plain(text)
    for label in sorted(offered, key=len, reverse=True):
        for match in re.finditer(rf"(?<!\w){re.escape(label)}(?!\w)", flat):
            if not any(a <= match.start() < b for a, b in taken):
                found.add(label)
                taken.append(match.span())
    return found
