"""Who is calling: the relay's shared token, a client's own token, or a signed token.

A signed token is what a site that embeds Reckon hands each of its users, so that
the relay can tell them apart without keeping a list of them::

    <client id>.<unix expiry>.<signature>
    signature = base64url(HMAC-SHA256(client_secret, "<client id>.<unix expiry>")), unpadded

The relay checks the signature (in constant time) before it looks at the expiry, so
a forged token learns nothing, and it never needs to store a token it did not issue.
Nothing here logs a token: refusals say what was wrong, never what was sent.

A token carries its expiry but not when it was made, so a token minted with a year's
lifetime, or forged far ahead with a secret that leaked, would be good for all of it.
The relay accepts a token only while its expiry is at most ``max_token_ttl`` seconds
away (plus ``_SKEW`` for a site whose clock runs ahead): whatever expiry a token
names, the span in which it is accepted is at most ``max_token_ttl`` long. A token
made for longer is refused until its last ``max_token_ttl`` seconds; the refusal
says to mint shorter ones.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from reckon._exceptions import ConfigError
from reckon.server._access import CLIENT_ID
from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError

__all__ = ["IDENTITY", "SECRET_ENV", "Identity", "Keyring", "mint_token", "signature_of"]

SECRET_ENV = "RECKON_CLIENT_SECRET"
# Where the guard leaves the caller's identity in the ASGI scope, for the limits.
IDENTITY = "reckon.identity"
# 32 bytes of HMAC-SHA256 are 43 base64url characters without padding.
_SIGNED = re.compile(r"^(?P<id>.+)\.(?P<expiry>[0-9]{1,12})\.(?P<signature>[A-Za-z0-9_-]{43})$")
_CHALLENGE = {"WWW-Authenticate": "Bearer"}
# How far ahead of the relay's clock an embedding site's clock may run: a token minted
# there with the longest lifetime still passes.
_SKEW = 60

How = Literal["open", "shared", "client", "signed"]


@dataclass(frozen=True)
class Identity:
    """The caller. ``client`` is None for the shared token and when no token is needed:
    such callers are told apart (and limited) by their address only."""

    how: How
    client: str | None = None


def signature_of(secret: str, client_id: str, expiry: int) -> str:
    digest = hmac.new(secret.encode(), f"{client_id}.{expiry}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def mint_token(client_id: str, secret: str, *, ttl: int, now: float | None = None) -> str:
    """A token for ``client_id`` that the relay accepts for ``ttl`` seconds."""
    if not CLIENT_ID.match(client_id):
        raise ConfigError(
            f"client id {client_id!r} is not allowed: 1-128 letters, digits, '_', '.', '@', "
            "'+' or '-', starting with a letter or digit"
        )
    if ttl < 1:
        raise ConfigError(f"the token's lifetime must be at least 1 second, not {ttl}")
    expiry = int(time.time() if now is None else now) + ttl
    return f"{client_id}.{expiry}.{signature_of(secret, client_id, expiry)}"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class Keyring:
    """Turns an ``Authorization`` header into an `Identity`, or a 401."""

    def __init__(self, config: RelayConfig) -> None:
        self.shared = config.token
        self.secret = config.client_secret
        # Looked up by digest: a dict keyed by the tokens themselves would compare them
        # with ==, which stops at the first differing byte.
        self.clients = {_digest(c.token): c for c in config.clients}
        self.required = config.auth_required
        self.max_ttl = config.max_token_ttl

    def identify(self, authorization: str | None, *, now: float | None = None) -> Identity:
        if not self.required:
            return Identity("open")
        scheme, _, given = (authorization or "").partition(" ")
        given = given.strip()
        if scheme.lower() != "bearer" or not given:
            raise self._refuse(self._missing())
        if self.shared is not None and hmac.compare_digest(given.encode(), self.shared.encode()):
            return Identity("shared")
        client = self.clients.get(_digest(given))
        if client is not None and hmac.compare_digest(given.encode(), client.token.encode()):
            return Identity("client", client.id)
        signed = _SIGNED.match(given) if self.secret is not None else None
        if signed is None:
            raise self._refuse(self._wrong())
        return self._signed(signed, time.time() if now is None else now)

    def _signed(self, match: re.Match[str], now: float) -> Identity:
        assert self.secret is not None
        client_id, expiry = match["id"], int(match["expiry"])
        expected = signature_of(self.secret, client_id, expiry)
        if not hmac.compare_digest(match["signature"].encode(), expected.encode()):
            raise self._refuse(
                "The signed token's signature is wrong: it was not made with this relay's "
                "client_secret, or it was changed after signing. Ask the site for a new token."
            )
        if not CLIENT_ID.match(client_id):
            raise self._refuse(
                f"The signed token names the client {client_id[:40]!r}, which is not a valid "
                "client id (letters, digits, '_', '.', '@', '+' or '-')."
            )
        if expiry <= now:
            when = datetime.fromtimestamp(expiry, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            raise self._refuse(
                f"The signed token for client {client_id!r} expired at {when} "
                f"({now - expiry:.0f} s ago). Ask the site for a new token."
            )
        if expiry - now > self.max_ttl + _SKEW:
            when = datetime.fromtimestamp(expiry, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            raise self._refuse(
                f"The signed token for client {client_id!r} is valid until {when}, "
                f"{expiry - now:.0f} s from now; this relay accepts signed tokens for at most "
                f"{self.max_ttl} s (max_token_ttl). Ask the site for a token with a shorter "
                "lifetime."
            )
        return Identity("signed", client_id)

    def _missing(self) -> str:
        if not self.clients and self.secret is None:
            return (
                "This relay needs a token: send 'Authorization: Bearer <token>' with the token "
                "the relay was started with (--token or RECKON_TOKEN)."
            )
        return (
            "This relay needs a token: send 'Authorization: Bearer <token>' with your client "
            "token, or with a token signed by the site that embeds Reckon."
        )

    def _wrong(self) -> str:
        if not self.clients and self.secret is None:
            return (
                "The token is wrong: use the one the relay was started with "
                "(--token or RECKON_TOKEN)."
            )
        signed = " or a signed token (<id>.<expiry>.<signature>)" if self.secret else ""
        return (
            f"The token is not one this relay knows: send your client token{signed}. "
            "Ask the relay's operator for one."
        )

    @staticmethod
    def _refuse(message: str) -> RelayError:
        return RelayError(401, message, headers=_CHALLENGE)
