"""<reckon-chat> in host pages: the shipped example, two widgets on one page, and a
host page on another origin than the site and the relay.

`reckon serve` runs as a real process (site + relay, with a scripted model upstream
on loopback and `--allow-origin` for the host server); host pages are served by a
plain static server on another port, which makes them another origin.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import ROOT, SALES, ScriptedModel, a_model_server, reckon_serve, serve_folder

from .helpers import page_call

pytestmark = pytest.mark.browser

EVENTS = ["ready", "ask", "step", "answer", "error", "ask-error"]
# Capture-phase listeners on window see every widget's events (they do not bubble).
RECORD_EVENTS = (
    "window.__events = []; window.__violations = [];\n"
    "document.addEventListener('securitypolicyviolation', (ev) =>"
    " window.__violations.push(`${ev.violatedDirective} ${ev.blockedURI}`));\n"
    f"for (const type of {json.dumps(EVENTS)}) {{\n"
    """
    window.addEventListener(type, (ev) => {
      if (!ev.target || ev.target.localName !== "reckon-chat") return;
      const detail = JSON.parse(JSON.stringify(ev.detail ?? null));
      window.__events.push({ type, id: ev.target.id, detail });
    }, true);
  }
"""
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def a_scripted_upstream() -> Iterator[tuple[ScriptedModel, str]]:
    model = ScriptedModel()
    with a_model_server(model, models=["scripted"]) as upstream:
        yield model, upstream


@pytest.fixture(scope="module")
def a_host_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("host")


@pytest.fixture(scope="module")
def a_host_server(a_host_folder: Path) -> Iterator[str]:
    """Another origin's page server (its port is another origin than the relay's)."""
    with serve_folder(a_host_folder) as url:
        yield url


@pytest.fixture(scope="module")
def a_served_site(
    a_scripted_upstream: tuple[ScriptedModel, str], a_host_server: str
) -> Iterator[str]:
    """`reckon serve` with the site, accepting pages of the host server's 127.0.0.1 origin."""
    _, upstream = a_scripted_upstream
    flags = ["--upstream", upstream, "--model", "scripted", "--allow-origin", a_host_server]
    with reckon_serve(*flags, env={"RECKON_UPSTREAM_KEY": "sk-test-secret"}) as served:
        yield served.url


# The host page's own CSP, as README.md ("Widget") says a host with one must allow.
TWO_WIDGETS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Two widgets</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; \
script-src 'self' {site} 'wasm-unsafe-eval'; worker-src blob:; \
connect-src {site}; frame-src {site}; img-src data:; style-src 'self'">
<link rel="stylesheet" href="host.css">
<script type="module" src="{site}/reckon-chat.js"></script>
</head><body>
<reckon-chat id="one" session="one" height="20rem"></reckon-chat>
<reckon-chat id="two" theme="dark" relay="{site}/" height="300"></reckon-chat>
</body></html>
"""


@pytest.fixture(scope="module")
def a_host(a_served_site: str, a_host_server: str, a_host_folder: Path) -> str:
    """The host pages that embed the widget from the relay, on the other origin."""
    folder = a_host_folder
    (folder / "two.html").write_text(TWO_WIDGETS.format(site=a_served_site))
    strict = TWO_WIDGETS.format(site=a_served_site).replace("worker-src blob:", "worker-src 'self'")
    (folder / "strict.html").write_text(strict)
    (folder / "host.css").write_text((ROOT / "web" / "examples" / "host.css").read_text())
    (folder / "frame.html").write_text(FRAMES_THE_PAGE.format(site=a_served_site))
    return a_host_server


def open_host_page(browser: Any, url: str) -> tuple[Any, Any]:
    context = browser.new_context(accept_downloads=True)
    context.add_init_script(RECORD_EVENTS)
    page = context.new_page()
    page.goto(url)
    return context, page


def widget_call(
    page: Any, widget: str, body: str, arg: Any = None, *, deadline_s: float = 60
) -> Any:
    """Statements with `chat` bound to the widget #`widget` (the prelude's helpers in scope)."""
    script = f"const chat = document.getElementById({json.dumps(widget)});\n{body}"
    return page_call(page, script, arg, deadline_s=deadline_s)


