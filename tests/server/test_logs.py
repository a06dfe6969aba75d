"""`reckon serve` as a real process: whatever goes wrong, no log line holds the key or token.

The upstreams misbehave on purpose (down, junk bytes that echo the request, a
stream cut mid-way, answers the relay does not expect) and clients send
malformed requests; then the process's whole stdout and stderr are searched, and
so is its /metrics. The tokens looked for are all of them: the shared one, a
client's own, the signing secret and tokens signed with it.
"""

from __future__ import annotations

import io
import json
import logging
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx

from reckon.server import mint_token
from reckon.server._errors import ScrubbingFilter
from support import KEY_ENV, THE_KEY, FakeUpstream, Script, reckon_serve

TOKEN = "relay-token-5f4dcc3b5aa765d61d83-SECRET"
# A key with a stray newline: it shows up escaped (`\n`) in header-validation errors.
ODD_KEY_ENV = "RECKON_TEST_ODD_KEY"
ODD_KEY = "sk-odd-0123456789abcdef-SECRET\n"
CLIENT_TOKEN = "client-token-9f86d081884c7d65-SECRET"
CLIENT_SECRET = "signing-secret-2c26b46b68ffc68ff99b453c1d30413413422d706-SECRET"
SIGNED = mint_token("site-user-7", CLIENT_SECRET, ttl=3600)


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    conn.settimeout(5)
    with suppress(OSError):
        while b"\r\n\r\n" not in data:
            part = conn.recv(65536)
            if not part:
                break
            data += part
    return data


