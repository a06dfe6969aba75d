"""The pages opened as files (double-clicking dist/site/index.html): instead of a blank
page, they say how to serve the folder, and the command they give does serve it."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from support import an_unused_port


@pytest.fixture(scope="module")
def a_site_in_a_folder_with_a_space(a_built_site: Path, tmp_path_factory: Any) -> Path:
    """The built site under a path a shell must quote ("my site")."""
    folder = tmp_path_factory.mktemp("files") / "my site"
    folder.symlink_to(a_built_site, target_is_directory=True)
    return folder


@pytest.mark.parametrize("page_name", ["index.html", "console.html"])
def test_a_page_opened_as_a_file_says_how_to_serve_it(
    a_browser: Any, a_site_in_a_folder_with_a_space: Path, page_name: str, tmp_path: Path
) -> None:
    context = a_browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto((a_site_in_a_folder_with_a_space / page_name).as_uri())
        notice = page.get_by_role("alert")
        notice.wait_for()
        text = notice.inner_text()
        assert "opened as a file" in text and "web server" in text
        commands = page.locator(".file-command code").all_inner_texts()
        folder = shlex.quote(str(a_site_in_a_folder_with_a_space))
        assert commands[0] == f"reckon serve --site {folder} --open"
        assert commands[1] == f"python3 -m http.server 8000 --bind 127.0.0.1 --directory {folder}"
        address = "http://127.0.0.1:8000/" + ("" if page_name == "index.html" else page_name)
        assert page.get_by_role("link", name=address).get_attribute("href") == address
        assert page.locator("#messages, #code").count() == 0  # nothing half-started
        for width, height in ((1280, 800), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            page.screenshot(path=str(tmp_path / f"file-{page_name}-{width}.png"), full_page=True)
            assert page.evaluate("() => document.scrollingElement.scrollWidth") <= width
    finally:
        context.close()


def test_the_python_command_it_gives_serves_the_site(
    a_browser: Any, a_site_in_a_folder_with_a_space: Path
) -> None:
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto((a_site_in_a_folder_with_a_space / "index.html").as_uri())
        command = page.locator(".file-command code").nth(1).inner_text()
    finally:
        context.close()
    # Run as a shell would (its quoting included), on a free port instead of 8000.
    port = an_unused_port()
    argv = [sys.executable if a == "python3" else str(port) if a == "8000" else a
            for a in shlex.split(command)]  # fmt: skip
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                reply = httpx.get(f"http://127.0.0.1:{port}/index.html", trust_env=False)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert reply.status_code == 200 and "page/chat.js" in reply.text
    finally:
        server.terminate()
        server.wait(10)


def test_served_over_http_the_page_says_nothing_of_it(a_browser: Any, a_static_server: str) -> None:
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{a_static_server}/index.html")
        page.locator("#messages").wait_for()
        assert page.locator(".file-notice").count() == 0
    finally:
        context.close()
