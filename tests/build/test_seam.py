"""The call layer (web/shared/seam.js) is one text in every context: the page imports
it, the workers run SEAM_SOURCE (made by the page from the function itself), and the
build inlines the same text before the sandbox frame's script."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

from sitebuild._pages import FRAME_SCRIPT, seam_source

WEB = Path(__file__).resolve().parents[2] / "web"


def test_the_frame_runs_the_text_the_page_gives_the_workers() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed, as for the build (scripts/test installs it)"
    module = base64.b64encode((WEB / "shared" / "seam.js").read_bytes()).decode()
    url = f"data:text/javascript;base64,{module}"
    script = f"const m = await import('{url}'); process.stdout.write(m.SEAM_SOURCE);"
    made = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert made.stdout == seam_source(WEB)
    assert made.stdout.startswith("const { serve, connect } = (function seam() {")


def test_the_frame_script_uses_only_what_the_seam_gives() -> None:
    frame = (WEB / FRAME_SCRIPT).read_text()
    assert "serve(" in frame and "connect(" in frame
    assert ".postMessage(" not in frame.replace("window.addEventListener", "")
