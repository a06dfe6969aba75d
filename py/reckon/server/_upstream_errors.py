"""What the browser hears when a model server fails: a transport error (it cannot be
reached, it sent nothing in time, it closed the answer early) or an error answer, each
as a RelayError that names the server by its public URL and says what to try next.

Nothing here may leak a secret: the URL is shown without userinfo or query, and an
error answer's message is scrubbed of every key before it is passed on.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from reckon.server import _json
from reckon.server._config import Profile, RelayConfig, ResolvedModel
from reckon.server._errors import RelayError, Scrubber

__all__ = ["describe_failure", "upstream_error"]


def public_url(profile: Profile) -> str:
    """The base URL without userinfo or query, both of which may hold secrets."""
    parts = urlsplit(profile.endpoint)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def describe_failure(exc: httpx.HTTPError, profile: Profile, config: RelayConfig) -> RelayError:
    """Turn a transport error into the 502/504 the browser gets."""
    where = f"the model server '{profile.name}' at {public_url(profile)}"
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return RelayError(
            502,
            f"Cannot reach {where}. Check that it is running and that the relay's "
            "--upstream / base_url points at it.",
        )
    if isinstance(exc, httpx.TimeoutException):
        return RelayError(
            504,
            f"{where.capitalize()} sent nothing for {config.first_byte_timeout:g} s. It may be "
            "overloaded or still loading the model; try again, or raise first_byte_timeout.",
        )
    if isinstance(exc, httpx.RemoteProtocolError):
        # Seen with llama-cpp-python, which ends the answer under way to serve a new one
        # unless started with --interrupt_requests False (scripts/local_model.py does).
        return RelayError(
            502,
            f"{where.capitalize()} closed the answer before its end. A server that answers "
            "one request at a time may have dropped it for another one (two tabs asking at "
            "once); ask again.",
        )
    return RelayError(502, f"The connection to {where} failed ({type(exc).__name__}). Try again.")


def upstream_error(
    response: httpx.Response,
    body: bytes,
    target: ResolvedModel,
    key_env: str | None,
    key_set: bool,
    scrub: Scrubber,
) -> RelayError:
    """An upstream's error answer (``body``, its first bytes) as the error the browser gets:
    its status and message, keys scrubbed, with a hint for the usual causes."""
    kind, detail = None, body.decode("utf-8", "replace").strip()
    try:
        data = _json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            kind = error.get("type") if isinstance(error.get("type"), str) else None
            detail = str(error.get("message") or error.get("detail") or detail)
        elif isinstance(error, str):
            detail = error
    status = response.status_code
    detail = detail if len(detail) <= 1000 else detail[:1000] + "..."
    message = f"The model server '{target.profile.name}' answered HTTP {status}: {detail}"
    if status in (401, 403):
        if key_env is None:
            message += " (this profile sends no API key; set its api_key_env)"
        elif not key_set:
            message += f" (the environment variable {key_env} is not set on the relay)"
        else:
            message += f" (check the API key in {key_env} on the relay)"
    elif status == 404:
        message += f" (check that it serves the model {target.model!r})"
    headers = {}
    if "retry-after" in response.headers:
        headers["Retry-After"] = response.headers["retry-after"]
    return RelayError(status, scrub.text(message), type=kind or "upstream_error", headers=headers)
