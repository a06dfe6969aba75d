"""The site's security policies and the response headers `reckon serve` applies
(written to _headers.json; the pages carry the same CSPs in a <meta> tag)."""

from __future__ import annotations

__all__ = ["AGENT_CSP", "AGENT_FRAME_CSP", "PAGE_CSP", "headers", "sandbox_csp"]

PAGE_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; "
    "connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; frame-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'"
)
# The agent worker is the one place that talks to the relay; Pyodide needs eval.
AGENT_CSP = (
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'; connect-src 'self'"
)
# agent.html, the frame the page starts the agent worker through: a blob: worker
# inherits its creator's policy, so the worker is held to AGENT_CSP even when no
# header reaches it (a plain static server sends none).
AGENT_FRAME_CSP = f"{AGENT_CSP}; worker-src blob:; base-uri 'none'; form-action 'none'"
# The sandbox frame: its only script is the inline one (pinned by hash); the runtime
# arrives from the page as Blobs, so the frame and its worker need no network at all.
_SANDBOX_CSP = (
    "default-src 'none'; script-src '{hash}' blob: 'wasm-unsafe-eval' 'unsafe-eval'; "
    "worker-src blob:; connect-src 'none'; style-src 'none'; img-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
EMBEDDABLE: dict[str, str] = {
    "Access-Control-Allow-Origin": "*",
    "Cross-Origin-Resource-Policy": "cross-origin",
}
EMBEDDABLE_FILES = ("*.js", "*.css", "build-info.json", "pyodide/*")


def sandbox_csp(script_hash: str) -> str:
    """The frame's policy, allowing only the inline script whose hash is given
    (``sha256-<base64>``)."""
    return _SANDBOX_CSP.format(hash=script_hash)


def headers(*, sandbox: str) -> list[dict[str, object]]:
    """The header rules, ``sandbox`` being the frame's CSP.

    `reckon serve` applies every matching rule in order; later rules win. Cross-origin
    isolation (COOP + COEP) lets the sandbox frame share memory with its worker, so
    interrupt() is a soft KeyboardInterrupt instead of a restart.
    """
    isolation = {
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Embedder-Policy": "require-corp",
        "Cross-Origin-Resource-Policy": "same-origin",
    }
    return [
        {"pattern": "*", "headers": {"Cache-Control": "no-cache", **isolation}},
        {"pattern": "pyodide/*", "headers": {
            # Versioned by Pyodide's release and by the served lock's hashes.
            "Cache-Control": "public, max-age=31536000, immutable"}},
        {"pattern": "*.html", "headers": {"Content-Security-Policy": PAGE_CSP}},
        {"pattern": "agent.html", "headers": {"Content-Security-Policy": AGENT_FRAME_CSP}},
        {"pattern": "agent/worker.js", "headers": {"Content-Security-Policy": AGENT_CSP}},
        {"pattern": "sandbox.html", "headers": {"Content-Security-Policy": sandbox}},
        # <reckon-chat> on a page of another origin loads these: its modules and
        # stylesheet, the build info and the runtime by CORS, the agent worker's
        # scripts by importScripts (no-cors: needs CORP cross-origin), the frame as a
        # frame. They are public files and carry no secret.
        *(_rule(pattern, EMBEDDABLE) for pattern in EMBEDDABLE_FILES),
        {"pattern": "sandbox.html", "headers": {"Cross-Origin-Resource-Policy": "cross-origin"}},
    ]  # fmt: skip


def _rule(pattern: str, values: dict[str, str]) -> dict[str, object]:
    return {"pattern": pattern, "headers": values}
