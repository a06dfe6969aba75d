"""`reckon.Session`: the Python API, end to end through the relay and headless Chromium.

The session is created while the test session's own sync Playwright is running
in this thread (the `a_browser` fixture), which is the case Playwright's sync
API refuses; the client keeps its browser in a thread of its own, so it works.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reckon
from reckon import Session, SessionError
from support import CHROMIUM, SITE, Script, a_fake_upstream

SALES = b"region,price,qty\nEast,10,1\nWest,20,2\nEast,30,3\nNorth,5,4\n"


@pytest.fixture(scope="module")
def a_session(a_browser: Any, a_built_site: Path) -> Iterator[Session]:
    with reckon.Session(site=a_built_site, chromium=CHROMIUM) as session:
        yield session


def test_the_api_is_exported_from_the_package() -> None:
    assert {"Session", "SessionError"} <= set(reckon.__all__)
    assert reckon.Session is Session
    assert issubclass(SessionError, reckon.ReckonError)


def test_a_session_is_ready_with_the_demo_model(a_session: Session) -> None:
    assert a_session.startup["status"] == "ok"
    assert a_session.url.startswith("http://127.0.0.1:")
    models = a_session.models()
    assert models["default"] == "reckon-demo" and models["demo"] is True


def test_upload_run_and_read_back(a_session: Session, tmp_path: Path) -> None:
    path = tmp_path / "sales.csv"
    path.write_bytes(SALES)
    summary = a_session.upload(path)
    assert summary["status"] == "ok" and summary["rows"] == 4
    assert a_session.upload(("notes.txt", b"hello"))["status"] == "ok"
    names = {f["name"] for f in a_session.list_files("/data")}
    assert {"sales.csv", "notes.txt"} <= names

    result = a_session.run("import pandas as pd; pd.read_csv('/data/sales.csv').shape")
    assert result["status"] == "ok" and result["result"]["text"] == "(4, 3)"
    written = a_session.run(
        "import pandas as pd\n"
        "df = pd.read_csv('/data/sales.csv')\n"
        "df.groupby('region')['price'].sum().to_csv('/output/totals.csv')"
    )
    assert written["status"] == "ok"
    assert [f["path"] for f in written["files"]] == ["/output/totals.csv"]
    assert a_session.read_file("/output/totals.csv").decode().splitlines() == [
        "region,price",
        "East,40",
        "North,5",
        "West,20",
    ]


def test_user_errors_are_data_and_limits_apply(a_session: Session) -> None:
    failed = a_session.run("1/0")
    assert failed["status"] == "error" and failed["error"]["type"] == "ZeroDivisionError"
    slow = a_session.run("import time\nwhile True: time.sleep(0.01)", timeout_ms=1500)
    assert slow["status"] == "timeout"


def test_ask_answers_from_computed_numbers_and_the_transcript_keeps_it(
    a_session: Session,
) -> None:
    a_session.upload(("sales.csv", SALES))
    outcome = a_session.ask("average price by region")
    assert outcome["status"] == "ok", outcome
    for number in ("20", "5"):  # East (10+30)/2, West 20, North 5
        assert number in outcome["answer"]
    assert outcome["steps"][0]["kind"] == "code"
    assert outcome["steps"][0]["result"]["status"] == "ok"

    transcript = a_session.transcript()
    last = transcript["asks"][-1]
    assert last["question"] == "average price by region"
    assert last["answer"] == outcome["answer"]


def test_an_ask_past_its_time_comes_back_stopped_with_the_steps_it_took(
    a_browser: Any, a_built_site: Path
) -> None:
    # A model server that never answers: the ask is stopped at its time limit and
    # comes back as data, with what ran before (the table Reckon loaded), not lost.
    with a_fake_upstream() as upstream:
        upstream.reset(script=Script(stall_before_first=True))
        with reckon.Session(
            site=a_built_site,
            chromium=CHROMIUM,
            upstream=f"{upstream.url}/v1",
            model="slow-model",
            ask_timeout_s=8,
        ) as session:
            session.upload(("sales.csv", SALES))
            outcome = session.ask("total qty?")
            left = upstream.client_left.wait(10)
            again = session.run("print(df['qty'].sum())")
    assert outcome["status"] == "stopped", outcome
    assert left, "the model call was not cancelled"
    assert outcome["message"] == "No answer within 8 s, so the ask was stopped."
    loaded = [s for s in outcome["steps"] if s.get("origin") == "reckon"]
    assert loaded and loaded[0]["result"]["status"] == "ok", outcome["steps"]
    assert again["stdout"] == "10\n"  # the session goes on where it was


def test_export_import_and_sql_from_python(a_session: Session, tmp_path: Path) -> None:
    a_session.upload(("sales.csv", SALES))
    table = a_session.run_sql("SELECT region, SUM(price) AS total FROM sales GROUP BY region")
    assert table["status"] == "ok" and "East" in table["result"]["text"]
    assert a_session.run_sql("SELECT nope FROM sales")["status"] == "error"
    assert a_session.ask("total qty by region")["status"] == "ok"

    notebook = json.loads(a_session.export_notebook())
    assert notebook["nbformat"] == 4
    sources = ["".join(c["source"]) for c in notebook["cells"]]
    assert "## total qty by region" in sources
    script = a_session.export_script()
    assert "groupby('region')['qty'].sum()" in script and "# %%" in script

    path = tmp_path / "start.py"
    path.write_text("# %%\nstart = 40\n# %%\nprint('start:', start + 2)\n")
    reply = a_session.import_notebook(path)
    assert (reply["status"], reply["cells"], reply["ok"]) == ("ok", 2, 2)
    assert a_session.run("start")["result"]["text"] == "40"
    assert "start: 42" in a_session.export_notebook()
    assert a_session.import_notebook("x = = 1", name="broken.py")["status"] == "error"


def test_a_missing_file_is_a_session_error(a_session: Session) -> None:
    with pytest.raises(SessionError, match="no such file"):
        a_session.read_file("/output/never-written.csv")


def test_an_unbuilt_site_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match=r"python build\.py"):
        Session(site=tmp_path, chromium=CHROMIUM)


def test_a_missing_chromium_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="apt-get install chromium"):
        Session(site=SITE, chromium=tmp_path / "no-chromium")


def test_a_model_without_an_upstream_is_refused() -> None:
    with pytest.raises(reckon.ConfigError, match="needs upstream=URL"):
        Session(site=SITE, model="gpt-4o-mini")


def test_the_headless_browser_keeps_playwrights_choices_and_starts_no_browser_ui(
    a_browser: Any,
) -> None:
    """Chromium keeps only the last --disable-features: ours must repeat Playwright's,
    and a page must not bring the location bar's WebUI pop-ups (renderers of their own)."""
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto("chrome://version")
        line = page.locator("#command_line").inner_text()
        lists = [
            set(arg.split("=", 1)[1].split(","))
            for arg in line.split()
            if arg.startswith("--disable-features=")
        ]
        assert len(lists) >= 2, line  # Playwright's, then ours
        edge_only = {name for name in set().union(*lists) if name.startswith("ms")}
        missing = set().union(*lists[:-1]) - lists[-1] - edge_only
        assert not missing, f"add {sorted(missing)} to _PLAYWRIGHT_DISABLED_FEATURES"
        assert {"WebUIOmniboxPopup", "WebUIOmniboxAimPopup"} <= lists[-1]
        cdp = a_browser.new_browser_cdp_session()
        targets = cdp.send("Target.getTargets")["targetInfos"]
        cdp.detach()
        assert [t["url"] for t in targets if t["type"] == "browser_ui"] == []
    finally:
        context.close()
