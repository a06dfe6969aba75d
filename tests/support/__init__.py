"""What the tests share: paths, the fake model server, servers in the test process,
`reckon serve` as a subprocess, and the relay in front of the fake (tests/README.md).

Tests import from here (``from support import ...``), never from a conftest module;
the conftest files only register fixtures built from these pieces.
"""

from ._paths import PY, QUESTIONS, ROOT, SITE, TEST_DATA
from ._relay import HELLO_BODY, KEY_ENV, THE_KEY, Relay, Relays, burst, relay_config, relays
from ._scripted import HOSTILE_MARKDOWN, SALES, ScriptedModel
from ._serve import ServeProcess, reckon_serve
from ._sse import chunk, event_stream, json_reply, split_every, sse, text_stream, tool_stream
from ._threads import (
    QuietHandler,
    QuietServer,
    Running,
    a_static_server,
    an_unused_port,
    serving,
    wait_for_port,
)
from ._transport import HttpxTransport
from ._upstream import (
    COMPLETION,
    MODEL,
    STREAM_CHUNKS,
    FakeUpstream,
    Handler,
    Responder,
    Script,
    Seen,
    a_fake_upstream,
)

__all__ = [
    "COMPLETION",
    "HELLO_BODY",
    "HOSTILE_MARKDOWN",
    "KEY_ENV",
    "MODEL",
    "PY",
    "QUESTIONS",
    "ROOT",
    "SALES",
    "SITE",
    "STREAM_CHUNKS",
    "TEST_DATA",
    "THE_KEY",
    "FakeUpstream",
    "Handler",
    "HttpxTransport",
    "QuietHandler",
    "QuietServer",
    "Relay",
    "Relays",
    "Responder",
    "Running",
    "Script",
    "ScriptedModel",
    "Seen",
    "ServeProcess",
    "a_fake_upstream",
    "a_static_server",
    "an_unused_port",
    "burst",
    "chunk",
    "event_stream",
    "json_reply",
    "reckon_serve",
    "relay_config",
    "relays",
    "serving",
    "split_every",
    "sse",
    "text_stream",
    "tool_stream",
    "wait_for_port",
]
