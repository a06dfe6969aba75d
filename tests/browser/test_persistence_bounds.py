"""What the browser keeps of what cells wrote, bounded (SECURITY.md, M1): links under
/output (to an upload, to a folder, /output itself replaced by a link to /) are never
stored, even when a cell forges the kernel's list of files; what one run and a whole
session may keep is capped, with a result that says what was not kept; kept outputs
count against the memory ceiling when they are written back; an output a cell
deletes stays deleted after a reload.

Each test opens its own browser context (`a_context`), so it starts with an empty
store.
"""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import call, ok, open_page, page_call, reload_page, run, upload_bytes

pytestmark = pytest.mark.browser

BIG = b"name,value\n" + b"Cornelius Ashdown,88888\n" * 200_000  # 4.8 MB

# The kernel's own list of files is the cell's to change: it reports every link too.
FORGE = """
import reckon.kernel._session as kernel_session
kernel_session.diff_snapshots = lambda a, b: [
    {'path': p, 'size': 4_800_000, 'change': 'created'} for p in sorted(LINKS)]
"""

LINKS = """
import os
LINKS = [f'/output/copy{i}.csv' for i in range(20)]
for path in LINKS:
    os.symlink('/data/big.csv', path)
os.symlink('/lib/python3.12', '/output/lib')
LINKS += ['/output/lib/os.py']
"""


def stored(page: Any) -> list[str]:
    return [f["path"] for f in call(page, "saved")["files"]]


def test_links_under_output_are_never_stored(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    upload_bytes(page, "big.csv", BIG)
    ok(run(page, "open('/output/mine.txt', 'w').write('mine')"))
    links = ok(run(page, LINKS + FORGE))
    assert links["files"] == [], links["files"]
    assert stored(page) == ["/data/big.csv", "/output/mine.txt"]

    # /output itself replaced by a link to / (the cell had to remove what was there).
    swap = "import os, shutil\nshutil.rmtree('/output')\nos.symlink('/', '/output')\n"
    swap += "LINKS = ['/output/lib/python3.12/os.py', '/output/data/big.csv']\n"
    swapped = ok(run(page, swap + FORGE))
    assert swapped["files"] == [], swapped["files"]
    # What the cell removed is gone from the store too; nothing came in through the link.
    assert stored(page) == ["/data/big.csv"]

    reload_page(page)
    assert stored(page) == ["/data/big.csv"]
    listing = ok(run(page, "import os\nsorted(os.listdir('/output'))"))
    assert listing["result"]["text"] == "[]", listing


def test_a_deleted_output_stays_deleted_after_a_reload(
    a_context: Any, a_static_server: str
) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    write = "import os\nos.makedirs('/output/sub', exist_ok=True)\n"
    write += (
        "for name in ['a.txt', 'b.txt', 'sub/c.txt']:\n    open('/output/' + name, 'w').write(name)"
    )
    ok(run(page, write))
    assert stored(page) == ["/output/a.txt", "/output/b.txt", "/output/sub/c.txt"]
    ok(run(page, "import os, shutil\nos.remove('/output/a.txt')\nshutil.rmtree('/output/sub')"))
    assert stored(page) == ["/output/b.txt"]

    reload_page(page)
    listing = ok(run(page, "import os\nsorted(os.listdir('/output'))"))
    assert listing["result"]["text"] == "['b.txt']", listing


# A second Reckon on the page with a 700 MB ceiling: its session keeps at most 350 MB.
CAPPED = """
const { createReckon } = await import("./reckon.js");
window.capped = createReckon({ memoryLimitMB: arg, agent: false, session: "capped" });
window.cappedEvents = [];
window.capped.on("storage-error", (detail) => window.cappedEvents.push(detail));
await withDeadline(window.capped.ready(), deadlineMs, "ready");
return true;
"""


def capped_run(page: Any, code: str) -> dict[str, Any]:
    body = "return await withDeadline(window.capped.run(arg), deadlineMs, 'run')"
    result: dict[str, Any] = page_call(page, body, code, deadline_s=120)
    return result


def capped_saved(page: Any) -> dict[str, int]:
    body = "return (await window.capped.saved()).files.map((f) => [f.path, f.size])"
    return dict(page_call(page, body, deadline_s=60))


def write_mb(path: str, mb: int) -> str:
    loop = f"    for _ in range({mb}):\n        f.write(b'x' * (1 << 20))"
    return f"with open({path!r}, 'wb') as f:\n{loop}"


def test_what_a_run_and_a_session_keep_is_capped(a_context: Any, a_static_server: str) -> None:
    page = open_page(a_context, f"{a_static_server}/console.html")
    page_call(page, CAPPED, 700, deadline_s=120)
    ok(capped_run(page, write_mb("/output/first.bin", 200)))
    assert capped_saved(page) == {"/output/first.bin": 200 << 20}

    # Over what a session keeps (350 MB, half the ceiling): not kept, and the result
    # says so; what was kept before stays kept.
    second = ok(capped_run(page, write_mb("/output/second.bin", 200)))
    assert "Not kept in the browser for next time: /output/second.bin (200 MB)" in second["stderr"]
    assert "a session may keep at most 350 MB" in second["stderr"], second["stderr"]
    assert capped_saved(page) == {"/output/first.bin": 200 << 20}
    # Over what one run keeps: 300 files, of which 200 are kept.
    many = "import os\nos.makedirs('/output/many', exist_ok=True)\nfor i in range(300):\n"
    many += "    open(f'/output/many/{i:03}.txt', 'w').write(str(i))"
    lots = ok(capped_run(page, many))
    assert "and 95 more: a run may keep at most 200 files" in lots["stderr"], lots["stderr"]
    assert len(capped_saved(page)) == 201
    events = page.evaluate("() => window.cappedEvents")
    assert [e["path"] for e in events] == ["/output/second.bin", "/output/many/200.txt"], events

    # Kept outputs come back on the next start, and count against the ceiling there:
    # 200 MB of files and a 450 MB buffer are over 700 MB with the heap (about 90 MB).
    page_call(page, "window.capped.close(); return true")
    reload_page(page)
    page_call(page, CAPPED, 700, deadline_s=120)
    back = ok(capped_run(page, "import os\nos.path.getsize('/output/first.bin')"))
    assert back["result"]["text"] == str(200 << 20)
    over = capped_run(page, "import js\nbuffer = js.ArrayBuffer.new(450 << 20)")
    assert over["error"]["type"] == "MemoryError", over
    assert "files in memory 200 MB" in over["error"]["message"], over["error"]["message"]
