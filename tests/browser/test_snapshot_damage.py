"""Fast starts when something is wrong (README "Fast starts"): a damaged or missing
snapshot, shipped or kept, a kept copy of Pyodide's own files that is spoiled, or a
kept native module that does not compile, must end in a cold boot that answers the
same as one (the `cold` fixture); `snapshot: false` stores nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .helpers import page_call
from .snapshot_kit import restores_the_kept_copy, results, serve_site, visit

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("damage", ["cut", "missing"])
def test_a_damaged_or_missing_build_snapshot_boots_cold_and_answers_the_same(
    a_browser: Any, a_built_site: Path, cold: dict[str, Any], damage: str
) -> None:
    base, server = serve_site(a_built_site, damage)
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, base)
        reply = page_call(page, "return await window.reckon.sandbox.ready();")
        assert reply["snapshot"]["restored"] is False
        # The package files held back for the snapshot were sent when the worker asked.
        assert "packages" in reply["marks"]
        assert outcome["status"] == "saved", outcome  # made in this browser instead
        assert results(page) == cold
        page.close()
        restores_the_kept_copy(context, base, cold)
    finally:
        context.close()
        server.shutdown()


def test_a_damaged_kept_snapshot_falls_back_to_a_cold_boot(
    a_browser: Any, a_snapshot_server: str, cold: dict[str, Any]
) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_snapshot_server)
        assert outcome == {"status": "restored", "source": "build"}
        # Cut the end off the kept file image, as an interrupted write would.
        page_call(
            page,
            """
            const cache = await caches.open("reckon-snapshot");
            for (const request of await cache.keys()) {
              if (!request.url.endsWith("/fs")) continue;
              const bytes = await (await cache.match(request)).arrayBuffer();
              await cache.put(request, new Response(bytes.slice(0, bytes.byteLength - 4096)));
            }
            """,
        )
        page.close()
        page, outcome = visit(context, a_snapshot_server)
        assert outcome["status"] == "rejected", outcome
        assert results(page) == cold
        page.close()
        # The rejected one is dropped: the next visit starts from the build's again.
        page, outcome = visit(context, a_snapshot_server)
        assert outcome == {"status": "restored", "source": "build"}
        # A snapshot of another recipe is never used.
        page_call(
            page,
            """
            const cache = await caches.open("reckon-snapshot");
            for (const request of await cache.keys()) {
              if (!request.url.endsWith("/meta")) continue;
              const meta = await (await cache.match(request)).json();
              meta.recipe = -1;
              await cache.put(request, new Response(JSON.stringify(meta)));
            }
            """,
        )
        page.close()
        page, outcome = visit(context, a_snapshot_server)
        assert outcome["status"] == "rejected", outcome
        assert "recipe" in outcome["message"]
        assert results(page) == cold
        page.close()
    finally:
        context.close()


PYODIDE_FILES = {
    "/pyodide/pyodide.js",
    "/pyodide/pyodide.asm.js",
    "/pyodide/pyodide.asm.wasm",
    "/pyodide/python_stdlib.zip",
    "/pyodide/pyodide-lock.json",
}


def spoil_kept_runtime(page: Any, name: str, how: str) -> None:
    """Replace the kept copy of one of Pyodide's files: "cut" (4 KiB short) or "zeros"
    (its full size, every byte 0)."""
    page_call(
        page,
        """
        const cache = await caches.open("reckon-snapshot");
        let found = 0;
        for (const request of await cache.keys()) {
          if (!request.url.endsWith(`/runtime/${arg.name}`)) continue;
          const bytes = await (await cache.match(request)).arrayBuffer();
          const size = bytes.byteLength;
          const spoiled = arg.how === "cut" ? bytes.slice(0, size - 4096) : new ArrayBuffer(size);
          await cache.put(request, new Response(spoiled));
          found += 1;
        }
        if (found !== 1) throw new Error(`kept copies of ${arg.name}: ${found}`);
        """,
        {"name": name, "how": how},
    )


def test_a_warm_start_takes_pyodide_from_the_kept_copy_and_survives_a_spoiled_one(
    a_browser: Any, a_built_site: Path, cold: dict[str, Any]
) -> None:
    seen: list[str] = []
    base, server = serve_site(a_built_site, seen=seen)
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "build"}
        page.close()
        # Pyodide's own files were kept beside the snapshot: none is fetched again.
        seen.clear()
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "kept"}
        assert not PYODIDE_FILES & set(seen), seen
        assert page.evaluate("window.reckon.sandbox.runtimeKept") is True
        assert results(page) == cold
        # A kept copy of the wrong size is not used: fetched from the site (the kept
        # snapshot still restores), and kept again.
        spoil_kept_runtime(page, "pyodide.asm.js", "cut")
        page.close()
        seen.clear()
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "kept"}
        assert page.evaluate("window.reckon.sandbox.runtimeKept") is False
        assert results(page) == cold
        page.close()
        seen.clear()
        page, outcome = visit(context, base)
        assert outcome == {"status": "restored", "source": "kept"}
        assert page.evaluate("window.reckon.sandbox.runtimeKept") is True
        assert not PYODIDE_FILES & set(seen), seen
        # One spoiled at its full size cannot start at all: the page starts again from
        # the site's files, cold, answers the same, and keeps a new snapshot.
        spoil_kept_runtime(page, "pyodide.asm.wasm", "zeros")
        page.close()
        page, outcome = visit(context, base)
        assert outcome["status"] == "saved", outcome
        assert results(page) == cold
        page.close()
        restores_the_kept_copy(context, base, cold)
    finally:
        context.close()
        server.shutdown()


def test_a_kept_native_module_that_does_not_compile_means_a_cold_boot(
    a_browser: Any, a_snapshot_server: str, cold: dict[str, Any]
) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_snapshot_server)
        assert outcome == {"status": "restored", "source": "build"}
        # Zero one native module inside the kept file image, keeping every size.
        spoiled = page_call(
            page,
            """
            const cache = await caches.open("reckon-snapshot");
            for (const request of await cache.keys()) {
              if (!request.url.endsWith("/fs")) continue;
              const bytes = new Uint8Array(await (await cache.match(request)).arrayBuffer());
              const hlen = new DataView(bytes.buffer).getUint32(0, true);
              const entries = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + hlen)));
              let offset = 4 + hlen;
              for (const [path, size] of entries) {
                if (path.endsWith(".so")) {
                  bytes.fill(0, offset, offset + size);
                  await cache.put(request, new Response(bytes));
                  return path;
                }
                offset += size;
              }
            }
            return null;
            """,
        )
        assert spoiled
        page.close()
        page, outcome = visit(context, a_snapshot_server)
        assert outcome["status"] == "rejected", outcome
        assert "does not compile" in outcome["message"], outcome
        assert results(page) == cold
        page.close()
    finally:
        context.close()


def test_snapshot_false_boots_cold_and_stores_nothing(
    a_browser: Any, a_snapshot_server: str
) -> None:
    context = a_browser.new_context()
    try:
        page, outcome = visit(context, a_snapshot_server, snapshot=False)
        assert outcome == {"status": "off"}
        reply = page_call(page, "return await window.reckon.sandbox.ready();")
        assert reply["snapshot"] == {"restored": False, "error": None}
        stored = page_call(page, "return (await caches.keys()).includes('reckon-snapshot');")
        assert stored is False
        page.close()
    finally:
        context.close()
