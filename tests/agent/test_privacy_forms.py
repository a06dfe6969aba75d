"""Schema privacy's filter against the forms one line of code turns a value into (issue
32, P5). One id per form; SECURITY.md names exactly these forms (the last test checks
it), so the promise says what is caught and nothing more."""

from __future__ import annotations

import base64
import codecs
import html
import re
import unicodedata
import urllib.parse

import pytest

from reckon.agent import Agent
from reckon.agent.privacy._privacy import Privacy
from reckon.agent.privacy._redactor import Redactor
from support import ROOT, ScriptedModel

from .helpers import answer, code_reply, model_steps, run
from .privacy_kit import FreshScanExecutor, leaked

NAME = "Cornelius Ashdown"
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
FULLWIDTH = "".join(chr(ord(c) + 0xFEE0) if c != " " else "\u3000" for c in NAME)

# Each form as one line of Python makes it (a text form of NAME, or of the salary 73412).
FORMS = {
    "case": NAME.upper(),
    "reversed": NAME[::-1],
    "spaces-removed": NAME.replace(" ", ""),
    "spaces-replaced": NAME.replace(" ", "_"),
    "separated": "-".join(NAME),
    "spaced": " ".join(NAME),
    "separated-twice": "-".join(" ".join(NAME)),
    "zero-width": "\u200b".join(NAME),
    "soft-hyphens": "\u00ad".join(NAME),
    "fullwidth": FULLWIDTH,
    "accents": "Cörnéliüs Ashdówn",
    "combining-marks": "".join(c + "\u0336" for c in NAME),
    "x-escapes": "".join(f"\\x{b:02x}" for b in NAME.encode()),
    "octal-escapes": "".join(f"\\{b:03o}" for b in NAME.encode()),
    "tag-characters": "".join(chr(0xE0000 + ord(c)) for c in NAME),
    "u-escapes": "".join(f"\\u{ord(c):04x}" for c in NAME),
    "U-escapes": "".join(f"\\U{ord(c):08x}" for c in NAME),
    "N-escapes": "".join(f"\\N{{{unicodedata.name(c)}}}" for c in NAME),
    "0x-hex": "0x" + NAME.encode().hex(),
    "0x-bytes": " ".join(f"0x{b:02x}" for b in NAME.encode()),
    "hex": NAME.encode().hex(),
    "hex-apart": NAME.encode().hex(" "),
    "url-escapes": urllib.parse.quote(NAME, safe=""),
    "html-entities": "".join(f"&#{ord(c)};" for c in NAME),
    "html-hex-entities": "".join(f"&#x{ord(c):x};" for c in NAME),
    "html-named-entities": html.escape("Ashdown & Sons"),
    "base64": base64.b64encode(NAME.encode()).decode(),
    "base64-urlsafe": base64.urlsafe_b64encode(NAME.encode()).decode().rstrip("="),
    "base32": base64.b32encode(NAME.encode()).decode(),
    "base85": base64.b85encode(NAME.encode()).decode(),
    "ascii85": base64.a85encode(NAME.encode(), adobe=True).decode(),
    "rot13": codecs.encode(NAME, "rot13"),
    "character-codes": str([ord(c) for c in NAME]),
    "character-list": str(list(NAME)),
    "encoded-twice": base64.b64encode(NAME.encode().hex().encode()).decode(),
    "encoded-invisible": base64.b64encode("\u200b".join(NAME).encode()).decode(),
    "encoded-lines": "\n".join(NAME).encode().hex(),
    "encoded-no-break-space": base64.b64encode(NAME.replace(" ", "\u00a0").encode()).decode(),
    "words-swapped": "Ashdown Cornelius",
    "words-swapped-comma": "Ashdown, Cornelius",
    "initial-and-surname": "C. Ashdown",
    "surname-and-initial": "Ashdown, C.",
    "two-lines": NAME.replace(" ", "\n"),
    "split-across-lines": NAME[:7] + "\n" + NAME[7:],
    "one-per-line": "\n".join(NAME),
    "number-scaled": "73.412",
    "number-rounded": "88124",
    "number-truncated": "88123.7",
    "number-commas": "73,412",
    "number-spaces": "73 412",
    "number-apostrophes": "73'412",
    "number-underscores": "73_412",
    "number-thin-spaces": "73\u2009412",
    "number-spaced-digits": "7 3 4 1 2",
    "number-digit-words": " ".join(DIGITS[int(d)] for d in "73412"),
    "number-words": "seventy-three thousand four hundred and twelve",
    "number-words-run-on": "one seventy-three thousand four hundred twelve nine",
    "number-hyphenated": "73-412",
    "id-points": "555.01.2345",
    "number-base64": base64.b64encode(b"73412").decode(),
    "number-fullwidth": "７３４１２",
    "number-0x": hex(73412),
    "number-0o": oct(73412),
    "number-0b": bin(73412),
    "number-one-digit-per-line": "\n".join("73412"),
    "number-reversed": "21437",
    "number-suffixed": "73.412k",
    "number-currency-code": "73412USD",
    "number-reversed-decimal": "57.32188",
}
VALUES = [NAME, "Ashdown & Sons", "555-01-2345"]
NUMBERS = [73412.0, 88123.75]


