"""Which columns of a table look like personal data, for the upload's description
(``inspect``'s ``personal``): the page names them when the file is added and offers
schema privacy before anything is asked.

Each kind is judged on the column's values, never on its name alone: a column called
``email`` that holds product codes is not flagged. Kinds whose values alone are
ambiguous (a person's name looks like a city's, a date of birth like any date, a
national id like any code) also need a name that says so. Only the first values of a
column are read (``_SAMPLE``), so a wide upload is judged in milliseconds.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

__all__ = ["KINDS", "personal_columns"]

# The kinds, in the order a column is tested (the first that fits is its kind).
KINDS = ("email", "card", "national_id", "phone", "birth_date", "address", "name")

_SAMPLE = 200  # values of a column that are read
_PROBE = 40  # the first values: a column that few of them fit is no kind
_SHARE = 0.6  # of the values read, how many must fit a kind
_MAX_COLUMNS = 300

_EMAIL = re.compile(r"^[\w.+'-]+@[\w-]+(?:\.[\w-]+)+$")
_CARD = re.compile(r"^\d{4}(?:[ -]?\d{2,4}){2,4}\d{0,3}$")
_SSN = re.compile(r"^\d{3}-\d{2}-\d{4}$")  # US social security number, as written
_NINO = re.compile(r"^[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]$")  # UK
_PHONE_CHARS = re.compile(r"^\+?[\d\s().\-/]+$")
_DATE = re.compile(
    r"^(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2}))"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$"
)
_MONTHS = (
    "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june"
    "|july|august|september|october|november|december"
)
_WORDY_DATE = re.compile(
    rf"^(?:\d{{1,2}}\.? (?:{_MONTHS})\.?,? \d{{4}}|(?:{_MONTHS})\.? \d{{1,2}},? \d{{4}})$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)|(?<!\d)\d{1,2}[-/.]\d{1,2}[-/.](\d{2})$")
# Street types in the languages uploads come in; an address is a number and one of these.
_STREET = re.compile(
    r"(?<![^\W\d_])(?:street|st|road|rd|avenue|ave|av|boulevard|blvd|lane|ln|drive|dr|court|ct"
    r"|place|pl|square|sq|terrace|way|close|crescent|highway|hwy|parkway|pkwy|circle|cir"
    r"|alley|row|rue|chemin|allée|via|viale|piazza|calle|avenida|plaza|carrer|rua|straat"
    r"|laan|gracht|plein|vej|gade|ulica|ul|strasse|straße|str|weg|gasse|platz|allee|ring)"
    r"(?![^\W\d_])"
    r"|[^\W\d_]{3,}(?:strasse|straße|str|weg|gasse|platz|allee|straat|laan|gade|vej)(?![^\W\d_])",
    re.IGNORECASE,
)
_HOUSE_NUMBER = re.compile(r"(?<![\w-])\d{1,5}[a-zA-Z]?(?![\w-])")
_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "du", "la", "le", "del", "della",
              "bin", "ibn", "al", "el", "y", "ten", "ter", "st", "zu", "dos", "das"}  # fmt: skip
_NAME_TOKEN = re.compile(r"^[^\W\d_][^\W\d_'’.-]*(?:[-'’][^\W\d_]+)*\.?$")

# What a column's name says, as words (``MailingAddress1`` is mailing, address, 1).
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_A-Za-z]+")
_PHONE_WORDS = {"phone", "tel", "telephone", "mobile", "cell", "fax", "handy", "telefon",
                "telefono", "téléphone", "portable", "whatsapp", "msisdn"}  # fmt: skip
_ID_WORDS = {"ssn", "sin", "nino", "nin", "passport", "tin", "itin", "bsn", "nif", "nie",
             "dni", "cpf", "aadhaar", "pesel", "personnummer", "nhs", "medicare", "insee",
             "steuerid", "ahv", "codice", "fiscal"}  # fmt: skip
_ID_PHRASES = ("social security", "national id", "national insurance", "tax id", "id card",
               "identity", "personal number", "id number", "insurance number")  # fmt: skip
_BIRTH = re.compile(r"birth|dob|born|geburt|naissance|nacimiento|nascita|bday", re.IGNORECASE)
_ADDRESS = re.compile(r"address|addr|street|strasse|straße|adresse|direcci|indirizzo", re.I)
_PERSON_NAME_PARTS = {"first", "last", "given", "family", "sur", "surname", "fore", "forename",
                      "full", "middle", "maiden", "nick", "nickname", "firstname",
                      "lastname", "fullname", "givenname", "familyname"}  # fmt: skip
_NAME_ALONE = {"surname", "forename", "firstname", "lastname", "fullname", "givenname",
               "familyname", "maiden", "nickname"}  # fmt: skip
_PEOPLE = {"person", "people", "employee", "customer", "patient", "client", "contact",
           "member", "student", "worker", "author", "owner", "manager", "user", "applicant",
           "recipient", "sender", "holder", "guest", "passenger", "driver", "teacher", "staff",
           "participant", "respondent", "beneficiary", "spouse", "parent", "child", "mother",
           "father", "buyer", "seller", "tenant", "landlord", "donor", "candidate", "pupil",
           "physician", "doctor", "nurse", "agent", "rep", "signatory", "insured"}  # fmt: skip
_BARE_NAMES = {"name", "names", "surname", "firstname", "lastname", "fullname", "forename",
               "nom", "prenom", "prénom", "nombre", "apellido", "apellidos", "vorname",
               "nachname", "cognome", "naam", "achternaam", "voornaam", "navn", "imie",
               "nazwisko", "first", "last"}  # fmt: skip


def personal_columns(frame: Any) -> list[dict[str, str]]:
    """``[{"column", "kind"}]`` for each column of ``frame`` that looks like personal
    data (``KINDS``), in the frame's order."""
    found = []
    head = frame.iloc[: _SAMPLE * 3, :_MAX_COLUMNS]
    for index, name in enumerate(head.columns):
        column = head.iloc[:, index]
        try:
            values = _sample(column)
            kind = _kind(str(name), values, dates=_is_datetime(column)) if values else None
        except (TypeError, ValueError):  # a cell whose str() fails: not judged
            kind = None
        if kind is not None:
            found.append({"column": str(name), "kind": kind})
    return found


