"""Variants of issue 32's schema-privacy findings (P1-P5), through the agent with the
real kernel and a scan in a kernel of its own, as the page runs it: the forms the
findings name, put together or in files of another shape."""

from __future__ import annotations

import base64
import codecs
import io
import itertools
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reckon.agent import Agent
from reckon.agent.privacy._privacy import Privacy
from reckon.agent.privacy._redactor import Redactor
from support import ScriptedModel

from .helpers import answer, code_reply, model_steps, run
from .privacy_kit import FreshScanExecutor, leaked, sent

SECRET = pd.DataFrame(
    {"who": ["Cornelius Ashdown", "Dmitri Volkov"], "ssn": ["555-01-2345", "555-02-1111"],
     "town": ["Vladivostok", "Omsk"]}
)  # fmt: skip
PLAIN = pd.DataFrame({"item": ["pen", "cup"], "count": [3, 4]})


@pytest.fixture
def executor(tmp_path: Path) -> FreshScanExecutor:
    return FreshScanExecutor(tmp_path)


def ask(executor: FreshScanExecutor, cell: str) -> tuple[dict[str, Any], ScriptedModel]:
    # A cell that fails is sent back for a fix; the model answers each time.
    model = ScriptedModel([code_reply(cell)] + [answer("Done.")] * 4)
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("who is in there", environment=executor.environment()))
    return outcome, model


def workbook(sheets: dict[str, pd.DataFrame], engine: str, hidden: str = "") -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine=engine) as writer:
        for name, frame in sheets.items():
            frame.to_excel(writer, sheet_name=name, index=False)
        if hidden:
            writer.book[hidden].sheet_state = hidden_state(hidden)
    return buffer.getvalue()


def hidden_state(name: str) -> str:
    return "veryHidden" if name.startswith("Very") else "hidden"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("three.ods", workbook({"A": PLAIN, "B": PLAIN, "C": SECRET}, "odf"),
                     id="ods-third-of-three-sheets"),
        pytest.param("hidden.xlsx", workbook({"A": PLAIN, "Hid": SECRET}, "openpyxl", "Hid"),
                     id="xlsx-hidden-sheet"),
        pytest.param("very.xlsx", workbook({"A": PLAIN, "VeryHid": SECRET}, "openpyxl",
                                           "VeryHid"), id="xlsx-very-hidden-sheet"),
    ],
)  # fmt: skip
def test_every_sheet_of_any_workbook_is_scanned(
    executor: FreshScanExecutor, name: str, data: bytes
) -> None:
    path = executor.upload(name, data)
    cell = f"import pandas as pd\nfor n, f in pd.read_excel({path!r}, sheet_name=None).items():\n"
    outcome, model = ask(executor, cell + "    print(n, f.to_string())")
    assert outcome["status"] == "ok", outcome
    assert "Cornelius Ashdown" in model_steps(outcome)[0]["result"]["stdout"]
    assert leaked(model, ["Cornelius Ashdown", "555-01-2345", "Vladivostok", "Volkov"]) == []


HEADERLESS = [
    ["Cornelius Ashdown", "555-01-2345", "88888", "Vladivostok"],
    ["Bob Quist", "555-02-1111", "77777", "Lyon"],
    ["Dmitri Volkov", "555-11-2222", "65432", "Omsk"],
]


@pytest.mark.parametrize(
    ("name", "text", "read"),
    [
        pytest.param("p.tsv", "\n".join("\t".join(r) for r in HEADERLESS) + "\n",
                     "pd.read_csv({p!r}, sep='\\t')", id="tsv"),
        pytest.param("p.csv", "\n".join(";".join(r) for r in HEADERLESS) + "\n",
                     "pd.read_csv({p!r}, sep=';')", id="semicolon"),
        pytest.param("p.txt", "\n".join("|".join(r) for r in HEADERLESS) + "\n",
                     "pd.read_csv({p!r}, sep='|')", id="pipe-txt"),
        pytest.param("n.csv", "88888,65432,77777\n12345,23456,34567\n45678,56789,67890\n",
                     "pd.read_csv({p!r})", id="all-numbers"),
        pytest.param("one.csv", "Cornelius Ashdown\nBob Quist\nDmitri Volkov\n",
                     "pd.read_csv({p!r})", id="one-column"),
        pytest.param("p.xlsx", None, "pd.read_excel({p!r})", id="xlsx-headerless"),
    ],
)  # fmt: skip
def test_a_first_row_of_data_in_any_shape_is_not_a_header(
    executor: FreshScanExecutor, name: str, text: str | None, read: str
) -> None:
    if text is None:
        buffer = io.BytesIO()
        pd.DataFrame(HEADERLESS).to_excel(buffer, index=False, header=False)
        path = executor.upload(name, buffer.getvalue())
    else:
        path = executor.upload(name, text)
    cell = f"import pandas as pd\ndf = {read.format(p=path)}\nprint(list(df.columns))\ndf.columns"
    outcome, model = ask(executor, cell)
    assert outcome["status"] == "ok", outcome
    first = (text or "").split("\n")[0] if name == "n.csv" else ""
    values = ["Cornelius Ashdown", "555-01-2345", "88888", "Vladivostok"]
    values += [v for v in first.split(",") if v]
    assert leaked(model, values) == [], sent(model)[:3000]


