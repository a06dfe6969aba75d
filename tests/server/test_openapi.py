"""The OpenAPI description of the relay: a valid document that matches the app's routes."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import requests
import schemathesis
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.routing import Mount, Route

from reckon.server import Limits, Profile, RelayConfig, create_app
from reckon.server._openapi import openapi_document
from support import ROOT, Relay

DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Everything else the app answers belongs to the static site.
SITE_PATH = "/"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    data = json.loads(openapi_document())
    assert isinstance(data, dict)
    return data


def a_validator(document: dict[str, Any], pointer: str) -> jsonschema_rs.Validator:
    """Validates against the schema at `pointer` ("#/components/..."), refs resolved."""
    wrapper = {"$schema": DIALECT, "$ref": pointer, "components": document["components"]}
    return jsonschema_rs.validator_for(wrapper)


def refs_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs_in(item)


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"{ref}: only local references are used"
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"{ref} does not resolve"
        node = node[part]
    return node


def routes_of(config: RelayConfig) -> set[tuple[str, str]]:
    described = set()
    for route in create_app(config).routes:
        if isinstance(route, Mount):
            continue
        assert isinstance(route, Route), route
        if route.path == SITE_PATH:
            continue
        assert route.methods, f"{route.path} answers every method"
        # Starlette adds HEAD to every GET route by itself.
        described |= {(route.path, m.lower()) for m in route.methods if m != "HEAD"}
    return described


def test_the_document_is_a_valid_openapi_3_1_description(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1.")

    schemathesis.openapi.from_dict(document).validate()  # the OpenAPI 3.1 meta-schema


def test_every_reference_resolves_and_every_component_is_used(document: dict[str, Any]) -> None:
    refs = set(refs_in(document))
    for ref in refs:
        resolve(document, ref)

    for kind, components in document["components"].items():
        if kind == "securitySchemes":
            continue
        unused = {name for name in components if f"#/components/{kind}/{name}" not in refs}
        assert not unused, f"unused components/{kind}: {sorted(unused)}"


def test_every_schema_is_a_valid_json_schema_2020_12(document: dict[str, Any]) -> None:
    for name in document["components"]["schemas"]:
        pointer = f"#/components/schemas/{name}"
        jsonschema_rs.meta.validate({"$schema": DIALECT, **resolve(document, pointer)})
        a_validator(document, pointer)  # compiles, with its references


def test_the_examples_match_their_schemas(document: dict[str, Any]) -> None:
    operation = document["paths"]["/v1/chat/completions"]["post"]
    content = operation["requestBody"]["content"]["application/json"]
    pointer = content["schema"]["$ref"]

    a_validator(document, pointer).validate(content["example"])


def test_every_operation_has_an_id_and_error_answers_in_the_error_shape(
    document: dict[str, Any],
) -> None:
    ids = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert method in HTTP_METHODS, f"{path}: {method}"
            ids.append(operation["operationId"])
            for status, response in operation["responses"].items():
                if status.startswith("2"):
                    continue
                response = resolve(document, response["$ref"])
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Error"}, f"{path} {status}"
    assert len(ids) == len(set(ids))


def test_the_errors_of_protocol_md_are_described(document: dict[str, Any]) -> None:
    responses = document["paths"]["/v1/chat/completions"]["post"]["responses"]

    assert {"200", "400", "401", "403", "404", "413", "429", "502", "503", "504"} <= set(responses)
    assert set(responses["200"]["content"]) == {"application/json", "text/event-stream"}


@pytest.mark.parametrize("site", [False, True], ids=["without-site", "with-site"])
def test_every_route_is_described_and_every_description_is_a_route(
    document: dict[str, Any], site: bool, a_site: Path
) -> None:
    config = RelayConfig(
        profiles=[Profile(name="local", base_url="http://127.0.0.1:9/v1", models=["m"])],
        site_dir=a_site if site else None,
    )
    described = {(path, method) for path, item in document["paths"].items() for method in item}

    assert routes_of(config) == described


def test_the_relay_serves_the_document(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.get("/openapi.json")

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.content == openapi_document()


def test_the_document_needs_no_token_but_the_api_does(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay: Relay = a_relay_with(token="the-relay-token-123")
    with relay.client() as client:
        document = client.get("/openapi.json")
        info = client.get("/api/info")

    assert document.status_code == 200
    assert info.status_code == 401


def test_a_foreign_origin_cannot_read_the_document(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.get("/openapi.json", headers={"Origin": "https://evil.example"})

    assert response.status_code == 403
    assert set(response.json()) == {"error"}


def test_the_document_is_package_data() -> None:
    pyproject = ROOT / "pyproject.toml"
    settings = tomllib.loads(pyproject.read_text(encoding="utf-8"))

    assert "openapi.json" in settings["tool"]["setuptools"]["package-data"]["reckon.server"]


@pytest.mark.parametrize(
    ("stream", "valid"),
    [
        (b': keep-alive\n\ndata: {"object":"chat.completion.chunk","choices":[]}\n\n', True),
        (b'data: {"object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n', True),
        (b'data: {"error":{"type":"upstream_error","message":"gone"}}\n\n', True),
        (b'data: {"object":"chat.completion","choices":[]}\n\n', False),
        (b'data: {"object":"chat.completion.chunk"}\n\n', False),
        (b"data: not json\n\n", False),
    ],
)
def test_the_stream_schema_tells_chunks_from_anything_else(stream: bytes, valid: bool) -> None:
    schema = schemathesis.openapi.from_dict(json.loads(openapi_document()))
    case = schema["/v1/chat/completions"]["POST"].Case(body={"messages": [{"role": "user"}]})
    request = requests.Request("POST", "http://127.0.0.1/v1/chat/completions").prepare()
    response = schemathesis.Response(
        status_code=200,
        headers={"content-type": ["text/event-stream"]},
        content=stream,
        request=request,
        elapsed=0.0,
        verify=True,
    )

    if valid:
        case.validate_response(response, checks=[response_schema_conformance])
    else:
        with pytest.raises(FailureGroup):
            case.validate_response(response, checks=[response_schema_conformance])


def test_limit_refusals_a_down_limit_store_and_metrics_answer_as_documented(
    a_relay_with: Callable[..., Relay], a_closed_port: int
) -> None:
    checks = [
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
    ]
    nobody = f"redis://127.0.0.1:{a_closed_port}/0"
    limited = a_relay_with(limits=Limits(requests_per_minute=1))
    down = a_relay_with(limits=Limits(requests_per_minute=1), redis_url=nobody)
    schema = schemathesis.openapi.from_dict(json.loads(openapi_document()))
    chat = schema["/v1/chat/completions"]["POST"]
    body = {"model": "tiny-model", "messages": [{"role": "user", "content": "hi"}]}
    statuses = []
    with requests.Session() as session:
        session.trust_env = False
        for base in (limited.url, limited.url, down.url):
            case = chat.Case(body=body)
            response = case.call(base_url=base, session=session, timeout=10)
            case.validate_response(response, checks=checks)
            statuses.append(response.status_code)
        metrics = schema["/metrics"]["GET"].Case()
        scraped = metrics.call(base_url=limited.url, session=session, timeout=10)
        metrics.validate_response(scraped, checks=checks)

    assert statuses == [200, 429, 503]
    assert scraped.status_code == 200
