"""Memory a cell's JavaScript makes (SECURITY.md, M3 and M4). A loop in JS that
allocates arrays killed the whole tab (the sandbox frame shares the page's renderer):
a counted constructor now refuses past the ceiling, so the loop ends there. And memory
that browser APIs make outside the constructors the ceiling first counted (images,
canvases, WebAssembly memories a module grows from inside, Blobs, clones, decompressed
streams) held 2.3 GB under a 2 GiB ceiling: each cell below holds about 1 GB through
one such API in a sandbox with a 700 MB ceiling, and must end in a MemoryError and a
new sandbox, while the same APIs used within the ceiling still work."""

from __future__ import annotations

import gzip
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# A module that defines its own memory (1 page, no maximum), exports no memory, and
# exports grow(pages) -> memory.grow(pages): hand-assembled, so no tool is needed.
GROWS_INSIDE = bytes.fromhex(
    "0061736d01000000"  # magic, version
    "01060160017f017f"  # type: (i32) -> i32
    "03020100"  # one function, of that type
    "0503010001"  # one memory: at least 1 page, no maximum
    "070801046772"
    "6f770000"  # export "grow": function 0
    "0a08010600200040000b"  # grow: local.get 0; memory.grow 0; end
)

WASM = "import js\nfrom pyodide.ffi import to_js\nWASM = to_js(bytes.fromhex(HEX))\n"

ONE_GB = {
    "image-data": 'import js\njs.eval("self.k = []; for (let i = 0; i < 16; i++)'
    ' self.k.push(new ImageData(4096, 4096)); 0")',
    "offscreen-canvas": 'import js\njs.eval("self.k = []; for (let i = 0; i < 16; i++) {'
    " const c = new OffscreenCanvas(4096, 4096); c.getContext('2d').fillRect(0, 0, 9, 9);"
    ' self.k.push(c); } 0")',
    "canvas-grown": 'import js\njs.eval("self.k = []; for (let i = 0; i < 16; i++) {'
    " const c = new OffscreenCanvas(1, 1); c.width = 4096; c.height = 4096;"
    ' self.k.push(c); } 0")',
    "get-image-data": 'import js\njs.eval("const c = new OffscreenCanvas(2048, 2048)'
    ".getContext('2d'); self.k = []; for (let i = 0; i < 64; i++)"
    ' self.k.push(c.getImageData(0, 0, 2048, 2048)); 0")',
    "wasm-grows-inside": WASM + "module = js.WebAssembly.Module.new(WASM)\n"
    "instance = js.WebAssembly.Instance.new(module)\nprint(instance.exports.grow(16384))",
    "wasm-instantiate": WASM + "made = await js.WebAssembly.instantiate(WASM)\n"
    "print(made.instance.exports.grow(16384))",
    "structured-clone": "import js\nb = js.ArrayBuffer.new(32 << 20)\n"
    "keep = [js.structuredClone(b) for _ in range(32)]",
    "blob-array-buffer": "import js\nfrom pyodide.ffi import to_js\n"
    "blob = js.Blob.new(to_js([js.Uint8Array.new(16 << 20)]))\n"
    "keep = [await blob.arrayBuffer() for _ in range(64)]",
    "decompressed": "import js\nfrom pyodide.ffi import to_js\n"
    "data = js.Uint8Array.new(to_js(open('/data/zeros.gz', 'rb').read()))\n"
    "stream = js.Blob.new(to_js([data])).stream().pipeThrough(js.DecompressionStream.new('gzip'))\n"
    "whole = await js.Response.new(stream).arrayBuffer()\nprint(whole.byteLength)",
}

WITHIN = {
    "image": 'import js\njs.eval("new ImageData(512, 512).data.length")',
    "canvas": "import js\njs.eval(\"const c = new OffscreenCanvas(256, 256); c.getContext('2d')"
    '.getImageData(0, 0, 256, 256).data.length")',
    "wasm": WASM + "module = js.WebAssembly.Module.new(WASM)\n"
    "instance = js.WebAssembly.Instance.new(module)\n"
    "[instance.exports.grow(16), sorted(js.Object.keys(instance.exports))]",
}


@pytest.mark.slow
def test_memory_browser_apis_make_counts_against_the_ceiling(a_console_page: Any) -> None:
    hexed = GROWS_INSIDE.hex()
    cells = {name: code.replace("HEX", repr(hexed)) for name, code in ONE_GB.items()}
    within = {name: code.replace("HEX", repr(hexed)) for name, code in WITHIN.items()}
    zeros = list(gzip.compress(b"\0" * (1 << 30), compresslevel=1))
    outcome = a_console_page.evaluate(
        """async ([cells, within, zeros]) => {
            const { createReckon } = await import("./reckon.js");
            const small = createReckon({ memoryLimitMB: 700, agent: false, persist: false });
            await small.ready();
            await small.writeFile("zeros.gz", new Uint8Array(zeros));
            const out = { within: {} };
            for (const [name, code] of Object.entries(within)) {
                out.within[name] = await small.run(code);
            }
            for (const [name, code] of Object.entries(cells)) {
                out[name] = await small.run(code, { timeoutMs: 60000 });
            }
            small.close();
            return out;
        }""",
        [cells, within, zeros],
    )
    for name in ONE_GB:
        got = outcome[name]
        shown = {k: got.get(k) for k in ("status", "error", "stdout", "restarted")}
        assert got["status"] == "error" and got["error"]["type"] == "MemoryError", (name, shown)
        assert "700 MB" in got["error"]["message"] and got["restarted"] is True, (name, shown)
    within_results = outcome["within"]
    assert within_results["image"]["result"]["text"] == str(512 * 512 * 4), within_results["image"]
    assert within_results["canvas"]["result"]["text"] == str(256 * 256 * 4), within_results
    wasm = within_results["wasm"]
    assert wasm["status"] == "ok", wasm
    assert wasm["result"]["text"] == "[1, ['__reckon_memory_0', 'grow']]", wasm


# Each of these ended the page's renderer, and the tab with it, in 10-15 s (M3).
HEAP_BOMBS = {
    "js-loop": 'import js\njs.eval("self.keep = [];'
    ' for (;;) self.keep.push(new Array(1e7).fill(0.5)); 0")',
    "python-loop": "import js\nkeep = []\nwhile True:\n"
    "    keep.append(js.Array.new(10**6).fill(0.5))",
}


def test_a_js_allocation_loop_is_stopped_before_the_renderer_dies(a_console_page: Any) -> None:
    outcome = a_console_page.evaluate(
        """async (cells) => {
            const { createReckon } = await import("./reckon.js");
            const small = createReckon({ memoryLimitMB: 700, agent: false, persist: false });
            await small.ready();
            const out = {};
            for (const [name, code] of Object.entries(cells)) {
                out[name] = await small.run(code, { timeoutMs: 60000 });
            }
            out.after = await small.run("1+1");
            small.close();
            return out;
        }""",
        HEAP_BOMBS,
    )
    for name in HEAP_BOMBS:
        got = outcome[name]
        assert got["error"]["type"] == "MemoryError", (name, got["status"], got["error"])
        assert "700 MB" in got["error"]["message"] and got["restarted"] is True, got["error"]
    assert outcome["after"]["result"]["text"] == "2"