P4_CELLS = {
    "sys-dunder-stdout": "import sys\nsys.__stdout__.write(V + '\\n')",
    "os-write": "import os\nos.write(1, (V + '\\n').encode())",
    "exception-message": "raise ValueError(V)",
    "warning-text": "import warnings\nwarnings.warn(V)",
    "index-name": "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.index.name = V\ndf",
    "columns-name": "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.columns.name = V\ndf",
    "series-name": "import pandas as pd\npd.Series([1, 2], name=V)",
    "type-name": "type(V, (), {})()",
    "figure-title": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.title(V)\nplt.show()",
    "stderr": "import sys\nprint(V, file=sys.stderr)",
    "repr-class": "class X:\n    def __repr__(self):\n        return V\nX()",
    "html-repr": "class X:\n    def _repr_html_(self):\n        return '<b>' + V + '</b>'\nX()",
    "exception-class": "raise type(V.replace(' ', ''), (Exception,), {})('x')",
    "syntax-error": "exec('x = ' + V)",
    "file-name": "open('/tmp/' + V + '.txt', 'w').write('x')\nimport os\nprint(os.listdir('/tmp'))",
    "output-file-name": "open(OUT + '/' + V + '.txt', 'w').write('x')",
    "data-file-name": "open(DATA + '/' + V + '.csv', 'w').write('a\\n1\\n')",
    "data-symlink": "import os\nos.symlink(DATA + '/s.csv', DATA + '/' + V + '.csv')",
    "output-symlink": "import os\nos.symlink(DATA + '/s.csv', OUT + '/' + V + '.csv')",
}


@pytest.mark.parametrize("kind", P4_CELLS)
def test_a_value_in_any_part_of_a_result_is_hidden(executor: FreshScanExecutor, kind: str) -> None:
    path = executor.upload("s.csv", SECRET.to_csv(index=False))
    setup = (
        f"import pandas as pd\nV = pd.read_csv({path!r})['who'][0]\n"
        f"OUT = {str(executor.output_dir)!r}\nDATA = {str(executor.data_dir)!r}\n"
    )
    outcome, model = ask(executor, setup + P4_CELLS[kind])
    assert outcome["status"] == "ok", outcome
    assert leaked(model, ["Cornelius Ashdown", "CorneliusAshdown"]) == [], sent(model)[-3000:]


@pytest.mark.parametrize(
    "shown", ["10**400", "'1e999'", "-float('1e308') * 10", "'9' * 5000", "'0x' + 'ab' * 3000"]
)
def test_a_number_past_a_floats_range_is_printed_not_a_crash(
    executor: FreshScanExecutor, shown: str
) -> None:
    """A cell that prints a number too big for a float (a 401-digit int, ``1e999``)
    made the filter raise OverflowError, and a long ``0x`` run a ValueError (a decimal
    past 4,300 digits): the ask ended in schema mode."""
    path = executor.upload("s.csv", SECRET.assign(salary=[73412.5, 51877.25]).to_csv(index=False))
    cell = f"import pandas as pd\nprint({shown}, pd.read_csv({path!r})['who'][0])"
    outcome, model = ask(executor, cell)
    assert outcome["status"] == "ok", outcome
    assert "[hidden]" in sent(model) and leaked(model, ["Cornelius Ashdown"]) == []


def test_a_file_with_infinite_numbers_is_scanned_and_its_values_hidden(
    executor: FreshScanExecutor,
) -> None:
    """A column holding inf, -inf or 1e999 (pandas reads them as infinities) made the
    filter raise OverflowError as it was built: no ask could run in schema mode."""
    executor.upload("s.csv", "who,x,y\nCornelius Ashdown,inf,73412.5\nDmitri Volkov,1e999,-inf\n")
    outcome, model = ask(executor, "print(df.to_string())")
    assert outcome["status"] == "ok", outcome
    assert leaked(model, ["Cornelius Ashdown", "73412.5"]) == []


