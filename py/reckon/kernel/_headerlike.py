"""Which column names of an upload look like a header, for schema privacy.

The reader takes a file's first full row as its header, so a file without one has a
row of data as its column names ("Cornelius Ashdown", "555-01-2345", "88888"), and the
names are shown to the model as schema. Schema privacy keeps a name only when it looks
like a header: names that do not count as values (``header_names``).

The rule, per table:

- A name is a label only if it could be one: text that is not a number, a date, an
  e-mail address or a link, with at most four digits (a phone number or an id has more).
- A label *stands out* from its column when it is unlike the column's values: text over
  a column of numbers, dates or true/false, or, over text, a shape that none of the
  values has (the shape: letters as ``A``/``a`` by case, digits as ``9``, runs
  collapsed: ``name`` is ``a``, ``Alice Smith`` is ``Aa Aa``, ``555-01-2345`` ``9-9-9``),
  or one far shorter or longer than nearly all of them (outside the 5th to 95th
  percentile of their lengths, over 20 values or more).
- The row is a header when at least half of its labels stand out; then all its labels
  are kept. Otherwise only the labels that stand out are.

So a row of data, which is shaped like the rows under it, is hidden, and a header
whose words are lower case, or over numbers, e-mails and names, is kept. A table whose
header is shaped like its values in most columns (``Country, City`` over ``France,
Paris``) has those names hidden too: the person can allow the columns (``allowColumns``).
Names the reader made (positions of a file without a header, ``Unnamed: 3``,
``extra_1``) are not from the file and are kept; so is a run of three or more years in
increasing order (``2000, 2001, 2002``), the header of a table of periods.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["header_names", "shape"]

_SAMPLE = 500
_FOR_LENGTHS = 20  # values a column needs before a name's length can stand out
_SYNTHETIC = re.compile(r"Unnamed: \d+|extra_\d+")
_NUMBER = re.compile(r"[-+(]?[$€£¥]?\s?\d[\d,.'’ _]*%?\)?")
_DATE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[ T].*)?|\d{1,2}:\d{2}(?::\d{2})?")
_LINK = re.compile(r"[^@\s]+@[^@\s]+\.\w+|\w+://\S+|www\.\S+")
_FIRST_YEAR, _LAST_YEAR = 1800, 2100
_BOOLEAN = {"true", "false", "yes", "no"}


def shape(text: str) -> str:
    """``text`` by character class, runs collapsed: ``Alice Smith`` is ``Aa Aa``."""
    out: list[str] = []
    for char in text.strip():
        if char.isdigit():
            kind = "9"
        elif char.isalpha():
            kind = "A" if char.isupper() else "a"
        elif char.isspace():
            kind = " "
        else:
            kind = char
        if not out or out[-1] != kind:
            out.append(kind)
    return "".join(out)


def header_names(frame: Any) -> tuple[list[str], list[str]]:
    """The names of ``frame``'s columns as ``(kept, values)``: the ones that look like a
    header, and the ones that count as values (see the module's docstring)."""
    columns = list(frame.columns)
    synthetic = [_made_by_the_reader(name, index) for index, name in enumerate(columns)]
    periods = _periods(columns)
    labels: dict[int, bool] = {i: True for i in periods}  # position: stands out
    judged: list[bool] = [True] * len(periods)  # of the labels over a column with values
    for index, name in enumerate(columns):
        if synthetic[index] or index in periods or not _could_be_a_label(str(name)):
            continue
        values = frame.iloc[: _SAMPLE * 2, index].dropna()
        labels[index] = len(values) > 0 and _stands_out(str(name), values)
        if len(values):
            judged.append(labels[index])
    header_row = bool(judged) and sum(judged) >= len(judged) / 2
    kept: list[str] = []
    hidden: list[str] = []
    for index, name in enumerate(columns):
        keep = synthetic[index] or (index in labels and (header_row or labels[index]))
        (kept if keep else hidden).append(str(name))
    return kept, hidden


def _periods(columns: list[Any]) -> set[int]:
    """Positions of a run of three or more years in increasing order (``2000, 2001,
    2002``: a table of periods): a header, as no row of data is."""
    years = []
    for index, name in enumerate(columns):
        text = str(name).strip()
        if text.isdigit() and len(text) == 4 and _FIRST_YEAR <= int(text) <= _LAST_YEAR:
            years.append((index, int(text)))
    runs: list[list[tuple[int, int]]] = []
    for index, year in years:
        if runs and runs[-1][-1][0] == index - 1 and runs[-1][-1][1] < year:
            runs[-1].append((index, year))
        else:
            runs.append([(index, year)])
    return {index for run in runs if len(run) >= 3 for index, _ in run}


def _made_by_the_reader(name: Any, index: int) -> bool:
    if isinstance(name, int) and not isinstance(name, bool):
        return name == index  # a file without a header: columns are numbered
    return bool(_SYNTHETIC.fullmatch(str(name)))


def _could_be_a_label(name: str) -> bool:
    text = name.strip()
    if not text or not any(c.isalpha() for c in text):
        return False
    if _NUMBER.fullmatch(text) or _DATE.fullmatch(text) or _LINK.search(text):
        return False
    return sum(c.isdigit() for c in text) <= 4


def _stands_out(name: str, values: Any) -> bool:
    import pandas as pd

    if pd.api.types.is_bool_dtype(values):
        return name.strip().lower() not in _BOOLEAN
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return True  # a label (not a number or a date) over numbers or dates
    texts = [str(v).strip() for v in values.head(_SAMPLE).tolist()]
    if name.strip().casefold() in {t.casefold() for t in texts}:
        return False
    if shape(name) not in {shape(t) for t in texts}:
        return True
    # Shaped like some values, but far shorter or longer than nearly all of them.
    lengths = sorted(len(t) for t in texts)
    if len(lengths) < _FOR_LENGTHS:
        return False
    low, high = lengths[len(lengths) // 20], lengths[-1 - len(lengths) // 20]
    return not low <= len(name.strip()) <= high