def _sample(column: Any) -> list[str]:
    """The first non-empty values as text (whole floats without their ``.0``)."""
    out: list[str] = []
    for value in column.tolist():
        if value is None or value != value:  # None, NaN, NaT
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        if text and text.lower() not in ("nan", "none", "null", "-", "n/a"):
            out.append(text)
        if len(out) >= _SAMPLE:
            break
    return out


def _is_datetime(column: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_datetime64_any_dtype(column))


def _kind(name: str, values: list[str], *, dates: bool) -> str | None:
    words = {w.lower() for w in _WORDS.findall(name)}
    spaced = " ".join(w.lower() for w in _WORDS.findall(name))
    tests = {
        "email": lambda: _share(values, _EMAIL.match) >= _SHARE,
        "card": lambda: _share(values, _is_card) >= _SHARE,
        "national_id": lambda: _national_id(values, words, spaced),
        "phone": lambda: _phone(values, hinted=bool(words & _PHONE_WORDS)),
        "birth_date": lambda: bool(_BIRTH.search(name)) and (dates or _birth_dates(values)),
        "address": lambda: _address(values, hinted=bool(_ADDRESS.search(name))),
        "name": lambda: _names_a_person(words, name) and _person_names(values),
    }
    for kind in KINDS:
        if tests[kind]():
            return kind
    return None


