"""Relay tools (`[[tool]]` in `reckon serve`'s config): listed without their URL or
headers, called with the arguments checked on the relay (a direct HTTP call that skips
the browser is refused the same), forwarded to a real loopback endpoint with a secret
header the browser never sees, bounded in time and size, errors as data."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reckon import ConfigError
from reckon.server import Limits, RelayConfig, RelayTool, create_app, load_config_file
from support import Relay
from support._tool_endpoint import SECRET, SECRET_ENV, Endpoint, an_orders_endpoint

MONTH = {
    "type": "object",
    "properties": {"month": {"type": "integer", "minimum": 1, "maximum": 12}},
    "required": ["month"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def an_endpoint() -> Iterator[Endpoint]:
    with an_orders_endpoint() as endpoint:
        yield endpoint


@pytest.fixture
def endpoint(an_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> Endpoint:
    an_endpoint.seen.clear()
    monkeypatch.setenv(SECRET_ENV, SECRET)
    return an_endpoint


def tools_of(endpoint: Endpoint) -> list[RelayTool]:
    secret = {"X-Api-Key": SECRET_ENV}
    return [
        RelayTool(
            **endpoint.tool(
                "get_orders",
                "/orders",
                parameters=MONTH,
                secret_headers=secret,
                returns={"type": "array", "items": {"type": "object"}},
            )
        ),
        RelayTool(**endpoint.tool("orders_by_get", "/orders", method="GET", parameters=MONTH)),
        RelayTool(**endpoint.tool("slow", "/slow", timeout=1.0)),
        RelayTool(**endpoint.tool("huge", "/huge", max_result_bytes=100_000)),
        RelayTool(**endpoint.tool("fail", "/fail")),
        RelayTool(**endpoint.tool("echo", "/echo", secret_headers=secret, policy="ask")),
        RelayTool(**endpoint.tool("text", "/text")),
        RelayTool(**endpoint.tool("typed", "/orders", returns={"type": "object"})),
    ]


@pytest.fixture
def relay(a_relay_with: Callable[..., Relay], endpoint: Endpoint) -> Relay:
    return a_relay_with(tools=tools_of(endpoint))


def call(relay: Relay, name: str, args: Any = None, **headers: str) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"name": name} if args is None else {"name": name, "args": args}
    with relay.client() as client:
        response = client.post("/api/tools/call", json=body, headers=headers)
    return response.status_code, response.json()


def test_the_list_names_schemas_and_policies_never_the_url_or_headers(
    relay: Relay, endpoint: Endpoint
) -> None:
    with relay.client() as client:
        response = client.get("/api/tools")
    listed = response.json()

    assert response.status_code == 200 and listed["status"] == "ok"
    first = listed["tools"][0]
    assert (
        first["name"] == "get_orders" and first["parameters"] == MONTH and first["policy"] == "run"
    )
    assert first["returns"] == {"type": "array", "items": {"type": "object"}}
    assert [t["policy"] for t in listed["tools"] if t["name"] == "echo"] == ["ask"]
    assert endpoint.url not in response.text and "127.0.0.1" not in response.text
    assert (
        SECRET not in response.text
        and SECRET_ENV not in response.text
        and "X-Api-Key" not in response.text
    )


def test_a_call_reaches_the_endpoint_with_its_secret_header_and_returns_the_rows(
    relay: Relay, endpoint: Endpoint
) -> None:
    status, answer = call(
        relay, "get_orders", {"month": 3}, Authorization="Bearer browser", Cookie="c=1"
    )

    assert status == 200 and answer["status"] == "ok"
    assert [row["id"] for row in answer["result"]] == [1, 2]
    [seen] = endpoint.seen
    assert seen["headers"]["x-api-key"] == SECRET
    # Nothing of the browser's request is forwarded but its arguments.
    assert "cookie" not in seen["headers"] and "authorization" not in seen["headers"]


def test_a_get_tool_sends_its_arguments_as_query_parameters(
    relay: Relay, endpoint: Endpoint
) -> None:
    status, answer = call(relay, "orders_by_get", {"month": 4})

    assert status == 200 and [row["id"] for row in answer["result"]] == [3]
    assert endpoint.seen[0]["query"] == {"month": "4"} and endpoint.seen[0]["body"] == b""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"month": 13}, "month must be at most 12, not 13"),
        ({"month": "3"}, "month must be integer"),
        ({}, "month is required"),
        ({"month": 3, "sql": "drop table"}, "sql is not an argument of this tool"),
        ([3], "args must be an object"),
    ],
)
def test_bad_arguments_are_refused_by_the_relay_and_never_reach_the_endpoint(
    relay: Relay, endpoint: Endpoint, args: Any, words: str
) -> None:
    status, answer = call(relay, "get_orders", args)  # a direct call: no browser checked them

    assert status == 200 and answer["status"] == "error" and answer["code"] == "bad_arguments"
    assert words in answer["error"] and "Its parameters" in answer["error"]
    assert endpoint.seen == []


def test_an_unknown_tool_is_refused_with_the_names_there_are(
    relay: Relay, endpoint: Endpoint
) -> None:
    status, answer = call(relay, "drop_tables", {})

    assert status == 200 and answer["code"] == "unknown_tool"
    assert "get_orders" in answer["error"] and endpoint.seen == []


def test_a_body_that_is_not_a_call_says_what_to_send(relay: Relay) -> None:
    with relay.client() as client:
        response = client.post("/api/tools/call", content=b"{not json")

    assert response.status_code == 200 and response.json()["status"] == "error"
    assert '"name"' in response.json()["error"]


def test_a_hanging_endpoint_is_cut_at_the_tools_timeout(relay: Relay) -> None:
    started = time.monotonic()
    status, answer = call(relay, "slow")

    assert status == 200 and answer == {
        "status": "error",
        "code": "timeout",
        "error": "slow did not answer within 1 s (its time limit); "
        "try again later, or ask for less",
    }
    assert time.monotonic() - started < 5


def test_an_oversized_result_is_refused(relay: Relay) -> None:
    status, answer = call(relay, "huge")

    assert status == 200 and answer["code"] == "result_too_large"
    assert "more than 100,000 bytes" in answer["error"]


def test_an_endpoint_error_comes_back_as_data(relay: Relay) -> None:
    status, answer = call(relay, "fail")

    assert status == 200 and answer["status"] == "error" and answer["code"] == "endpoint_error"
    assert answer["error"] == "fail failed: its endpoint answered HTTP 500: database down"


def test_an_answer_that_is_not_json_or_not_as_declared_is_an_error(relay: Relay) -> None:
    assert call(relay, "text")[1]["code"] == "not_json"
    status, answer = call(relay, "typed")
    assert status == 200 and answer["code"] == "bad_result" and "must be object" in answer["error"]


def test_an_endpoint_that_echoes_the_secret_gives_the_browser_no_secret(relay: Relay) -> None:
    with relay.client() as client:
        response = client.post("/api/tools/call", json={"name": "echo"})

    assert response.json() == {"status": "ok", "result": {"you_sent": "[redacted]"}}
    assert SECRET not in response.text


def test_the_tools_routes_need_the_relays_token(
    a_relay_with: Callable[..., Relay], endpoint: Endpoint
) -> None:
    relay = a_relay_with(tools=tools_of(endpoint), token="a-token-for-the-tools-0123")

    with relay.client() as client:
        assert client.get("/api/tools").status_code == 401
        assert (
            client.post(
                "/api/tools/call", json={"name": "get_orders", "args": {"month": 3}}
            ).status_code
            == 401
        )
    assert endpoint.seen == []
    status, answer = call(
        relay, "get_orders", {"month": 3}, Authorization="Bearer a-token-for-the-tools-0123"
    )
    assert status == 200 and len(answer["result"]) == 2


def test_tool_calls_count_against_the_callers_limits(
    a_relay_with: Callable[..., Relay], endpoint: Endpoint
) -> None:
    relay = a_relay_with(tools=tools_of(endpoint), limits=Limits(requests_per_minute=2))

    answers = [call(relay, "get_orders", {"month": 3}) for _ in range(3)]

    assert [status for status, _ in answers] == [200, 200, 429]
    # Refused by the relay's limits, in the relay's error shape (as a model call is).
    assert answers[2][1]["error"]["code"] == "requests_per_minute"
    assert len(endpoint.seen) == 2


def test_the_config_file_declares_tools(tmp_path: Path, endpoint: Endpoint) -> None:
    path = tmp_path / "relay.toml"
    path.write_text(
        f"""
