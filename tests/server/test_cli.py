"""``reckon serve``: flags, the TOML config file, and a real start in a subprocess."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from reckon import ConfigError
from reckon._cli import config_from_args, main
from reckon.server import Limits, Profile
from support import FakeUpstream, reckon_serve

A_CONFIG = """
host = "127.0.0.1"
port = 9123
site = "site"
allowed_origins = ["https://reckon.example.org"]
max_concurrent_streams = 4
first_byte_timeout = 30
log_prompts = true

[[profile]]
name = "openai"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
models = ["gpt-4o-mini", "gpt-4o"]
default = "gpt-4o-mini"

[[profile]]
name = "local"
base_url = "http://127.0.0.1:8080/v1"
"""


def a_config_file(tmp_path: Path, text: str = A_CONFIG) -> Path:
    (tmp_path / "site").mkdir(exist_ok=True)
    path = tmp_path / "reckon.toml"
    path.write_text(text)
    return path


def test_the_defaults_are_loopback_port_8000_and_no_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = config_from_args(["serve"])

    assert (config.host, config.port, config.profiles, config.site_dir) == (
        "127.0.0.1",
        8000,
        [],
        None,
    )
    assert config.token is None
    assert config.log_prompts is False


def test_the_default_site_is_dist_site_when_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dist" / "site").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)

    assert config_from_args(["serve"]).site_dir == (tmp_path / "dist" / "site").resolve()


def test_upstream_and_model_make_one_profile_named_default(tmp_path: Path) -> None:
    config = config_from_args(
        [
            *("serve", "--upstream", "http://127.0.0.1:8080/v1", "--model", "qwen"),
            *("--site", str(tmp_path), "--allow-origin", "https://a.example", "https://b.example"),
        ]
    )

    assert config.profiles == [
        Profile(
            name="default",
            base_url="http://127.0.0.1:8080/v1",
            api_key_env="RECKON_UPSTREAM_KEY",
            models=["qwen"],
            default_model="qwen",
        )
    ]
    assert config.site_dir == tmp_path.resolve()
    assert config.allowed_origins == ["https://a.example", "https://b.example"]
    assert config_from_args(
        ["serve", "--allow-embedder", "https://c.example"]
    ).allowed_embedders == ["https://c.example"]


def test_the_token_comes_from_the_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECKON_TOKEN", "from-env")

    assert config_from_args(["serve"]).token == "from-env"
    assert config_from_args(["serve", "--token", "from-flag"]).token == "from-flag"


def test_a_config_file_gives_profiles_and_settings(tmp_path: Path) -> None:
    config = config_from_args(["serve", "--config", str(a_config_file(tmp_path))])

    assert [p.name for p in config.profiles] == ["openai", "local"]
    assert config.profiles[0].default_model == "gpt-4o-mini"
    assert config.profiles[1].models == []
    assert config.profiles[1].api_key_env is None
    assert config.site_dir == (tmp_path / "site").resolve()
    assert (config.port, config.max_concurrent_streams, config.first_byte_timeout) == (9123, 4, 30)
    assert config.allowed_origins == ["https://reckon.example.org"]
    assert config.log_prompts is True


def test_how_to_talk_to_a_model_is_a_profile_setting(tmp_path: Path) -> None:
    flags = config_from_args(
        ["serve", "--upstream", "http://h:1/v1", "--tools", "off", "--context-window", "8192"]
    )
    assert (flags.profiles[0].tools, flags.profiles[0].context_window) == ("off", 8192)
    text = A_CONFIG + 'tools = "on"\ncontext_window = 4096\n'
    file = config_from_args(["serve", "--config", str(a_config_file(tmp_path, text))])
    assert (file.profiles[1].tools, file.profiles[1].context_window) == ("on", 4096)
    assert (file.profiles[0].tools, file.profiles[0].context_window) == ("auto", None)
    with pytest.raises(ConfigError, match="tools 'maybe'"):
        Profile(name="p", base_url="http://h/v1", tools="maybe")
    with pytest.raises(ConfigError, match="context_window 10"):
        Profile(name="p", base_url="http://h/v1", context_window=10)
    with pytest.raises(ConfigError, match="--tools needs --upstream"):
        config_from_args(["serve", "--tools", "off"])


def test_flags_win_over_the_config_file(tmp_path: Path) -> None:
    path = a_config_file(tmp_path)
    config = config_from_args(
        ["serve", "--config", str(path), "--port", "7000", "--upstream", "http://h:1/v1"]
    )

    assert config.port == 7000
    assert [p.name for p in config.profiles] == ["openai", "local", "default"]


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        ([], "required: COMMAND"),
        (["serve", "--port", "eighty"], "invalid int value"),
        (["serve", "--port", "70000"], "out of range"),
        (["serve", "--bogus"], "unrecognized arguments: --bogus"),
        (["serve", "--model", "m"], "--model needs --upstream"),
        (["serve", "--upstream", "ftp://x"], "must be an http:// or https:// URL"),
        (["serve", "--key-env", "sk-abc123"], "--key-env needs --upstream"),
        (["serve", "--upstream", "http://h/v1", "--key-env", "sk-abc"], "not an environment"),
        (["serve", "--site", "/no/such/dir"], "does not exist"),
        (["serve", "--allow-origin", "https://a.example/"], "no path or trailing slash"),
        (["serve", "--config", "/no/such.toml"], "cannot read config file"),
    ],
)
def test_bad_flags_are_one_line_and_exit_code_2(
    argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("reckon: error: ")
    assert complaint in err


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("port = [", "not valid TOML"),
        ("prot = 1", "unknown key 'prot'"),
        ("port = true", "'port' has the wrong type"),
        ("allowed_origins = [1]", "must be a list of strings"),
        ("[[profile]]\nbase_url = 'http://h/v1'", "needs 'name'"),
        ("[[profile]]\nname = 'a/b'\nbase_url = 'http://h/v1'", "profile name 'a/b'"),
        ("[[profile]]\nname = 'a'\nbase_url = 'http://h/v1'\nprotocol = 'smoke'", "protocol"),
        (
            "[[profile]]\nname = 'a'\nbase_url = 'http://h/v1'\nmodels = ['x']\ndefault = 'y'",
            "default_model 'y' is not in its models",
        ),
        (
            "[[profile]]\nname = 'a'\nbase_url = 'http://h/v1'\n"
            "[[profile]]\nname = 'a'\nbase_url = 'http://h/v1'",
            "repeated: a",
        ),
        ("max_concurrent_streams = 0", "at least 1"),
        ("header_timeout = inf", "finite number of seconds"),
        ("body_timeout = nan", "finite number of seconds"),
        ("first_byte_timeout = 0", "finite number of seconds"),
        # Clients, limits, Redis, metrics, proxies.
        ("[limits]\nrequests_per_hour = 5", "[limits] has an unknown key 'requests_per_hour'"),
        ("[limits]\ntokens_per_day = 0", "tokens_per_day must be a whole number of at least 1"),
        ("[limits]\ntokens_per_day = 1.5", "[limits] 'tokens_per_day' must be a whole number"),
        ("[limits]\nconcurrent_streams = true", "must be a whole number"),
        ("limits = 5", "'limits' has the wrong type"),
        ("[[client]]\nid = 'a'", "[[client]] #1 needs 'token'"),
        ("[[client]]\ntoken = 'a-long-token-0123456789'", "needs 'id'"),
        ("[[client]]\nid = 'a'\ntoken = 'short'", "at least 16 characters"),
        ("[[client]]\nid = 'a'\ntoken = 'a-long-token-0123456789'\nrole = 'x'", "unknown key"),
        ("client_secret = 'short'", "client_secret must be at least 32 characters"),
        ("redis = 'redis://127.0.0.1:6379/0'", "no limit is set"),
        ("redis = 'http://h:1'\n[limits]\ntokens_per_day = 5", "must look like redis://"),
        ("redis = 'redis://h:port/0'\n[limits]\ntokens_per_day = 5", "port that is not a number"),
        ("metrics = 'public'", "metrics 'public' is not one of token, open, off"),
        ("trusted_proxies = ['proxy.lan']", "trusted proxy 'proxy.lan'"),
    ],
)
def test_a_bad_config_file_is_one_line_and_exit_code_2(
    tmp_path: Path, text: str, complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--config", str(a_config_file(tmp_path, text))]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert complaint in err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    assert "--upstream URL" in capsys.readouterr().out


def test_config_errors_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        config_from_args(["serve", "--port", "-1"])


def test_reckon_serve_starts_prints_its_url_and_relays(
    an_upstream: FakeUpstream, tmp_path: Path, a_site: Path
) -> None:
    key = {"RECKON_UPSTREAM_KEY": "sk-subprocess-key-123456"}
    flags = ["--upstream", f"{an_upstream.url}/v1", "--model", "tiny-model"]
    with reckon_serve(*flags, site=a_site, env=key, cwd=tmp_path) as served:
        first = served.out[0]
        match = re.search(r"open (http://127\.0\.0\.1:\d+/)", first)
        assert match, first
        with httpx.Client(base_url=match.group(1), trust_env=False, timeout=10) as client:
            info = client.get("/api/info").json()
            chat = client.post(
                "/v1/chat/completions",
                json={"model": "tiny-model", "messages": [{"role": "user", "content": "hi"}]},
            )
            index = client.get("/")
        returncode = served.stop()
        err = served.err()

    assert info == {
        "status": "ok",
        "models": ["tiny-model"],
        "default_model": "tiny-model",
        "demo": False,
        "auth": False,
        "model_options": {
            "tiny-model": {"tools": "auto", "context_window": None, "calls_as_text": False}
        },
    }
    assert chat.status_code == 200
    assert an_upstream.seen[-1].headers["authorization"] == "Bearer sk-subprocess-key-123456"
    assert index.headers["content-security-policy"] == "default-src 'self'; frame-ancestors 'self'"
    assert returncode == 0
    assert "sk-subprocess-key-123456" not in err


A_PUBLIC_CONFIG = """
client_secret = "a-site-secret-that-is-long-enough-0123456789"
redis = "redis://:hunter2-redis-password@127.0.0.1:6379/0"
metrics = "open"
trusted_proxies = ["10.0.0.0/8"]

