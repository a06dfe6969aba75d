"""PROTOCOL.md says what the code does: the requests the agent may send the sandbox,
and the message types the agent worker and the page exchange."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "PROTOCOL.md").read_text()


def test_the_agent_allowed_column_is_what_the_page_allows() -> None:
    rows = re.findall(r"^\| `(\w+)` \|.*\| (yes|no) \|$", PROTOCOL, flags=re.MULTILINE)
    documented = {name for name, allowed in rows if allowed == "yes"}
    code = (ROOT / "web" / "agent-client.js").read_text()
    allowed = re.search(r"const AGENT_ALLOWED = new Set\(\[([^\]]*)\]\)", code)
    assert allowed is not None
    assert documented == set(re.findall(r'"(\w+)"', allowed.group(1)))


def test_every_message_the_agent_worker_posts_is_documented() -> None:
    worker = (ROOT / "web" / "agent-worker.js").read_text()
    posted = set(re.findall(r'postMessage\(\{ type: "([\w-]+)"', worker))
    assert posted, "no messages found: the pattern no longer matches agent-worker.js"
    missing = sorted(t for t in posted if f'"type": "{t}"' not in PROTOCOL)
    assert missing == []


def test_every_frame_message_is_documented() -> None:
    frame = (ROOT / "web" / "sandbox-frame.js").read_text()
    handled = set(re.findall(r'msg\.type === "(frame-[\w-]+)"', frame))
    assert handled
    missing = sorted(t for t in handled if f"`{t}`" not in PROTOCOL)
    assert missing == []