@contextmanager
def a_raw_upstream(answer: Callable[[socket.socket, bytes], None]) -> Iterator[str]:
    """A TCP server on loopback that answers each connection with `answer(conn, request)`."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                answer(conn, _read_request(conn))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        listener.close()
        thread.join(5)


def echo_junk(conn: socket.socket, request: bytes) -> None:
    # Not HTTP at all, and it carries the request (with its Authorization header) back.
    with suppress(OSError):
        conn.sendall(b"\x00\xffJUNK " + request + b"\r\n\r\n")


def cut_mid_stream(conn: socket.socket, request: bytes) -> None:
    # A proper stream start, one event quoting the request, then a reset connection.
    event = b"data: " + json.dumps({"echo": request.decode("latin-1")}).encode() + b"\n\n"
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    head += b"transfer-encoding: chunked\r\n\r\n"
    with suppress(OSError):
        conn.sendall(head + f"{len(event):x}\r\n".encode() + event + b"\r\n")
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_no_log_line_of_a_real_relay_process_holds_the_key_or_token(
    an_upstream: FakeUpstream, tmp_path: Path, a_closed_port: int
) -> None:
    with a_raw_upstream(echo_junk) as junk, a_raw_upstream(cut_mid_stream) as cut:
        down = f"http://127.0.0.1:{a_closed_port}/v1"
        profiles = [
            ("good", f"{an_upstream.url}/v1", "openai", KEY_ENV),
            ("junk", junk, "openai", KEY_ENV),
            ("cut", cut, "openai", KEY_ENV),
            ("down", down, "openai", KEY_ENV),
            ("claude", f"{an_upstream.url}/v1", "anthropic", KEY_ENV),
            ("odd", f"{an_upstream.url}/v1", "openai", ODD_KEY_ENV),
        ]
        config = tmp_path / "relay.toml"
        config.write_text(
            # Limits high enough to refuse nothing here: what is logged is the point.
            "[limits]\nrequests_per_minute = 100000\ntokens_per_day = 100000000\n\n"
            f'[[client]]\nid = "carol"\ntoken = "{CLIENT_TOKEN}"\n\n'
            + "".join(
                f'[[profile]]\nname = "{name}"\nbase_url = "{url}"\nprotocol = "{protocol}"\n'
                f'api_key_env = "{env}"\nmodels = ["m"]\n\n'
                for name, url, protocol, env in profiles
            )
        )
        err, out, statuses, metrics = _drive_a_relay(config, tmp_path, an_upstream)

    logs = out + err
    # The run did provoke what it meant to: refusals, upstream failures, and log
    # lines that would have quoted the key (the prompt, the model name).
    assert 401 in statuses and 413 in statuses and 400 in statuses, statuses
    assert 502 in statuses and 404 in statuses, statuses
    assert "says the prompt" in logs and "Invalid HTTP request" in logs, logs[-3000:]
    assert "[redacted]" in logs, logs[-3000:]
    assert "for client carol" in logs and "for client site-user-7" in logs, logs[-3000:]
    assert metrics.startswith("# HELP"), metrics[:300]
    signature = SIGNED.rsplit(".", 1)[1]
    for secret in (THE_KEY, TOKEN, ODD_KEY.strip(), CLIENT_TOKEN, CLIENT_SECRET, signature):
        assert secret not in logs, f"{secret[:6]}… appears in the relay's output"
        assert secret not in metrics, f"{secret[:6]}… appears in the relay's metrics"


def _drive_a_relay(
    config: Path, cwd: Path, upstream: FakeUpstream
) -> tuple[str, str, list[int], str]:
    env = {
        KEY_ENV: THE_KEY,
        ODD_KEY_ENV: ODD_KEY,
        "RECKON_TOKEN": TOKEN,
        "RECKON_CLIENT_SECRET": CLIENT_SECRET,
    }
    # Prompts are logged on request: this one quotes the key, as a user might.
    flags = ["--config", str(config), "--log-prompts"]
    statuses: list[int] = []
    metrics = ""
    with reckon_serve(*flags, site=cwd, env=env, cwd=cwd) as served:
        first = served.out[0]
        match = re.search(r"open (http://127\.0\.0\.1:(\d+)/)", first)
        assert match, first
        base, port = match.group(1), int(match.group(2))
        auth = {"Authorization": f"Bearer {TOKEN}"}
        hello = [{"role": "user", "content": f"my key is {THE_KEY}, says the prompt"}]
        with httpx.Client(base_url=base, trust_env=False, timeout=20, headers=auth) as client:

            def chat(model: str, **extra: object) -> None:
                body = {"model": model, "messages": hello, **extra}
                with client.stream("POST", "/v1/chat/completions", json=body) as response:
                    with suppress(httpx.HTTPError):
                        response.read()
                    statuses.append(response.status_code)

            for model in ("junk/m", "cut/m", "down/m", "odd/m", THE_KEY, f"good/{TOKEN}"):
                chat(model)
                chat(model, stream=True)
            # Answers the relay does not expect: not JSON, the wrong JSON, an error
            # that quotes the key, for both protocols.
            bodies = [b"<html>not json", b"[1, 2, 3]", b'{"content": 5, "usage": "x"}']
            bodies.append(json.dumps({"error": {"message": f"bad key {THE_KEY}"}}).encode())
            for body in bodies:
                for status in (200, 500):
                    upstream.script = Script(status=status, body=body)
                    chat("good/m")
                    chat("claude/m")
                    upstream.script = Script(status=status, body=body, chunks=[body])
                    chat("claude/m", stream=True)
            upstream.script = Script(chunks=[b"data: {not json\n\n", b"data: " + THE_KEY.encode()])
            chat("claude/m", stream=True)
            upstream.script = Script(break_after=1)
            chat("good/m")
            chat("claude/m", stream=True)
            # Malformed requests, a wrong token that is the key itself, a huge body.
            for content in (b"{", b"[]", b'{"model": 5}', b'{"model": "good/m", "messages": 7}'):
                statuses.append(client.post("/v1/chat/completions", content=content).status_code)
            wrong = {"Authorization": f"Bearer {THE_KEY}"}
            statuses.append(client.get("/v1/models", headers=wrong).status_code)
            statuses.append(client.get(f"/v1/{THE_KEY}").status_code)
            # A site path the static files cannot look up (a NUL byte): an unexpected
            # error, which Starlette re-raises for uvicorn to log with its traceback.
            statuses.append(client.get(f"/{THE_KEY}%00.html").status_code)
            big = b'{"model": "good/m", "messages": [], "x": "' + b"k" * (5 << 20) + b'"}'
            with suppress(httpx.HTTPError):
                statuses.append(client.post("/v1/chat/completions", content=big).status_code)
            # A client's own token and a signed one: their ids are logged, never the tokens,
            # even when the caller puts a token where a model name goes (that is logged).
            upstream.script = Script()
            for token in (CLIENT_TOKEN, SIGNED):
                as_client = {"Authorization": f"Bearer {token}"}
                for model in ("good/m", SIGNED, CLIENT_TOKEN, CLIENT_SECRET):
                    body = {"model": model, "messages": hello}
                    answer = client.post("/v1/chat/completions", json=body, headers=as_client)
                    statuses.append(answer.status_code)
            forged = SIGNED[:-2] + ("AA" if not SIGNED.endswith("AA") else "BB")
            refused = client.get("/api/info", headers={"Authorization": f"Bearer {forged}"})
            statuses.append(refused.status_code)
            metrics = client.get("/metrics").text
        # Bytes that are not HTTP, with the key in the request line.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            raw.sendall(f"GET\x00 /{THE_KEY} HTTP/9\r\nX: {TOKEN}\r\n\r\n".encode())
            with suppress(OSError):
                raw.recv(4096)
        served.stop()
        err, out = served.err(), "".join(served.out)
    return err, out, statuses, metrics


def test_a_traceback_logged_by_another_library_is_scrubbed_too() -> None:
    """What uvicorn logs after Starlette re-raises: `logger.exception(...)` with a
    traceback whose text (message, chained causes, groups) quotes the secrets."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ScrubbingFilter(lambda: [THE_KEY, TOKEN, ODD_KEY, None]))
    logger = logging.getLogger("test_logs.uvicorn-like")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            try:
                raise ValueError(f"Illegal header value {('Bearer ' + ODD_KEY).encode()!r}")
            except ValueError as cause:
                raise ExceptionGroup("upstream", [RuntimeError(f"token {TOKEN}")]) from cause
        except ExceptionGroup:
            logger.exception("Exception in ASGI application for %s", f"/v1/{THE_KEY}")
        logger.warning("bad format %s %s", THE_KEY)  # a broken call is still scrubbed
    finally:
        logger.removeHandler(handler)

    text = stream.getvalue()
    assert "Traceback" in text and "ExceptionGroup" in text and "Illegal header" in text
    for secret in (THE_KEY, TOKEN, ODD_KEY.strip(), repr(ODD_KEY)[1:-1]):
        assert secret not in text, text
    assert text.count("[redacted]") >= 4, text
