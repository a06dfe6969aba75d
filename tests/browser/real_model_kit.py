"""What the real-model page tests share beyond the page: a file with dates, and a
loopback server in front of the real model that adds what small models are seen to
write after their code (an "output" they predicted).

The files are made here, by formulas, so each expected answer follows from the data
and not from a number typed into a test.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import httpx

from support import Script, Seen, chunk

# Monthly closing prices of three symbols over 2000-2001, dates written as a stock
# file writes them ("Jan 1 2000"): the loader must read them as dates.
_MONTHS = [date(2000 + m // 12, m % 12 + 1, 1) for m in range(24)]
STOCKS = "symbol,date,price\n" + "".join(
    f"{symbol},{d.strftime('%b')} {d.day} {d.year},{base + step * n:.2f}\n"
    for symbol, base, step in (("AAA", 40.0, 1.5), ("BBB", 100.0, -2.0), ("CCC", 12.0, 0.25))
    for n, d in enumerate(_MONTHS)
)


def upload(page: Any, name: str, text: str) -> None:
    page.evaluate(
        "([name, text]) => window.reckon.upload({name, bytes: new TextEncoder().encode(text)})",
        [name, text],
    )


class Interposer:
    """A `FakeUpstream` responder that passes each chat call to the real model server
    and streams its reply back, adding ``invent`` to the first reply that holds a code
    block (``added`` says whether it did). Non-chat calls never reach it."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.site = ""
        self.invent = ""
        self.added = False
        self.replies: list[str] = []

    async def __call__(self, seen: Seen) -> Script:
        payload = dict(seen.json)
        payload["stream"] = False
        payload.pop("stream_options", None)
        async with httpx.AsyncClient(timeout=600) as client:
            response = await client.post(f"{self.upstream}/chat/completions", json=payload)
        response.raise_for_status()
        reply = response.json()
        message = reply["choices"][0]["message"]
        text = message.get("content") or ""
        if self.invent and not self.added and "```" in text:
            text = text.rstrip() + "\n\n" + self.invent + "\n"
            self.added = True
        self.replies.append(text)
        pieces = [chunk({"role": "assistant", "content": ""})]
        pieces += [chunk({"content": text[i : i + 40]}) for i in range(0, len(text), 40)]
        for index, call in enumerate(message.get("tool_calls") or []):
            pieces.append(chunk({"tool_calls": [{"index": index, **call}]}))
        pieces.append(chunk({}, reply["choices"][0].get("finish_reason") or "stop"))
        if reply.get("usage"):
            usage = {"object": "chat.completion.chunk", "choices": [], "usage": reply["usage"]}
            pieces.append(f"data: {json.dumps(usage)}\n\n".encode())
        pieces.append(b"data: [DONE]\n\n")
        return Script(chunks=pieces, stream=True)
