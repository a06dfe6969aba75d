"""``reckon serve``: flags, the TOML config file, and a real start in a subprocess."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

import reckon
from reckon import ConfigError
from reckon.server import Profile, main
from reckon.server._cli import config_from_args

from .conftest import FakeUpstream

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
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(reckon.__file__).parents[1]),
        "RECKON_UPSTREAM_KEY": "sk-subprocess-key-123456",
    }
    command = [sys.executable, "-m", "reckon.server", "serve", "--port", "0"]
    command += ["--upstream", f"{an_upstream.url}/v1", "--model", "tiny-model"]
    command += ["--site", str(a_site)]
    process = subprocess.Popen(
        command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout = process.stdout
    assert stdout is not None

    def read_lines() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=read_lines, daemon=True).start()
    try:
        first = lines.get(timeout=15)
        match = re.search(r"open (http://127\.0\.0\.1:\d+/)", first)
        assert match, first
        with httpx.Client(base_url=match.group(1), trust_env=False, timeout=10) as client:
            info = client.get("/api/info").json()
            chat = client.post(
                "/v1/chat/completions",
                json={"model": "tiny-model", "messages": [{"role": "user", "content": "hi"}]},
            )
            index = client.get("/")
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)

    assert info == {
        "status": "ok",
        "models": ["tiny-model"],
        "default_model": "tiny-model",
        "demo": False,
        "auth": False,
        "model_options": {"tiny-model": {"tools": "auto", "context_window": None}},
    }
    assert chat.status_code == 200
    assert an_upstream.seen[-1].headers["authorization"] == "Bearer sk-subprocess-key-123456"
    assert index.headers["content-security-policy"] == "default-src 'self'; frame-ancestors 'self'"
    assert process.returncode == 0
    assert "sk-subprocess-key-123456" not in err
