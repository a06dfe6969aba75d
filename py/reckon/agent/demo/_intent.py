"""The demo model's reading of one question: an ``Intent``, filled in by the parsers.

Apart from ``_intents`` (the grammar) so that the math grammar and the planners
can all name the type without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reckon.agent._types import JSONDict
from reckon.agent.demo._columns import Column

__all__ = ["Intent"]


@dataclass
class Intent:
    """One request. ``kind`` is overview, describe, chart, groupby, top, correlation,
    count, aggregate, math, nofile, nocolumn or help."""

    kind: str
    question: str = ""
    file: JSONDict | None = None
    columns: list[Column] = field(default_factory=list)
    all_columns: list[Column] = field(default_factory=list)
    chart: str = ""
    agg: str = ""
    n: int = 5
    ascending: bool = False
    op: str = ""
    value: str = ""
    math: str = ""
    expression: str = ""
    rhs: str = ""
    lower: str = ""
    upper: str = ""
    variable: str = "x"
    # "which <group> has the most <measure>": the columns named, whatever their dtypes.
    group: Column | None = None
    measure: Column | None = None
    # "per month": the period ("month") and the date column it groups by.
    period: str = ""
    when: Column | None = None
    # A part of the question the plan leaves out ("per flavour"), said in the answer.
    unhonoured: str = ""

    @property
    def numeric(self) -> list[Column]:
        return [c for c in self.columns if c.numeric]

    @property
    def categorical(self) -> list[Column]:
        return [c for c in self.columns if not c.numeric]