@pytest.mark.parametrize("form", FORMS, ids=list(FORMS))
def test_a_value_in_each_form_is_hidden(form: str) -> None:
    redactor = Redactor(VALUES, NUMBERS)
    text, count = redactor.redact(f"found: {FORMS[form]} (done)")
    assert count == 1 and text.startswith("found: ") and text.endswith(" (done)"), text
    assert "[hidden]" in text and not redactor.hides(text), text


@pytest.mark.parametrize(
    "text",
    [
        "count 4, mean 64103.25, 2 rows, shape (4, 5)",
        "Cornelia Ashford and Ash Down",  # near, not the same
        "EmployeeNumber 42 and 0x7f3a2b1c",
        "print the rows of df; 2011-01-01",
        "73 and 412 and 7341 and 7.3",
        "one of the three columns",
        "QmFzZTY0IGlzIGZpbmU=",  # base64 of other text
        "73\n412\ncount\n4\n5",  # numbers on their own lines are numbers
        "Cornelius\n\n\nAshdown",  # three line breaks apart: two lines of text
        "1000 and 0001 and 4370",  # backwards only from four digits without a final 0
        "2024Q1 and 1080p and 3kg",  # suffixed numbers that are no value
        "Ashdown alone, C. Ashford, a cornelius a",  # a surname alone is no value
        "2011-01-01 and 10-12 and 1-100 and 7-3",  # hyphenated numbers that are no value
        "two hundred and twelve rows, seventy-three",  # number words that are no value
        "['a', 'b', 'c'] and ('x', 'y', 'z')",  # characters that spell no value
        "version 1.2.3.4, 192.168.001.002 and 55501.2345",  # points that make no value
        "QUJD== and TWFu and \\101\\102",  # short base64 and octal of other text
    ],
)
def test_what_is_not_a_value_stays(text: str) -> None:
    assert Redactor(VALUES, NUMBERS).redact(text) == (text, 0)


def test_initials_without_a_dot_are_hidden_only_as_written_or_in_capitals() -> None:
    redactor = Redactor(["Alice Smith", "Sean O'Brien"], [])
    for shown in ["A Smith", "A SMITH", "Smith A", "S O'Brien", "A. smith", "a. SMITH"]:
        assert redactor.redact(f"by {shown} today") == ("by [hidden] today", 1), shown
    for text in ["a smith forged it", "the smith a day", "s o'brien"]:
        assert redactor.redact(text) == (text, 0)


def test_the_forms_printed_by_a_cell_reach_no_request(tmp_path: object) -> None:
    executor = FreshScanExecutor(tmp_path)  # type: ignore[arg-type]
    rows = f"{NAME},73412,Ashdown & Sons,555-01-2345\nBob Quist,88123.75,Quist Ltd,555-02-1111\n"
    path = executor.upload("people.csv", "name,salary,firm,id\n" + rows)
    cell = "forms = " + repr(list(FORMS.values())) + "\nfor f in forms:\n    print(f)"
    model = ScriptedModel([code_reply(cell), answer("Done.")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("show", environment=executor.environment()))
    assert outcome["status"] == "ok" and path
    assert FULLWIDTH in model_steps(outcome)[0]["result"]["stdout"]
    assert leaked(model, [f for f in FORMS.values() if len(f) > 4]) == []


def test_security_md_names_exactly_the_forms_tested() -> None:
    text = (ROOT / "SECURITY.md").read_text()
    section = text.split("<!-- forms -->", 2)[1]
    named = set(re.findall(r"\(`([A-Za-z0-9-]+)`[,)]", section))
    assert named == set(FORMS)
