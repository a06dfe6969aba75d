"""Who is calling: a client's own token, a token the embedding site signed, the shared one."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from collections.abc import Callable

import httpx
import pytest

from reckon import ConfigError
from reckon._cli import main
from reckon.server import Client, mint_token
from reckon.server._config import RelayConfig
from reckon.server._errors import RelayError, Scrubber
from reckon.server._identity import Identity, Keyring
from support import MODEL, Relay

SECRET = "the-embedding-sites-secret-0123456789abcdef"
ALICE = Client("alice", "alice-own-token-0123456789")
HELLO = [{"role": "user", "content": "hi"}]


def site_mints(client_id: str, expiry: int, secret: str = SECRET) -> str:
    """What docs/relay.md tells an embedding site to do, written out independently."""
    message = f"{client_id}.{expiry}".encode()
    signature = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return f"{client_id}.{expiry}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def flip_last(token: str) -> str:
    return token[:-1] + ("B" if token.endswith("A") else "A")


def refusal(keyring: Keyring, token: str | None, now: float | None = None) -> str:
    header = None if token is None else f"Bearer {token}"
    with pytest.raises(RelayError) as raised:
        keyring.identify(header, now=now)
    assert raised.value.status == 401
    assert raised.value.headers == {"WWW-Authenticate": "Bearer"}
    return raised.value.message


def test_a_minted_token_is_the_documented_format() -> None:
    token = mint_token("alice@example.org", SECRET, ttl=600, now=1_700_000_000)

    assert token == site_mints("alice@example.org", 1_700_000_600)
    assert re.fullmatch(r"alice@example\.org\.1700000600\.[A-Za-z0-9_-]{43}", token)


def test_a_signed_token_names_its_client_until_it_expires() -> None:
    keyring = Keyring(RelayConfig(client_secret=SECRET))
    token = site_mints("alice", 1_700_000_600)

    assert keyring.identify(f"Bearer {token}", now=1_700_000_599) == Identity("signed", "alice")
    message = refusal(keyring, token, now=1_700_000_600)
    assert "The signed token for client 'alice' expired at 2023-11-14 22:23:20 UTC" in message
    assert "(0 s ago)" in message and "Ask the site for a new token" in message


@pytest.mark.parametrize(
    "token",
    [
        site_mints("alice", 1_700_000_600, secret="another-secret-entirely-0123456789"),
        site_mints("alice", 1_700_000_600).replace("alice", "mallory", 1),  # another id
        site_mints("alice", 1_700_000_600).replace("600.", "999.", 1),  # a later expiry
        flip_last(site_mints("alice", 1_700_000_600)),  # one character of the signature
    ],
    ids=["wrong-secret", "id-changed", "expiry-changed", "signature-changed"],
)
def test_a_token_not_signed_with_the_secret_is_refused(token: str) -> None:
    keyring = Keyring(RelayConfig(client_secret=SECRET))

    message = refusal(keyring, token, now=1_700_000_000)

    assert "The signed token's signature is wrong" in message
    assert token not in message


def test_without_a_secret_a_signed_looking_token_is_just_a_wrong_token() -> None:
    keyring = Keyring(RelayConfig(clients=[ALICE]))

    message = refusal(keyring, site_mints("alice", 1_700_000_600))

    assert "The token is not one this relay knows: send your client token." in message


@pytest.mark.parametrize(
    ("config", "token", "complaint"),
    [
        (RelayConfig(token="shared-token-1234"), None, "with the token the relay was started"),
        (RelayConfig(token="shared-token-1234"), "nope", "The token is wrong"),
        (RelayConfig(clients=[ALICE]), None, "with your client token, or with a token signed"),
        (RelayConfig(client_secret=SECRET), "x.1.y", "or a signed token (<id>.<expiry>."),
    ],
)
def test_missing_and_wrong_tokens_say_what_to_send(
    config: RelayConfig, token: str | None, complaint: str
) -> None:
    assert complaint in refusal(Keyring(config), token)


def test_the_shared_token_and_client_tokens_work_side_by_side() -> None:
    keyring = Keyring(RelayConfig(token="shared-token-1234", clients=[ALICE]))

    assert keyring.identify("Bearer shared-token-1234") == Identity("shared")
    assert keyring.identify(f"bearer {ALICE.token}") == Identity("client", "alice")
    assert "The token is not one" in refusal(keyring, ALICE.token[:-1])


def test_without_any_token_configured_everyone_is_let_in() -> None:
    keyring = Keyring(RelayConfig())

    assert keyring.identify(None) == Identity("open")
    assert keyring.identify("Bearer anything") == Identity("open")


def test_through_a_relay_each_kind_of_token_opens_the_api_and_none_goes_upstream(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(token="shared-token-1234", clients=[ALICE], client_secret=SECRET)
    signed = mint_token("bob", SECRET, ttl=60)
    expired = site_mints("bob", int(time.time()) - 5)
    statuses = {}
    with relay.client() as client:
        for name, token in [
            ("shared", "shared-token-1234"),
            ("client", ALICE.token),
            ("signed", signed),
            ("expired", expired),
            ("forged", site_mints("bob", int(time.time()) + 60, secret="x" * 40)),
        ]:
            response = client.post(
                "/v1/chat/completions",
                json={"model": MODEL, "messages": HELLO},
                headers={"Authorization": f"Bearer {token}"},
            )
            statuses[name] = response.status_code
            if response.status_code == 401:
                assert token not in response.text
        info = client.get("/api/info", headers={"Authorization": f"Bearer {signed}"}).json()
        metrics = client.get("/metrics")

    assert statuses == {"shared": 200, "client": 200, "signed": 200, "expired": 401, "forged": 401}
    assert info["auth"] is True
    assert metrics.status_code == 401  # like /api/*
    forwarded = str([seen.headers for seen in relay.upstream.seen])
    for token in ("shared-token-1234", ALICE.token, signed):
        assert token not in forwarded


def test_a_relay_with_only_a_secret_needs_a_token(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(client_secret=SECRET)
    with relay.client() as client:
        info = client.get("/api/info")
        models = client.get("/v1/models", headers={"Authorization": "Bearer not-signed"})

    assert info.status_code == 401
    assert "signed by the site that embeds Reckon" in info.json()["error"]["message"]
    assert models.status_code == 401


def test_signed_token_signatures_are_taken_out_of_log_text() -> None:
    token = mint_token("alice", SECRET, ttl=60)
    line = f"chat request refused (404): Unknown model {token!r}"

    scrubbed = Scrubber([]).text(line)

    assert token not in scrubbed
    assert token.rsplit(".", 1)[1] not in scrubbed
    assert scrubbed.endswith(f"'{token.rsplit('.', 1)[0]}.[redacted]'")


def test_reckon_token_prints_a_token_the_relay_accepts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RECKON_CLIENT_SECRET", SECRET)
    before = int(time.time())

    assert main(["token", "--client", "site-user-42", "--ttl", "120"]) == 0

    out, err = capsys.readouterr()
    token = out.strip()
    client_id, expiry, _ = token.rsplit(".", 2)
    assert client_id == "site-user-42"
    assert before + 120 <= int(expiry) <= int(time.time()) + 120
    assert token == site_mints("site-user-42", int(expiry))
    assert "valid until" in err and SECRET not in out + err
    keyring = Keyring(RelayConfig(client_secret=SECRET))
    assert keyring.identify(f"Bearer {token}") == Identity("signed", "site-user-42")


@pytest.mark.parametrize(
    ("argv", "env", "complaint"),
    [
        (["token", "--client", "a"], None, "$RECKON_CLIENT_SECRET is not set"),
        (["token", "--client", "a", "--secret-env", "MY_SECRET"], None, "$MY_SECRET is not set"),
        (["token", "--client", "a b"], SECRET, "client id 'a b' is not allowed"),
        (["token", "--client", "a", "--ttl", "0"], SECRET, "at least 1 second"),
        (["token"], SECRET, "the following arguments are required: --client"),
    ],
)
def test_reckon_token_mistakes_are_one_line_and_exit_code_2(
    argv: list[str],
    env: str | None,
    complaint: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("RECKON_CLIENT_SECRET", raising=False)
    if env is not None:
        monkeypatch.setenv("RECKON_CLIENT_SECRET", env)

    assert main(argv) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("reckon: error: ")
    assert complaint in err


def test_mint_token_checks_its_arguments() -> None:
    with pytest.raises(ConfigError, match="not allowed"):
        mint_token("", SECRET, ttl=1)


def test_an_unreadable_header_is_a_401_not_a_crash(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(clients=[ALICE])
    with httpx.Client(base_url=relay.url, trust_env=False, timeout=10) as client:
        response = client.get(
            "/api/info", headers={"Authorization": "Bearer \xe9t\xe9-token".encode("latin-1")}
        )

    assert response.status_code == 401


# -- A maximum lifetime (issue 32, R1) ---------------------------------------------------

NOW = 1_700_000_000


def test_a_token_that_expires_further_away_than_max_token_ttl_is_refused() -> None:
    keyring = Keyring(RelayConfig(client_secret=SECRET, max_token_ttl=3600))
    year = mint_token("alice", SECRET, ttl=365 * 86400, now=NOW)

    message = refusal(keyring, year, now=NOW)

    assert "The signed token for client 'alice' is valid until 2024-11-13" in message
    assert "31536000 s from now" in message and "at most 3600 s (max_token_ttl)" in message
    assert "Ask the site for a token with a shorter lifetime" in message and year not in message


def test_a_forged_far_future_expiry_is_refused_although_its_signature_is_right() -> None:
    # With a secret that leaked (and was not yet changed) anyone can sign any expiry; no
    # such token is good for more than max_token_ttl, so it cannot be kept for years.
    keyring = Keyring(RelayConfig(client_secret=SECRET))  # the default: a day
    forged = site_mints("mallory", 99_999_999_999)

    assert "at most 86400 s (max_token_ttl)" in refusal(keyring, forged, now=NOW)


def test_no_token_is_accepted_for_longer_than_max_token_ttl_whatever_its_expiry() -> None:
    keyring = Keyring(RelayConfig(client_secret=SECRET, max_token_ttl=3600))
    for ttl in (3600, 7200, 30 * 86400):
        expiry = NOW + ttl
        token = site_mints("alice", expiry)
        accepted = [t for t in range(NOW, expiry + 2, 30) if _accepts(keyring, token, now=t)]
        # Accepted from max_token_ttl (plus a minute of clock skew) before its expiry on.
        assert accepted[0] >= expiry - 3600 - 60 and accepted[-1] < expiry
        assert accepted[-1] - accepted[0] <= 3600 + 60


def test_a_token_minted_for_max_token_ttl_by_a_clock_a_little_ahead_is_accepted() -> None:
    keyring = Keyring(RelayConfig(client_secret=SECRET, max_token_ttl=3600))
    ahead = mint_token("alice", SECRET, ttl=3600, now=NOW + 30)  # the site's clock: +30 s

    assert keyring.identify(f"Bearer {ahead}", now=NOW) == Identity("signed", "alice")


def _accepts(keyring: Keyring, token: str, *, now: float) -> bool:
    try:
        keyring.identify(f"Bearer {token}", now=now)
    except RelayError:
        return False
    return True


def test_through_a_relay_a_token_with_too_long_a_lifetime_is_a_401(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(client_secret=SECRET, max_token_ttl=600)
    with relay.client() as client:
        short, long = (mint_token("bob", SECRET, ttl=ttl) for ttl in (600, 601 + 60))
        answers = [
            client.post(
                "/v1/chat/completions",
                json={"model": MODEL, "messages": HELLO},
                headers={"Authorization": f"Bearer {token}"},
            )
            for token in (short, long)
        ]
    assert [a.status_code for a in answers] == [200, 401]
    assert "at most 600 s (max_token_ttl)" in answers[1].json()["error"]["message"]
    assert len(relay.upstream.seen) == 1


@pytest.mark.parametrize("value", [0, 59, 366 * 86400 + 1])
def test_max_token_ttl_must_be_between_a_minute_and_a_year(value: int) -> None:
    with pytest.raises(ConfigError, match=r"max_token_ttl .* must be a number of seconds"):
        RelayConfig(client_secret=SECRET, max_token_ttl=value)


def test_reckon_token_says_when_its_lifetime_is_over_the_default_maximum(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RECKON_CLIENT_SECRET", SECRET)
    assert main(["token", "--client", "a", "--ttl", str(2 * 86400)]) == 0
    assert (
        "refuses signed tokens that expire more than its max_token_ttl" in capsys.readouterr().err
    )