def wait_ready(page: Any, widget: str) -> dict[str, Any]:
    reply: dict[str, Any] = widget_call(
        page,
        widget,
        "return await withDeadline(chat.ready(), deadlineMs, 'ready');",
        deadline_s=180,
    )
    return reply


def upload_sales(page: Any, widget: str) -> dict[str, Any]:
    body = """
      const file = new File([arg], "sales.csv", { type: "text/csv" });
      return await withDeadline(chat.upload(file), deadlineMs, "upload");
    """
    info: dict[str, Any] = widget_call(page, widget, body, SALES)
    return info


def ask(page: Any, widget: str, question: str, model: str) -> dict[str, Any]:
    body = "return await withDeadline(chat.ask(arg[0], { model: arg[1] }), deadlineMs, 'ask');"
    outcome: dict[str, Any] = widget_call(page, widget, body, [question, model], deadline_s=120)
    return outcome


def events(page: Any, widget: str | None = None) -> list[dict[str, Any]]:
    recorded: list[dict[str, Any]] = page.evaluate("() => window.__events")
    return [e for e in recorded if widget is None or e["id"] == widget]


def figure_pngs(outcome: dict[str, Any]) -> list[bytes]:
    return [
        base64.b64decode(figure["png"])
        for step in outcome["steps"]
        if step.get("result")
        for figure in step["result"].get("figures", [])
    ]


# --- the shipped example page, same origin as the site ---------------------------


@pytest.fixture(scope="module")
def an_example_page(a_browser: Any, a_served_site: str) -> Iterator[Any]:
    context, page = open_host_page(a_browser, f"{a_served_site}/examples/embed.html")
    wait_ready(page, "chat")
    yield page
    context.close()


@pytest.mark.slow
def test_the_example_embeds_the_chat_and_draws_a_chart(an_example_page: Any) -> None:
    page = an_example_page
    info = upload_sales(page, "chat")
    assert info["status"] == "ok" and info["rows"] == 4, info
    # The person's way: the widget's own file list, question box and Ask button.
    page.locator("reckon-chat #file-list").get_by_text("sales.csv").wait_for()
    page.locator("reckon-chat #question").fill("bar chart of price by region")
    page.locator("reckon-chat #ask").click()
    answer = page.locator("reckon-chat .answer.status-ok").first
    answer.wait_for(timeout=120_000)

    figure = page.locator("reckon-chat img.figure").first
    assert figure.get_attribute("src", timeout=1000).startswith("data:image/png;base64,")  # type: ignore[union-attr]
    assert figure.evaluate("(img) => img.complete && img.naturalWidth > 0")
    # The events carry the same data as reckon.on(): the answer's steps hold the PNG.
    seen = events(page, "chat")
    assert [e["type"] for e in seen][:1] == ["ready"]
    assert {"ask", "step", "answer"} <= {e["type"] for e in seen}
    outcome = next(e["detail"] for e in seen if e["type"] == "answer")
    assert outcome["status"] == "ok" and outcome["answer"]
    pngs = figure_pngs(outcome)
    assert pngs and all(png.startswith(PNG_MAGIC) for png in pngs)
    # The host page's own listener (examples/host.js) heard them too.
    host_log = page.locator("#host-log").inner_text()
    assert "ready in" in host_log and "answer:" in host_log