[[tool]]
name = "get_orders"
description = "The shop's orders of one month."
url = "{endpoint.url}/orders"
policy = "once"
timeout = 5
[tool.parameters]
type = "object"
required = ["month"]
properties.month = {{ type = "integer" }}
[tool.secret_headers]
X-Api-Key = "{SECRET_ENV}"
""",
        encoding="utf-8",
    )

    config = RelayConfig(**load_config_file(path))

    [tool] = config.tools
    assert (
        tool.policy == "once"
        and tool.timeout == 5.0
        and tool.secret_headers == {"X-Api-Key": SECRET_ENV}
    )


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ('name = "import"', "must be a Python identifier"),
        ('name = "t"\nurl = "ftp://x"', "must be an http:// or https:// URL"),
        ('name = "t"\npolicy = "always"', "policy 'always' is not one of run, ask, once"),
        (
            'name = "t"\nparameters = { type = "object", pattern = "x" }',
            'the keyword "pattern" is not supported',
        ),
        ('name = "t"\nparameters = { type = "array" }', 'its type must be "object"'),
        ('name = "t"\ntimeout = 0', "timeout must be a number of seconds"),
        ('name = "t"\nmethod = "DELETE"', "must be GET"),
        (
            'name = "t"\nsecret_headers = { X-Key = "sk-live-abc def" }',
            "must name an environment variable",
        ),
        ('name = "t"\nsecret_headers = { Host = "H" }', "cannot be a header the relay sends"),
        ('name = "t"\nheaders = 3', "'headers' has the wrong type"),
        ('name = "t"\nuri = "x"', "unknown key 'uri'"),
    ],
)
def test_a_bad_tool_table_is_refused_at_start_with_what_to_do(
    tmp_path: Path, table: str, words: str
) -> None:
    path = tmp_path / "relay.toml"
    base = 'description = "d"\n' + ("" if "url" in table else 'url = "http://127.0.0.1:9/x"\n')
    path.write_text(f"[[tool]]\n{base}{table}\n", encoding="utf-8")

    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        RelayConfig(**load_config_file(path))


def test_a_missing_secret_variable_stops_the_relay_at_start(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV)
    config = RelayConfig(tools=tools_of(endpoint), port=0)

    with pytest.raises(
        ConfigError, match=f"{SECRET_ENV} \\(tool 'get_orders', header X-Api-Key\\)"
    ):
        create_app(config)
