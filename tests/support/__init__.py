"""What the tests share: paths, the fake model server, servers in the test process,
`reckon serve` as a subprocess, and the relay in front of the fake (tests/README.md).

Tests import from here (``from support import ...``), never from a conftest module;
the conftest files only register fixtures built from these pieces.
"""

from ._bombs import BOMBS
from ._browser import CHROMIUM_ARGS
from ._markdown import live_markdown, rendered
from ._paths import CHROMIUM, PY, QUESTION_SETS, ROOT, SITE, TEST_DATA
from ._relay import (
    HELLO_BODY,
    KEY_ENV,
    THE_KEY,
    Relay,
    Relays,
    an_sdk_client,
    burst,
    relay_config,
    relays,
)
from ._scripted import HOSTILE_MARKDOWN, SALES, ScriptedModel
from ._serve import ServeProcess, reckon_serve
from ._sse import chunk, event_stream, json_reply, split_every, sse, text_stream, tool_stream
from ._threads import (
    QuietHandler,
    QuietServer,
    Running,
    an_address_off_loopback,
    an_unused_port,
    serve_folder,
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
    a_model_server,
)
from ._wheels import tiny_wheel

__all__ = [
    "BOMBS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "COMPLETION",
    "HELLO_BODY",
    "HOSTILE_MARKDOWN",
    "KEY_ENV",
    "MODEL",
    "PY",
    "QUESTION_SETS",
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
    "a_model_server",
    "an_address_off_loopback",
    "an_sdk_client",
    "an_unused_port",
    "burst",
    "chunk",
    "event_stream",
    "json_reply",
    "live_markdown",
    "reckon_serve",
    "relay_config",
    "relays",
    "rendered",
    "serve_folder",
    "serving",
    "split_every",
    "sse",
    "text_stream",
    "tiny_wheel",
    "tool_stream",
    "wait_for_port",
]