def test_host_styles_stay_out_of_the_widget_and_its_styles_stay_in(an_example_page: Any) -> None:
    page = an_example_page
    look = page.evaluate(
        """() => {
          const root = document.getElementById("chat").shadowRoot;
          const style = (node) => getComputedStyle(node);
          return {
            askBackground: style(root.getElementById("ask")).backgroundColor,
            askFont: style(root.getElementById("ask")).fontFamily,
            boxFont: style(root.querySelector(".reckon-chat")).fontFamily,
            boxColor: style(root.querySelector(".reckon-chat")).color,
            hiddenDisplay: style(root.getElementById("rebuild")).display,
            mainBorder: style(root.querySelector("main")).borderTopStyle,
            widgetHeight: document.getElementById("chat").getBoundingClientRect().height,
            hostButton: style(document.querySelector("article > button.primary")).backgroundColor,
            hostAnswerSize: style(document.getElementById("host-log")).fontSize,
            sheets: root.adoptedStyleSheets.length,
          };
        }"""
    )
    assert look["askBackground"] == "rgb(37, 87, 214)"  # the widget's accent, not hot pink
    assert "Georgia" not in look["askFont"] and "Georgia" not in look["boxFont"]
    assert look["boxColor"] == "rgb(29, 31, 35)"
    assert look["hiddenDisplay"] == "none"  # the host's [hidden] override does not get in
    assert look["mainBorder"] != "dotted"
    assert abs(look["widgetHeight"] - 34 * 16) < 2  # height="34rem"
    # ...and the widget's rules (button.primary, .answer) do not get out.
    assert look["hostButton"] == "rgb(255, 105, 180)"
    assert look["hostAnswerSize"] == "30px"
    assert look["sheets"] == 2


def test_the_widget_runs_sql_and_exports_what_was_done(an_example_page: Any) -> None:
    page = an_example_page
    upload_sales(page, "chat")
    assert ask(page, "chat", "average price by region", "reckon-demo")["status"] == "ok"
    page.locator("reckon-chat summary").filter(has_text="SQL").click()
    page.locator("reckon-chat #sql").fill(
        "SELECT region, SUM(qty) AS n FROM sales GROUP BY region ORDER BY n DESC"
    )
    page.locator("reckon-chat #run-sql").click()
    table = page.locator("reckon-chat .turn.sql table.dataframe").last
    table.wait_for(timeout=60_000)
    rows = table.inner_text()
    assert "East" in rows and "North" in rows and "4" in rows

    with page.expect_download() as download:
        page.locator("reckon-chat #export-notebook").click()
    notebook = json.loads(Path(download.value.path()).read_text())
    assert download.value.suggested_filename.endswith(".ipynb")
    assert notebook["nbformat"] == 4
    sources = "\n".join("".join(cell["source"]) for cell in notebook["cells"])
    assert "average price by region" in sources

    with page.expect_download() as download:
        page.locator("reckon-chat #export-script").click()
    assert download.value.suggested_filename.endswith(".py")
    script = Path(download.value.path()).read_text()
    compile(script, "exported.py", "exec")
    assert "average price by region" in script


# --- two widgets on one page, on another origin than the site --------------------


@pytest.fixture(scope="module")
def a_two_widget_page(a_browser: Any, a_host: str) -> Iterator[Any]:
    context, page = open_host_page(a_browser, f"{a_host}/two.html")
    wait_ready(page, "one")
    wait_ready(page, "two")
    yield page
    context.close()