def _share(values: list[str], test: Any) -> float:
    """The share of ``values`` that pass ``test``; 0 at once when few of the first do
    (most columns are no kind at all, and this keeps a wide table quick)."""
    head = values[:_PROBE]
    if len(values) > _PROBE and sum(1 for v in head if test(v)) < 0.3 * len(head):
        return 0.0
    return sum(1 for v in values if test(v)) / len(values)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _is_card(text: str) -> bool:
    """A payment card number: 13-19 digits, as written on cards, passing Luhn's check."""
    if not _CARD.match(text):
        return False
    digits = _digits(text)
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 3:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _national_id(values: list[str], words: set[str], spaced: str) -> bool:
    if _share(values, lambda v: _SSN.match(v) or _NINO.match(v.upper())) >= _SHARE:
        return True
    hinted = bool(words & _ID_WORDS) or any(p in spaced for p in _ID_PHRASES)
    if not hinted:
        return False
    codes = [v for v in values if 6 <= len(v) <= 24 and len(_digits(v)) >= 5]
    codes = [v for v in codes if re.fullmatch(r"[\w\s./-]+", v) and not _DATE.match(v)]
    return len(codes) / len(values) >= _SHARE and len(set(codes)) >= 0.8 * len(codes)


def _phone(values: list[str], *, hinted: bool) -> bool:
    """Phone numbers: 7-15 digits written as phones are (a ``+``, brackets, or three or
    more groups); digits alone count only in a column whose name says phone."""

    def fits(text: str) -> bool:
        if not _PHONE_CHARS.match(text) or _DATE.match(text) or _SSN.match(text):
            return False
        if not 7 <= len(_digits(text)) <= 15:
            return False
        if re.fullmatch(r"-?\d+\.\d+", text):  # a decimal number
            return False
        groups = len(re.findall(r"\d+", text))
        written = text.startswith("+") or "(" in text or groups >= 3
        return written or (hinted and (groups >= 2 or len(_digits(text)) >= 9))

    return _share(values, fits) >= _SHARE


def _birth_dates(values: list[str]) -> bool:
    """Exact dates (day, month and year), of years people alive were born in."""

    def fits(text: str) -> bool:
        if not (_DATE.match(text) or _WORDY_DATE.match(text)):
            return False
        match = _YEAR.search(text)
        if match is None:
            return False
        year = int(match.group(1)) if match.group(1) else 1900 + int(match.group(2))
        return 1900 <= year <= 2030

    return _share(values, fits) >= _SHARE


def _address(values: list[str], *, hinted: bool) -> bool:
    """Street addresses: a house number and a street type (``12 Elm Street``,
    ``Hauptstraße 5``); in a column named as an address, half of them is enough."""

    def fits(text: str) -> bool:
        return bool(_HOUSE_NUMBER.search(text) and _STREET.search(text)) and len(text) <= 120

    return _share(values, fits) >= (0.3 if hinted else 0.5)


def _names_a_person(words: set[str], name: str) -> bool:
    """The column's name says it holds people's names: ``name`` alone, a part of a
    person's name (``first_name``, ``Surname``), or a person and ``name``
    (``SeniorWorkerName``), not ``PublicName`` or ``filename``."""
    joined = re.sub(r"[\W_]+", "", name).lower()
    if joined in _BARE_NAMES or words & _NAME_ALONE:
        return True
    if "name" in words or "names" in words or joined.endswith("name"):
        return bool(words & (_PERSON_NAME_PARTS | _PEOPLE))
    return False


def _person_names(values: list[str]) -> bool:
    """Values shaped like people's names: one to four capitalised words without digits,
    mostly different from each other, whose words are not shared by most of them (a
    product or office list repeats its words: ``Main Number``, ``Intake Number``)."""

    def fits(text: str) -> bool:
        tokens = text.replace(",", " ").split()
        if not 1 <= len(tokens) <= 4 or len(text) > 60:
            return False
        for token in tokens:
            if token.lower() in _PARTICLES:
                continue
            if not _NAME_TOKEN.match(token) or not token[0].isupper():
                return False
        return True

    shaped = [v for v in values if fits(v)]
    if len(shaped) / len(values) < _SHARE:
        return False
    if len(shaped) >= 5 and len(set(shaped)) < 0.5 * len(shaped):
        return False
    distinct = set(shaped)
    words = Counter(w.lower() for v in distinct for w in set(v.split()))
    common = words.most_common(1)[0][1] if words else 0
    return len(distinct) < 3 or common <= max(1, 0.3 * len(distinct))
