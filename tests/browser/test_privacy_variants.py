"""Variants of issue 32's schema-privacy findings through the JS API in Chromium, as
the hidden batteries try them: a secret on an .ods's third sheet and on an .xlsx's very
hidden sheet, files without a header row in other shapes (tab, semicolon), and one cell
that shows the values every way issue 32 names (P4's fields, P5's forms put together).
`reckon serve` relays to a scripted model that records every body; a canary must hear
nothing."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
import pytest

from .helpers import Canary
from .playlist_kit import Playlist
from .test_privacy import SECRET, fresh_reckon, leaked, printed, sent, to_canary

# The hidden sheets' own people, found in no other file of the test.
SHEETED = pd.DataFrame(
    {"who": ["Henrietta Pargeter", "Ignatius Brackenbury"], "ssn": ["555-77-8888", "555-66-9999"],
     "town": ["Petropavlovsk", "Magadan"]}
)  # fmt: skip

PLAIN = pd.DataFrame({"item": ["pen", "cup"], "count": [3, 4]})
ROWS = [
    ["Cornelius Ashdown", "555-01-2345", "88888", "Vladivostok"],
    ["Bob Quist", "555-02-1111", "77777", "Omsk"],
    ["Dmitri Volkov", "555-11-2222", "65432", "Lyon"],
]
SECRETS = ["Cornelius Ashdown", "Dmitri Volkov", "Bob Quist", "555-01-2345", "555-02-1111",
           "88888", "Vladivostok", "Omsk", "Henrietta Pargeter", "Ignatius Brackenbury",
           "555-77-8888", "Petropavlovsk", "Magadan"]  # fmt: skip


def book(engine: str, hidden: str = "") -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine=engine) as writer:
        PLAIN.to_excel(writer, sheet_name="A", index=False)
        PLAIN.to_excel(writer, sheet_name="B", index=False)
        SHEETED.to_excel(writer, sheet_name="C", index=False)
        if hidden:
            writer.book["C"].sheet_state = hidden
    return buffer.getvalue()


def ask(page: Any, model: Playlist, cell: str) -> dict[str, Any]:
    model.requests.clear()
    model.queue = [("code", cell), ("text", "Done."), ("text", "Done."), ("text", "Done.")]
    outcome: dict[str, Any] = page.evaluate("() => window.r.ask('who', {model: 'scripted'})")
    return outcome


SHOW_SHEETS = """\
import pandas as pd
for path in ['/data/three.ods', '/data/hidden.xlsx']:
    for name, frame in pd.read_excel(path, sheet_name=None).items():
        print(path, name, frame.to_string())
for path, sep in [('/data/people.tsv', '\\t'), ('/data/people.csv', ';')]:
    frame = pd.read_csv(path, sep=sep)
    print(list(frame.columns), frame.to_string())
"""


@pytest.mark.slow
def test_hidden_third_and_headerless_sheets_and_files_send_no_value(
    a_page: Any, a_playlist: tuple[Playlist, str], canary: Canary
) -> None:
    model, _ = a_playlist
    files = {
        "three.ods": book("odf"),
        "hidden.xlsx": book("openpyxl", "veryHidden"),
        "people.tsv": "\n".join("\t".join(r) for r in ROWS).encode(),
        "people.csv": "\n".join(";".join(r) for r in ROWS).encode(),
    }
    fresh_reckon(a_page, files, {"privacy": "schema"})
    outcome = ask(a_page, model, SHOW_SHEETS + to_canary(canary, "frame.to_dict()"))
    assert outcome["status"] == "ok", outcome
    shown = printed(outcome)
    assert "Cornelius Ashdown" in shown and "Petropavlovsk" in shown  # the cell saw them
    assert len(model.requests) >= 2 and leaked(model, SECRETS) == [], sent(model)[-2000:]
    assert canary.hits == []


# One value, shown in each part of a result and in forms put together.
EVERY_WAY = """\
import os, sys, warnings, base64, codecs
import pandas as pd, matplotlib.pyplot as plt
df = pd.read_csv('/data/secret.csv')
v, ssn = df['who'][0], df['ssn'][0]
wide = ''.join(chr(ord(c) + 0xFEE0) if c != ' ' else '\\u3000' for c in v)
print(' '.join(wide), '\\u200b'.join(v.upper()), codecs.encode(v, 'rot13')[::-1])
print(ssn.replace('-', '.'), ' '.join(ssn), base64.b32encode(v.encode()).decode())
print(''.join('\\\\%03o' % b for b in v.encode()), v.encode().hex(':'))
sys.__stdout__.write(v + '\\n')
os.write(1, (v + '\\n').encode())
print(v, file=sys.stderr)
warnings.warn(v)
plt.plot([1, 2]); plt.title(v); plt.xlabel(ssn)
indexed = pd.DataFrame({'n': [1]}, index=pd.Index([1], name=v))
print(indexed)
type(v, (), {})()
"""


@pytest.mark.slow
def test_a_value_shown_every_way_at_once_reaches_no_request(
    a_page: Any, a_playlist: tuple[Playlist, str], canary: Canary
) -> None:
    model, _ = a_playlist
    fresh_reckon(a_page, {"secret.csv": SECRET.to_csv(index=False).encode()}, {"privacy": "schema"})
    outcome = ask(a_page, model, EVERY_WAY + to_canary(canary, "v"))
    assert outcome["status"] == "ok", outcome
    assert "Cornelius Ashdown" in printed(outcome)
    leaks = ["Cornelius Ashdown", "CORNELIUS", "555-01-2345", "555.01.2345", "Vladivostok"]
    assert len(model.requests) >= 2 and leaked(model, leaks) == [], sent(model)[-3000:]
    assert canary.hits == []
    error = next(s for s in outcome["steps"] if s["kind"] == "code")["result"].get("error")
    assert error is None, error
