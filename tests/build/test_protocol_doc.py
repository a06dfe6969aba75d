"""PROTOCOL.md says what the code does: the methods of both workers, the sandbox
methods the agent may call, and the events; the lists in web/shared/protocol.js and
py/reckon/_protocol.py are the same, and the workers answer exactly those methods."""

from __future__ import annotations

import re
from pathlib import Path

from reckon import _protocol

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "PROTOCOL.md").read_text()
WEB = ROOT / "web"
JS_PROTOCOL = (WEB / "shared" / "protocol.js").read_text()


def js_list(name: str) -> list[str]:
    found = re.search(rf"export const {name} = Object\.freeze\(\[([^\]]*)\]\)", JS_PROTOCOL)
    assert found is not None, f"{name} is not in web/shared/protocol.js"
    return re.findall(r'"([\w-]+)"', found.group(1))


def parts_of(name: str, folder: str) -> list[str]:
    """The parts list `name` of web/sandbox/parts.js, which must name every file of
    web/<folder>/ (the snapshot's cache key covers its recipe by that folder)."""
    source = (WEB / "sandbox" / "parts.js").read_text()
    found = re.search(rf"export const {name} = \[([^\]]*)\]", source)
    assert found is not None, f"{name} is not in web/sandbox/parts.js"
    parts = re.findall(r'"([\w./-]+)"', found.group(1))
    assert sorted(parts) == sorted(f"{folder}/{path.name}" for path in (WEB / folder).glob("*.js"))
    return parts


def sandbox_worker() -> str:
    """The sandbox worker's source: its parts, joined in order as the page joins them."""
    parts = parts_of("WORKER_PARTS", "sandbox/worker")
    return "\n".join((WEB / name).read_text() for name in parts)


def test_the_snapshot_recipe_is_its_folder() -> None:
    assert parts_of("RECIPE_PARTS", "sandbox/snapshot")


def section(number: int) -> str:
    start = PROTOCOL.index(f"\n## {number}. ")
    end = PROTOCOL.find("\n## ", start + 1)
    return PROTOCOL[start:end]


def table_rows(text: str) -> list[list[str]]:
    rows = re.findall(r"^\| `(\w+)` \|(.*)\|$", text, flags=re.MULTILINE)
    return [[name, *(cell.strip() for cell in rest.split("|"))] for name, rest in rows]


def handler_keys(source: str, name: str) -> set[str]:
    """The method names of `const <name> = {...};` in a worker script."""
    body = re.search(rf"const {name} = \{{\n(.*?)\n\}};", source, flags=re.S)
    assert body is not None, f"no `const {name} = {{` table"
    return set(re.findall(r"^  (?:async )?(\w+)(?:[:,(]| =)", body.group(1), flags=re.M))


def test_the_agent_allowed_column_is_what_the_page_allows() -> None:
    rows = table_rows(section(3))
    documented = {row[0] for row in rows if row[-1] == "yes"}
    assert documented == set(js_list("AGENT_ALLOWED")) == set(_protocol.AGENT_ALLOWED)
    client = (WEB / "agent" / "client.js").read_text()
    assert "!AGENT_ALLOWED.includes(method)" in client  # the page's check uses that list


def test_the_sandbox_methods_are_the_documented_ones() -> None:
    documented = {row[0] for row in table_rows(section(3))}
    code = set(js_list("SANDBOX_METHODS"))
    assert documented == code | set(js_list("PAGE_METHODS"))
    assert code == set(_protocol.SANDBOX_METHODS)
    assert handler_keys(sandbox_worker(), "handlers") == code


def test_the_agent_methods_are_the_documented_ones() -> None:
    documented = {row[0] for row in table_rows(section(4))}
    code = set(js_list("AGENT_METHODS"))
    assert documented == code == set(_protocol.AGENT_METHODS)
    worker = (WEB / "agent" / "worker.js").read_text()
    assert handler_keys(worker, "methods") == code
    client = (WEB / "agent" / "client.js").read_text()
    called = set(re.findall(r'(?:rpc\.call|this\.call)\("(\w+)"', client))
    assert called == code


def test_every_agent_event_is_documented_and_posted() -> None:
    events = js_list("AGENT_EVENTS")
    assert set(events) == set(_protocol.AGENT_EVENTS)
    for event in events:
        assert f'`{{"type": "{event}", "askId"' in section(4), event
    host = (ROOT / "py" / "reckon" / "agent" / "_host.py").read_text()
    posted = set(re.findall(r'self\._post\(\{"type": "(\w+)"', host))
    assert posted == set(events)
    client = (WEB / "agent" / "client.js").read_text()
    assert all(f'msg.type === "{event}"' in client for event in events)


def test_every_message_a_worker_posts_is_a_reply_a_call_or_a_listed_event() -> None:
    listed = {"call", "reply", *js_list("SANDBOX_EVENTS"), *js_list("AGENT_EVENTS")}
    sources = {"agent/worker.js": (WEB / "agent" / "worker.js").read_text()}
    sources["the sandbox worker"] = sandbox_worker()
    for name, source in sources.items():
        posted = set(
            re.findall(r'(?:postMessage|post)\(\{ (?:\.\.\.\w+, )?type: "([\w-]+)"', source)
        )
        assert posted, f"no messages found: the pattern no longer matches {name}"
        assert posted <= listed, (name, posted - listed)
    for event in js_list("SANDBOX_EVENTS"):
        assert f'{{"type": "{event}", "id"' in section(3), event


def test_every_frame_message_is_documented() -> None:
    frame = (WEB / "sandbox" / "frame.js").read_text()
    handled = set(re.findall(r'msg\.type === "([\w-]+)"', frame))
    handled |= set(re.findall(r'type: "([\w-]+)"', frame)) - {"call"}
    assert handled
    assert handled <= set(js_list("FRAME_MESSAGES"))
    missing = [
        t
        for t in js_list("FRAME_MESSAGES")
        if f"`{t}`" not in PROTOCOL and f'"type": "{t}"' not in PROTOCOL
    ]
    assert missing == []
