"""Schema privacy's scan of the uploads, through the agent (issue 32, P1-P3): every sheet
and archive member is read or nothing is sent; a first row of data is not a header; the
file list and the names that may be sent come from the scan's own look at the uploads."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.agent import Agent
from reckon.agent.privacy._privacy import Privacy
from support import ScriptedModel

from .helpers import answer, code_reply, model_steps, run
from .privacy_kit import FreshScanExecutor, leaked, sent

PEOPLE = pd.DataFrame(
    {
        "name": ["Alice Zimmermann", "Bob Quist"],
        "salary": [73412.5, 51877.25],
        "city": ["Paris", "Lyon"],
    }
)
SECRET = pd.DataFrame(
    {"who": ["Cornelius Ashdown", "Dmitri Volkov"], "ssn": ["555-01-2345", "555-02-1111"],
     "town": ["Vladivostok", "Omsk"]}
)  # fmt: skip


@pytest.fixture
def executor(tmp_path: Path) -> FreshScanExecutor:
    return FreshScanExecutor(tmp_path)


def two_sheets(engine: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine=engine) as writer:
        PEOPLE.to_excel(writer, sheet_name="People", index=False)
        SECRET.to_excel(writer, sheet_name="Secret", index=False)
    return buffer.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def ask(executor: FreshScanExecutor, cell: str, **privacy: Any) -> tuple[dict[str, Any], Any]:
    model = ScriptedModel([code_reply(cell), answer("Done.")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema", privacy.get("allow")))
    outcome = run(agent.ask("who is in there", environment=executor.environment()))
    return outcome, model


@pytest.mark.parametrize(
    ("name", "data", "cell"),
    [
        pytest.param("book.xlsx", two_sheets(), "print(pd.read_excel({p!r}, sheet_name='Secret'))",
                     id="xlsx-second-sheet"),
        pytest.param("book.ods", two_sheets("odf"),
                     "print(read_table({p!r}, sheet=None).to_string())", id="ods-every-sheet"),
        pytest.param("both.zip", zipped({"a.csv": PEOPLE.to_csv(index=False).encode(),
                                         "b.csv": SECRET.to_csv(index=False).encode()}),
                     "import zipfile\nz = zipfile.ZipFile({p!r})\n"
                     "print([z.read(n).decode() for n in z.namelist()])", id="zip-two-members"),
        pytest.param("nested.zip", zipped({"in.zip": zipped({"s.csv": SECRET.to_csv().encode()})}),
                     "import zipfile, io\nz = zipfile.ZipFile({p!r})\n"
                     "print(zipfile.ZipFile(io.BytesIO(z.read('in.zip'))).read('s.csv'))",
                     id="zip-in-a-zip"),
    ],
)  # fmt: skip
def test_every_sheet_and_member_is_scanned(
    executor: FreshScanExecutor, name: str, data: bytes, cell: str
) -> None:
    path = executor.upload(name, data)
    outcome, model = ask(executor, "import pandas as pd\n" + cell.format(p=path))
    assert outcome["status"] == "ok", outcome
    assert "Cornelius Ashdown" in model_steps(outcome)[0]["result"]["stdout"]  # it printed them
    assert leaked(model) == []


def test_a_part_that_cannot_be_read_sends_nothing_and_says_what_to_do(
    executor: FreshScanExecutor,
) -> None:
    executor.upload("people.csv", PEOPLE.to_csv(index=False))
    executor.upload("parts.zip", zipped({"ok.csv": b"a,b\n1,2\n", "broken.xlsx": b"PK\x03\x04.."}))
    outcome, model = ask(executor, "print(open('/data/people.csv').read())")
    assert outcome["status"] == "error" and model.requests == [] and outcome["sent"] == []
    message = outcome["message"]
    assert "Nothing was sent" in message and "parts.zip (broken.xlsx)" in message
    assert "uploaded one by one" in message and "privacy 'full'" in message


HEADERLESS = (
    "Cornelius Ashdown,555-01-2345,88888,Vladivostok\n"
    "Bob Quist,555-02-1111,77777,Lyon\n"
    "Dmitri Volkov,555-11-2222,65432,Omsk\n"
)


def test_a_first_row_of_data_is_not_sent_as_column_names(executor: FreshScanExecutor) -> None:
    path = executor.upload("people.csv", HEADERLESS)
    cell = f"import pandas as pd\ndf = pd.read_csv({path!r})\nprint(list(df.columns))\ndf.columns"
    outcome, model = ask(executor, cell)
    assert outcome["status"] == "ok", outcome
    assert leaked(model, ["Cornelius Ashdown", "555-01-2345", "88888", "Vladivostok"]) == []
    system = model.requests[0].messages[0]["content"]
    assert "people.csv" in system and system.count("[hidden]") >= 4


def test_a_header_stays_and_allowed_columns_keep_their_names(executor: FreshScanExecutor) -> None:
    executor.upload("people.csv", HEADERLESS)
    executor.upload("staff.csv", PEOPLE.to_csv(index=False))
    _, model = ask(executor, "print(1)", allow=["Vladivostok"])
    system = model.requests[0].messages[0]["content"]
    assert all(f"'{name}'" in system for name in ("name", "salary", "city"))
    assert "Vladivostok" in system and "Cornelius Ashdown" not in system


def test_the_file_list_comes_from_the_scan_not_the_sessions_report(
    executor: FreshScanExecutor,
) -> None:
    """What the session reports can be a cell's work: a file it wrote under /data (named
    like an id, with people as column names) and an ``inspect`` it patched. Neither
    reaches the model: the file list is the scan's own look at the uploads."""
    executor.upload("staff.csv", PEOPLE.to_csv(index=False))
    pivot = (
        "import pandas as pd\n"
        "df = pd.read_csv('/data/staff.csv'.replace('/data', DATA))\n"
        "df.set_index('name').T.to_csv(DATA + '/555-01-2345.csv')\n"
    ).replace("DATA", repr(str(executor.data_dir)))
    run(executor.run(pivot))  # a cell of an earlier ask
    reported = executor.environment()
    assert any("555-01-2345" in f["path"] for f in reported["files"])
    for entry in reported["files"]:  # and what a patched inspect would add
        entry["notes"] = ["PATCHED-INSPECT-NOTE Alice Zimmermann"]
        entry["columns"] = [*entry.get("columns", []), {"name": "Alice Zimmermann", "dtype": "x"}]
    model = ScriptedModel([code_reply("print(2)"), answer("Done.")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("who", environment=reported))
    assert outcome["status"] == "ok", outcome
    everything = sent(model)
    assert "555-01-2345" not in everything and "PATCHED-INSPECT-NOTE" not in everything
    assert "Alice Zimmermann" not in everything and "Bob Quist" not in everything
    system = json.loads(everything)[0][0]["content"]
    assert "staff.csv" in system and all(f"'{c}'" in system for c in ("name", "salary", "city"))