@pytest.mark.slow
def test_a_page_on_another_origin_embeds_and_asks_the_demo_model(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    assert page.evaluate("() => location.origin") != page.evaluate(
        "() => new URL(document.querySelector('script[type=module]').src).origin"
    )
    assert upload_sales(page, "one")["status"] == "ok"
    outcome = ask(page, "one", "bar chart of price by region", "reckon-demo")

    assert outcome["status"] == "ok", outcome
    pngs = figure_pngs(outcome)
    assert pngs and pngs[0].startswith(PNG_MAGIC)
    page.locator("#one img.figure").first.wait_for()
    assert page.locator("#two img.figure").count() == 0
    # Everything fit in the host's CSP (the policy README.md gives for hosts).
    assert page.evaluate("() => window.__violations") == []


def test_a_page_on_another_origin_asks_a_model_through_the_relay(
    a_two_widget_page: Any, a_scripted_upstream: tuple[ScriptedModel, str]
) -> None:
    page = a_two_widget_page
    model, _ = a_scripted_upstream
    models = widget_call(page, "two", "return await chat.models();")
    assert models["models"] == ["scripted", "reckon-demo"]

    assert upload_sales(page, "two")["status"] == "ok"
    outcome = ask(page, "two", "What is the mean price?", "scripted")

    assert outcome["status"] == "ok", outcome
    assert "16.25" in outcome["answer"]
    assert model.requests and all(r["auth"] == "Bearer sk-test-secret" for r in model.requests)
    page.locator("#two .answer.status-ok").filter(has_text="16.25").wait_for()


def test_two_widgets_keep_separate_state(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    run = "return await withDeadline(chat.run(arg), deadlineMs, 'run');"
    assert widget_call(page, "one", run, "secret = 41")["status"] == "ok"
    other = widget_call(page, "two", run, "secret")
    assert other["status"] == "error" and other["error"]["type"] == "NameError"

    widget_call(page, "one", "return await chat.writeFile('/data/only-one.txt', 'one');")
    widget_call(page, "two", "return await chat.writeFile('/data/only-two.txt', 'two');")
    files = {
        widget: [
            f["name"] for f in widget_call(page, widget, "return await chat.listFiles('/data');")
        ]
        for widget in ("one", "two")
    }
    assert "only-two.txt" in files["two"] and "only-two.txt" not in files["one"]
    assert "only-one.txt" in files["one"] and "only-one.txt" not in files["two"]

    # Each conversation is its own: a widget's transcript has only what it was asked.
    for widget in ("one", "two"):
        asked = [e["detail"]["question"] for e in events(page, widget) if e["type"] == "ask"]
        transcript = widget_call(page, widget, "return (await chat.transcript()).asks;")
        assert [a["question"] for a in transcript] == asked

    # Persistence: "one" names a session and keeps it in its own database; "two" keeps nothing.
    saved = widget_call(page, "one", "return await chat.saved();")
    assert "/data/only-one.txt" in [f["path"] for f in saved["files"]]
    assert widget_call(page, "two", "return chat.reckon.persist === null;") is True
    names = page.evaluate("async () => (await indexedDB.databases()).map((d) => d.name)")
    assert "reckon-widget:one" in names and "reckon" not in names


def test_height_and_theme_come_from_the_attributes_and_follow_changes(
    a_two_widget_page: Any,
) -> None:
    page = a_two_widget_page
    look = """(id) => {
      const chat = document.getElementById(id);
      const box = chat.shadowRoot.querySelector(".reckon-chat");
      const background = getComputedStyle(box).backgroundColor;
      return { height: chat.getBoundingClientRect().height, background };
    }"""
    assert page.evaluate(look, "one") == {"height": 320, "background": "rgb(251, 251, 250)"}
    assert page.evaluate(look, "two") == {"height": 300, "background": "rgb(22, 24, 28)"}

    page.evaluate(
        "() => { const c = document.getElementById('two'); c.setAttribute('theme', 'light');"
        " c.setAttribute('height', '25rem'); }"
    )
    assert page.evaluate(look, "two") == {"height": 400, "background": "rgb(251, 251, 250)"}
    # A value that is not a length changes nothing, and cannot inject CSS.
    page.evaluate(
        "() => document.getElementById('two').setAttribute('height', '1px} * {color: red')"
    )
    assert page.evaluate(look, "two")["height"] == 576  # the default, 36rem
    page.evaluate(
        "() => { const c = document.getElementById('two'); c.setAttribute('theme', 'dark');"
        " c.setAttribute('height', '300'); }"
    )


def test_a_failed_ask_is_an_error_event_on_its_widget(a_two_widget_page: Any) -> None:
    page = a_two_widget_page
    before = len(events(page, "two"))
    outcome = ask(page, "two", "anything", "no-such-model")

    assert outcome["status"] != "ok"
    errors = [e for e in events(page, "two")[before:] if e["type"] == "error"]
    assert errors and errors[-1]["detail"]["message"] == outcome["message"]
    # The relay's own answer (an unknown model) was readable across origins.
    assert "Unknown model 'no-such-model'" in outcome["message"]
    assert not [e for e in events(page, "one") if e["type"] == "error"]


FRAMES_THE_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Frames Reckon</title></head><body><iframe src="{site}/index.html"></iframe></body></html>"""


@pytest.mark.parametrize("where", ["allowed", "foreign"])
def test_only_allowed_origins_can_frame_the_pages(
    a_browser: Any, a_host: str, a_served_site: str, where: str
) -> None:
    # A page anywhere could frame Reckon under its own (clickjacking); the relay's
    # frame-ancestors lets only its own pages and the origins it was told of.
    host = a_host if where == "allowed" else a_host.replace("127.0.0.1", "localhost")
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{host}/frame.html")
        page.wait_for_load_state("load")
        child = page.frames[1]
        child.wait_for_load_state("load")
        loaded = child.url
    finally:
        context.close()
    if where == "allowed":
        assert loaded == f"{a_served_site}/index.html"
    else:
        assert loaded.startswith("chrome-error://"), loaded


def test_a_page_on_an_origin_the_relay_does_not_allow_gets_nothing(
    a_browser: Any, a_host: str, a_served_site: str
) -> None:
    # Same server, other name: http://localhost:P is another origin than 127.0.0.1:P.
    foreign = a_host.replace("127.0.0.1", "localhost")
    context, page = open_host_page(a_browser, f"{foreign}/two.html")
    try:
        defined = page.evaluate("() => customElements.get('reckon-chat') !== undefined")
        info = page.evaluate(
            "async (url) => fetch(url).then(() => 'read', (err) => err.name)",
            f"{a_served_site}/api/info",
        )
    finally:
        context.close()
    assert defined is False
    assert info == "TypeError"


def test_a_host_policy_that_blocks_the_agent_worker_is_an_error_event(
    a_browser: Any, a_host: str
) -> None:
    context, page = open_host_page(a_browser, f"{a_host}/strict.html")
    try:
        page.wait_for_function(
            "() => new Set(window.__events.filter((e) => e.type === 'error').map((e) => e.id)).size"
            " === 2",
            timeout=60_000,
        )
        errors = [e for e in events(page) if e["type"] == "error"]
    finally:
        context.close()
    assert {e["id"] for e in errors} == {"one", "two"}
    assert all("worker-src blob:" in e["detail"]["message"] for e in errors)


# --- shutting down -------------------------------------------------------------------


@pytest.mark.slow
def test_a_widget_taken_off_the_page_shuts_down_and_starts_again_when_put_back(
    a_browser: Any, a_served_site: str
) -> None:
    context, page = open_host_page(a_browser, f"{a_served_site}/examples/embed.html")
    try:
        wait_ready(page, "chat")
        frames = "() => document.querySelectorAll('iframe[title=\"Reckon sandbox\"]').length"
        assert page.evaluate(frames) == 1
        widget_call(page, "chat", "await withDeadline(chat.reckon.agent.ready(), deadlineMs, 'a');")
        assert len(page.workers) >= 2  # the sandbox's (in its frame) and the agent's

        # A move within the page keeps the same sandbox: its variable is still there.
        widget_call(page, "chat", "await chat.run('kept = 7');")
        moved = """
          const box = document.createElement("div");
          document.body.appendChild(box);
          box.appendChild(chat);
          await new Promise((resolve) => setTimeout(resolve, 0));
          return await withDeadline(chat.run("kept"), deadlineMs, "run after the move");
        """
        assert widget_call(page, "chat", moved)["result"]["text"] == "7"
        assert page.evaluate(frames) == 1

        widget_call(page, "chat", "window.__removed = chat; chat.remove();")
        page.wait_for_function(f"() => ({frames[6:]}) === 0")
        deadline = time.monotonic() + 10
        while page.workers and time.monotonic() < deadline:
            page.wait_for_timeout(50)  # Playwright drops a worker once it has ended
        assert page.workers == []

        again = """
          const chat = window.__removed;
          document.body.appendChild(chat);
          await withDeadline(chat.ready(), deadlineMs, "ready again");
          return await withDeadline(chat.run("kept if 'kept' in dir() else 'fresh'"),
                                    deadlineMs, "run");
        """
        assert page_call(page, again, deadline_s=180)["result"]["text"] == "'fresh'"
        assert page.evaluate(frames) == 1
    finally:
        context.close()
