"""Issue 32, M2: one small upload must not break every ask. Each bomb of
``support.BOMBS`` (an .ods of 3e8 repeated cells, 600 MB of CSV in a zip and a .gz, a
5 MB header line, and variants) is uploaded through the documented JS API beside a
normal CSV, behind `reckon serve` and a scripted model on loopback: the upload says
what is wrong and names the file, the ask still answers about the normal CSV, what the
model is sent stays small, and the sandbox goes on. In schema mode nothing is sent and
the person is told which file."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from support import BOMBS

from .playlist_kit import Playlist

SALES = b"region,amount\nnorth,12\nsouth,7\nnorth,30\n"


def fresh(page: Any, files: dict[str, bytes], settings: dict[str, Any]) -> dict[str, Any]:
    """`window.r`: a new createReckon() (nothing kept) with these uploads; each upload's
    reply and how long it took."""
    replies: dict[str, Any] = page.evaluate(
        """async ([files, settings]) => {
            if (window.r) window.r.close();
            const { createReckon } = await import("./reckon.js");
            window.r = createReckon({ persist: false, settings });
            await window.r.ready();
            const replies = {};
            for (const [name, b64] of Object.entries(files)) {
                const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
                const t0 = performance.now();
                const reply = await window.r.upload({ name, bytes });
                replies[name] = { reply, ms: performance.now() - t0 };
            }
            return replies;
        }""",
        [{name: base64.b64encode(data).decode() for name, data in files.items()}, settings],
    )
    return replies


def ask(page: Any, model: Playlist, queue: list[tuple[str, str]]) -> dict[str, Any]:
    model.requests.clear()
    model.queue = list(queue)
    outcome: dict[str, Any] = page.evaluate(
        "() => window.r.ask('total amount of sales.csv', {model: 'scripted'})"
    )
    return outcome


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BOMBS))
def test_an_ask_still_answers_beside_each_bomb(
    a_page: Any, a_playlist: tuple[Playlist, str], name: str
) -> None:
    model, _ = a_playlist
    build, said = BOMBS[name]
    replies = fresh(a_page, {name: build(), "sales.csv": SALES}, {"privacy": "full"})
    bomb = replies[name]
    assert bomb["reply"]["status"] == "error", bomb
    assert f"/data/{name}" in bomb["reply"]["message"] and said in bomb["reply"]["message"]
    assert bomb["ms"] < 30_000, bomb["ms"]
    assert replies["sales.csv"]["reply"]["status"] == "ok"

    outcome = ask(a_page, model, [("code", "print(df['amount'].sum())"), ("text", "It is 49.")])
    assert outcome["status"] == "ok", outcome.get("message")
    cells = [s for s in outcome["steps"] if s["kind"] == "code" and not s.get("origin")]
    assert "49" in cells[-1]["result"]["stdout"]
    # What the model was sent: small, and the bomb named with what is wrong with it.
    assert max(r["bytes"] for r in model.requests) < 60_000
    system = model.requests[0]["payload"]["messages"][0]["content"]
    assert f"/data/{name}: cannot be read" in system and said in system
    # The sandbox goes on: the next run works and both files are still listed.
    after = a_page.evaluate(
        "async () => [await window.r.run('print(6 * 7)'), await window.r.listFiles()]"
    )
    assert after[0]["status"] == "ok" and after[0]["stdout"].strip() == "42"
    assert {f["name"] for f in after[1]} >= {name, "sales.csv"}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "said"),
    [("repeats.ods", "cells"), ("lines.zip", "over 100 MB"), ("header.csv", "first line")],
)
def test_schema_mode_sends_nothing_and_names_the_bomb(
    a_page: Any, a_playlist: tuple[Playlist, str], name: str, said: str
) -> None:
    model, _ = a_playlist
    build, _ = BOMBS[name]
    fresh(a_page, {name: build(), "sales.csv": SALES}, {"privacy": "schema"})
    outcome = ask(a_page, model, [("code", "print(df['amount'].sum())"), ("text", "Done.")])
    assert outcome["status"] == "error" and model.requests == []
    assert "Nothing was sent" in outcome["message"]
    assert f"/data/{name}" in outcome["message"] and said in outcome["message"]
