"""One value read from what a cell showed: its printed output (``North``, ``'North'``,
``42.5``) or the repr of its last expression (``np.float64(42.5)``,
``Timestamp('1998-12-31 00:00:00')``), and whether it fits an answer form's
placeholder (a number for ``[value]``, words for ``[name]``, a date for
``[YYYY-MM-DD]``)."""

from __future__ import annotations

import re

from reckon.agent.checks._grounding import find_numbers

__all__ = ["LABEL_PLACEHOLDER", "fitting_value", "lone_value", "shown_value"]

# A placeholder that asks for a label, not a number: ``[name]``, ``[state code]``.
LABEL_PLACEHOLDER = re.compile(r"name|code|label|category|word|text|string", re.IGNORECASE)
# ``[id]``, ``[customer_id]``: a label too, though often written as a number, so no
# lone value is taken for it.
_ID = re.compile(r"(?:\b|_)id\b", re.IGNORECASE)
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# One value as print() writes it: a number, or a word or a few (a name, a date).
_VALUE = re.compile(r"[^\s()\[\]{}<>@=:,;|][^\n()\[\]{}<>@=:;|]{0,58}")
_MISSING = {"nan", "none", "nat", "<na>", ""}
# A date as pandas, numpy or print() writes it: 1998-12-31, 1998-12-31 00:00:00,
# 1998-12-31T00:00:00.000000000 (a datetime64 printed whole).
_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?(?:\.\d+)?)?")
_DATE_PLACEHOLDER = re.compile(r"YYYY|HH:MM", re.IGNORECASE)
# The repr of a one-value last expression: np.float64(3.5), np.str_('East'),
# Timestamp('2012-06-26 20:00:00'); numpy 2 writes its scalars so.
_WRAPPED = re.compile(r"(?:np|numpy)\.\w+\((.*)\)|Timestamp\((['\"][^'\"]*['\"])\)", re.DOTALL)


def lone_value(output: str) -> str:
    """The one value a cell's output is (``North``, ``'North'``, ``42.5``), or ``""``
    when it is more than one (a table, a Series, several lines, a tuple)."""
    text = output.strip()
    if "\n" in text or not text or len(text) > 60 or text[0] in "([{<":
        return ""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    return text if text and "[" not in text and "]" not in text else ""


def shown_value(result: dict[str, object]) -> str:
    """What a run showed as its one output: its stdout, or when it printed nothing, the
    repr of its last expression with numpy's or pandas' wrapper taken off."""
    stdout = str(result.get("stdout") or "")
    if stdout.strip():
        return stdout
    shown = result.get("result")
    text = str(shown.get("text") or "") if isinstance(shown, dict) else ""
    wrapped = _WRAPPED.fullmatch(text.strip())
    if wrapped:
        text = wrapped.group(1) or wrapped.group(2)
    return text


def fitting_value(output: str, placeholder: str) -> str:
    """The one value ``output`` is, written as ``placeholder`` asks, or ``""``: a number
    for a value, words for a label, a date cut to the parts a date placeholder has."""
    text = lone_value(output)
    if text.startswith("@") and text.count("@") == 1:
        text = text[1:]  # print(f"@{city}"): the form's value, its name left out
    if _DATE_PLACEHOLDER.search(placeholder):
        return _date_value(text, placeholder.strip().upper())
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")  # f"{x:,}": the number, as a form's value is written
    if not _VALUE.fullmatch(text) or text.lower() in _MISSING or text.startswith("np."):
        return ""
    if text.endswith("%"):
        return ""  # a share asked as a fraction or as a percentage: the model says which
    numbers = find_numbers(text)
    number = len(numbers) == 1 and numbers[0].text == text
    if _ID.search(placeholder):
        return ""
    if LABEL_PLACEHOLDER.search(placeholder):
        return "" if number else text
    return text if number else ""


def _date_value(text: str, placeholder: str) -> str:
    """``text`` as the date placeholder writes it (``YYYY``, ``YYYY-MM-DD``,
    ``YYYY-MM-DD HH:MM:SS``), or ``""`` when it lacks a part the placeholder has."""
    if placeholder == "YYYY" and re.fullmatch(r"1[89]\d\d|20\d\d|2100", text):
        return text  # a year, not any four-digit number (a total where a year is asked)
    stamp = _STAMP.fullmatch(text)
    if stamp is None:
        return ""
    date, minutes, seconds = stamp.groups()
    if placeholder == "YYYY":
        return date[:4]
    if "HH:MM" not in placeholder:
        return date if placeholder.startswith("YYYY-MM-DD") else ""
    if minutes is None:
        return ""
    return f"{date} {minutes}{seconds or ':00' if 'HH:MM:SS' in placeholder else ''}"