# Pieces that stretch each decoder: escapes and entities out of range, lone surrogates,
# numbers past a float, long radix runs, number words past a trillion.
PIECES = ["\\U0011ffff", "\\ud800", "\ud800", "&#99999999;", "&#x110000;", "&#0;", "%ff%fe",
          "0x" + "ab" * 3000, "0b" + "1" * 5000, "\\N{NOT A NAME}", "nine hundred trillion",
          "1e400", "9" * 320, "0." + "0" * 400 + "1", "\\777\\400", "[0, 1114112, 55296]",
          "<~" + "z" * 50 + "~>", "A" * 10 + "=" * 6, "\u0300" * 50, "\U000e007f", "١٢٣٤٥", "½",
          "NaNk", "inf USD", "12.5e3e4", "Cornelius Ashdown", "73412", " ", "\n", "7"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map(" ".join))
def test_the_filter_reads_any_text_without_raising(text: str) -> None:
    redactor = Redactor(["Cornelius Ashdown", "1e999", "inf"], [73412.0, 1e300, 5e-324])
    hidden, count = redactor.redact(text)
    assert isinstance(hidden, str) and ("Cornelius Ashdown" in text) <= (count > 0)


@pytest.mark.parametrize("make", ["os.symlink(SRC, DST)", "open(DST, 'w').write('a\\n1\\n')"])
def test_a_file_a_cell_put_under_data_is_not_listed_at_the_next_ask(
    executor: FreshScanExecutor, make: str
) -> None:
    """P3 with a link: a cell of one ask puts under /data a link (or a file) named like a
    value; the next ask's prompt lists only the uploads, and the name is hidden."""
    path = executor.upload("s.csv", SECRET.to_csv(index=False))
    target = str(executor.data_dir / "555-01-2345.csv")
    cell = f"import os\nSRC, DST = {path!r}, {target!r}\n{make}"
    ask(executor, cell)
    environment = executor.environment()
    assert any("555-01-2345" in f["path"] for f in environment["files"])  # the session lists it
    model = ScriptedModel([code_reply("print(3)"), answer("Done.")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("again", environment=environment))
    assert outcome["status"] == "ok", outcome
    assert leaked(model, ["555-01-2345", "Cornelius Ashdown"]) == []
    system = model.requests[0].messages[0]["content"]
    assert "s.csv" in system and "[hidden].csv" not in system  # not listed at all


# P5's one-line forms put together: each textual form after each other, and each
# before each encoding (fullwidth then spaced, zero-width then base64, ...).
TEXTUAL: dict[str, Callable[[str], str]] = {
    "upper": str.upper,
    "lower": str.lower,
    "reversed": lambda s: s[::-1],
    "spaced": " ".join,
    "spaces-removed": lambda s: s.replace(" ", ""),
    "underscores": lambda s: s.replace(" ", "_"),
    "dashes": "-".join,
    "dots": ".".join,
    "slashes": "/".join,
    "zero-width": "\u200b".join,
    "soft-hyphens": "\u00ad".join,
    "fullwidth": lambda s: "".join(chr(ord(c) + 0xFEE0) if 33 <= ord(c) < 127 else c for c in s),
    "rot13": lambda s: codecs.encode(s, "rot13"),
    "no-break-space": lambda s: s.replace(" ", "\u00a0"),
    "tab": lambda s: s.replace(" ", "\t"),
    "combining": lambda s: "".join(c + "\u0336" for c in s),
    "words-swapped": lambda s: " ".join(s.split()[::-1]),
}
ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base32": lambda s: base64.b32encode(s.encode()).decode(),
    "hex": lambda s: s.encode().hex(),
    "url": lambda s: urllib.parse.quote(s, safe=""),
    "html": lambda s: "".join(f"&#{ord(c)};" for c in s),
    "x-escapes": lambda s: "".join(f"\\x{b:02x}" for b in s.encode()),
}


@pytest.mark.parametrize("value", ["Cornelius Ashdown", "Vladivostok", "555-01-2345"])
def test_forms_put_together_are_found(value: str) -> None:
    redactor = Redactor(["Cornelius Ashdown", "Vladivostok", "555-01-2345"], [73412.0])
    missed = []
    for (a, first), (b, second) in itertools.product(TEXTUAL.items(), TEXTUAL.items()):
        if redactor.redact(f"x {second(first(value))} y")[1] == 0:
            missed.append(f"{a} then {b}")
    for (a, first), (b, encode) in itertools.product(TEXTUAL.items(), ENCODINGS.items()):
        if redactor.redact(f"x {encode(first(value))} y")[1] == 0:
            missed.append(f"{a} then {b}")
    assert missed == []