[limits]
requests_per_minute = 30
tokens_per_day = 200000

[[client]]
id = "alice"
token = "alice-token-0123456789abcdef"

[[client]]
id = "bob@example.org"
token = "bob-token-0123456789abcdef"
"""


def test_a_config_file_gives_clients_limits_and_redis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECKON_CLIENT_SECRET", raising=False)
    monkeypatch.delenv("RECKON_REDIS_URL", raising=False)
    config = config_from_args(["serve", "--config", str(a_config_file(tmp_path, A_PUBLIC_CONFIG))])

    assert [(c.id, c.token) for c in config.clients] == [
        ("alice", "alice-token-0123456789abcdef"),
        ("bob@example.org", "bob-token-0123456789abcdef"),
    ]
    assert config.client_secret == "a-site-secret-that-is-long-enough-0123456789"
    assert config.limits == Limits(requests_per_minute=30, tokens_per_day=200000)
    assert config.redis_url == "redis://:hunter2-redis-password@127.0.0.1:6379/0"
    assert (config.metrics, config.trusted_proxies) == ("open", ["10.0.0.0/8"])
    assert config.auth_required
    # Secrets stay out of the config's repr, which a traceback could print.
    for secret in ("alice-token", "a-site-secret", "hunter2"):
        assert secret not in repr(config)


def test_limit_flags_win_over_the_file_and_the_environment_gives_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECKON_CLIENT_SECRET", "from-the-environment-0123456789abcdef")
    monkeypatch.setenv("RECKON_REDIS_URL", "redis://127.0.0.1:6390/1")
    path = a_config_file(tmp_path, A_PUBLIC_CONFIG)
    argv = ["serve", "--config", str(path), "--requests-per-minute", "5"]
    argv += ["--concurrent-streams", "2", "--metrics", "off", "--trust-proxy", "192.0.2.7"]

    config = config_from_args(argv)
    flags_only = config_from_args(["serve", "--tokens-per-day", "9", "--redis", "unix:///r.sock"])

    assert config.limits == Limits(
        requests_per_minute=5, tokens_per_day=200000, concurrent_streams=2
    )
    assert config.client_secret == "from-the-environment-0123456789abcdef"
    assert config.redis_url == "redis://127.0.0.1:6390/1"
    assert config.metrics == "off"
    assert config.trusted_proxies == ["10.0.0.0/8", "192.0.2.7"]
    assert flags_only.limits == Limits(tokens_per_day=9)
    assert flags_only.redis_url == "unix:///r.sock"


def test_without_any_of_it_the_relay_is_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECKON_CLIENT_SECRET", raising=False)
    monkeypatch.delenv("RECKON_REDIS_URL", raising=False)
    config = config_from_args(["serve"])

    assert (config.clients, config.client_secret, config.redis_url) == ([], None, None)
    assert config.limits == Limits() and not config.limits.any
    assert not config.auth_required


def test_a_bad_redis_address_never_shows_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["serve", "--tokens-per-day", "5", "--redis", "redis://u:hunter2@h:port/0"]

    assert main(argv) == 2

    err = capsys.readouterr().err
    assert "port that is not a number" in err
    assert "hunter2" not in err


def test_open_starts_the_browser_at_the_address_it_serves(tmp_path: Path, a_site: Path) -> None:
    # $BROWSER is the browser Python's webbrowser starts: here a program that writes
    # down the address it was given, as a person's browser would load it.
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {seen}\n")
    browser.chmod(0o755)
    with reckon_serve("--open", site=a_site, env={"BROWSER": str(browser)}) as served:
        assert "(opening it now)" in served.out[0]
        deadline = time.monotonic() + 10
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        opened = seen.read_text()
        page = httpx.get(opened, trust_env=False, timeout=10)
    assert opened == f"{served.url}/"
    assert page.status_code == 200 and "<title>Reckon" in page.text


def test_open_without_a_display_says_what_to_open(tmp_path: Path, a_site: Path) -> None:
    plain = {"DISPLAY": "", "WAYLAND_DISPLAY": "", "BROWSER": ""}
    with reckon_serve("--open", site=a_site, env=plain) as served:
        err = served.err()
    assert f"no display here (DISPLAY is not set); open {served.url}/" in err


def test_help_lists_open_and_every_option_stays(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--open" in out and "browser" in out
    for flag in ("--host", "--port", "--site", "--upstream", "--model", "--key-env", "--tools",
                 "--context-window", "--config", "--token", "--allow-origin", "--allow-embedder",
                 "--allow-host", "--log-prompts", "--requests-per-minute", "--tokens-per-day",
                 "--concurrent-streams", "--redis", "--metrics", "--trust-proxy"):  # fmt: skip
        assert flag in out, flag


def test_a_model_server_on_loopback_needs_no_key_and_is_not_told_it_lacks_one(
    tmp_path: Path, a_site: Path
) -> None:
    unset = {"RECKON_UPSTREAM_KEY": "", "ELSEWHERE_KEY": ""}
    local = ["--upstream", "http://127.0.0.1:9/v1", "--model", "m"]
    with reckon_serve(*local, site=a_site, env=unset) as served:
        assert "is not set" not in served.err()
    remote = ["--upstream", "https://models.example/v1", "--model", "m"]
    with reckon_serve(*remote, site=a_site, env=unset) as served:
        assert "RECKON_UPSTREAM_KEY is not set" in served.err()
    named = [*local, "--key-env", "ELSEWHERE_KEY"]
    with reckon_serve(*named, site=a_site, env=unset) as served:
        assert "ELSEWHERE_KEY is not set" in served.err()
