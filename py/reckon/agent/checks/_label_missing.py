"""A label read as NaN from the row of the largest value: "Which function (column F) has
the largest 'Gasto total 2011'?" answered ``@function[nan]``.

Seen in runs 7, 8 and 9 of the real-model benchmark: a budget's largest rows are its
groups' totals, whose function column is blank; the model picked such a row each time,
and told twice (an empty selection, then a row with the label missing) it answered nan
a third time. The question says which row it means: the one with the largest value of
a column it names, among the rows that have the label it asks for. Where the question
names both columns and they are in one table, Reckon reads the label from that row
itself, from the file as loaded (the model's own frame may be filtered), and the model
answers from the output. The model's reading (a row picked, not a total per label) is
kept: only the rows without the label are left out.
"""

from __future__ import annotations

import re

from reckon.agent._steps import Correction
from reckon.agent._types import JSONDict
from reckon.agent.checks._label_max import asked_extreme, named_measure

__all__ = ["missing_label_correction"]

_MISSING = frozenset({"nan", "none", "null", "<na>", "nat"})
_NUMERIC = re.compile(r"^(?:u?int|float|Int|UInt|Float)\d*$")
_ASIDE_COLUMN = re.compile(r"^\s*(?:the\s+)?column\s+['\"`]?(?P<name>[^'\"`]+?)['\"`]?\s*$", re.I)

_RAN = (
    "Your answer gives {value}: the row your code read {label!r} from has none. In tables "
    "with total or subtotal rows, those rows are often the largest and leave label "
    "columns empty. Reckon read {label!r} from the row with the {extreme} {measure!r} "
    "among the rows that have one:\n```python\n{code}\n```\n"
)


def missing_label_correction(question: str, value: str, environment: JSONDict) -> Correction | None:
    """The cell that reads the asked label from the row with the largest (or smallest)
    named measure, leaving out rows without a label; None unless ``value`` (the
    answer's) is NaN or None and the question names a label column and one numeric
    measure column of the same upload."""
    if value.strip().strip("'\"`").lower() not in _MISSING:
        return None
    asked = asked_extreme(question)
    if asked is None:
        return None
    for entry in environment.get("files") or []:
        if not isinstance(entry, dict) or not entry.get("read_with"):
            continue
        dtypes = _dtypes(entry)
        label = _label(asked.noun, asked.aside, list(dtypes))
        if label is None:
            continue
        measure = named_measure(asked.rest, list(dtypes), label)
        if not measure or not _NUMERIC.match(dtypes[measure]):
            continue
        code = (
            f"labelled = {entry['read_with']}.dropna(subset=[{label!r}])\n"
            f"print(labelled.loc[labelled[{measure!r}].{asked.idx}(), {label!r}])"
        )
        message = _RAN.format(
            value=value, label=label, extreme=asked.extreme, measure=measure, code=code
        )
        note = f"Reckon read {label!r} from the row with the {asked.extreme} {measure!r}."
        return Correction(code, message, note)
    return None


def _dtypes(entry: JSONDict) -> dict[str, str]:
    return {
        str(c.get("name")): str(c.get("dtype") or "")
        for c in entry.get("columns") or []
        if isinstance(c, dict)
    }


def _label(noun: str, aside: str, names: list[str]) -> str | None:
    """The column the question asks a value of: named in its aside ("(column F)"), or
    spelled as its noun (``Function``, ``functions``)."""
    said = _ASIDE_COLUMN.match(aside)
    if said and said.group("name") in names:
        return said.group("name")
    spelled = [n for n in names if n.strip().lower() in (noun, noun.rstrip("s"), noun + "s")]
    return spelled[0] if len(spelled) == 1 else None
