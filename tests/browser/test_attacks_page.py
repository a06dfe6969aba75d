"""Hostile content in the page: nothing from a run (table cells, column names,
tracebacks, figure titles, file names, printed text) runs script in the page, and the
pages' Content-Security-Policy refuses inline script when we try to inject some.

Run against the plain static server (CSP from the <meta> tag) and the site with the
build's headers (CSP header too).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Playwright's init scripts run before the page's own, whatever its CSP says: they
# record every CSP violation, so we can tell "refused" from "never attempted".
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (ev) => {
  window.__violations.push({ directive: ev.effectiveDirective, blocked: ev.blockedURI,
                             sample: ev.sample });
});
"""


@pytest.fixture(scope="module")
def console(a_browser: Any, server: tuple[str, str]) -> Iterator[Any]:
    _, url = server
    context = a_browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    page.goto(f"{url}/console.html")
    page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
    yield page
    context.close()


def run_cell(page: Any, code: str) -> Any:
    page.locator("#code").fill(code)
    before = page.locator(".cell .meta").count()
    page.get_by_role("button", name="Run (Shift+Enter)").click()
    page.wait_for_function(
        "(n) => document.querySelectorAll('.cell .meta').length > n", arg=before, timeout=120_000
    )
    return page.locator(".cell").first


PAYLOADS = [
    '<img src=x onerror="window.pwned=1">',
    "<script>window.pwned=2</script>",
    '<svg onload="window.pwned=3"></svg>',
    '<iframe srcdoc="<script>parent.pwned=4</script>"></iframe>',
    '<a href="javascript:window.pwned=5">click</a>',
    "<style>body{display:none}</style>",
]
PAYLOAD_LIST = repr(PAYLOADS)

HOSTILE_CELLS = {
    "dataframe-cells-and-columns": (
        f"import pandas as pd\np = {PAYLOAD_LIST}\npd.DataFrame({{name: p for name in p}}, index=p)"
    ),
    "dataframe-styler": (
        "import pandas as pd\n"
        f"p = {PAYLOAD_LIST}\n"
        "pd.DataFrame({'a': p}).style.set_caption(p[0]).set_table_attributes('onclick=x()')"
    ),
    "custom-repr-html": (
        "class Evil:\n"
        "    def _repr_html_(self):\n"
        f"        return '<table><tr><td>' + ''.join({PAYLOAD_LIST}) + '</td></tr></table>'"
        " + ''.join({PAYLOAD_LIST})\n"
        "    def __repr__(self):\n"
        f"        return ''.join({PAYLOAD_LIST})\n"
        "Evil()"
    ),
    "traceback-with-html": f"raise ValueError(''.join({PAYLOAD_LIST}))",
    "exception-type-name-with-html": (
        f"E = type('E', (Exception,), {{}})\nE.__name__ = {PAYLOADS[0]!r}\nraise E('x')"
    ),
    "figure-title-with-html": (
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2], [3, 4], label=" + repr(PAYLOADS[1]) + ")\n"
        "plt.title(" + repr(PAYLOADS[0]) + ")\n"
        "plt.xlabel(" + repr(PAYLOADS[2]) + ")\n"
        "plt.legend();"
    ),
    "output-file-names-with-script": (
        "import os\n"
        "for name in ['<script>window.pwned=6<\\\\script>.csv',"
        " '<img src=x onerror=window.pwned=7>.csv', '\" onmouseover=\"window.pwned=8.csv']:\n"
        "    open(os.path.join('/output', name), 'w').write('a\\n1\\n')"
    ),
    "print-html-to-stdout-and-stderr": (
        f"import sys\nprint(''.join({PAYLOAD_LIST}))\nsys.stderr.write(''.join({PAYLOAD_LIST}))"
    ),
}

# What may appear in the outputs: our own elements only, no live content.
FORBIDDEN = (
    "script, iframe, svg, style, object, embed, a[href], img:not(.figure), [onerror], [onload]"
)


@pytest.mark.parametrize("code", HOSTILE_CELLS.values(), ids=HOSTILE_CELLS.keys())
def test_hostile_run_output_is_shown_as_text(console: Any, code: str) -> None:
    cell = run_cell(console, code)
    assert cell.locator(".meta").count() == 1
    console.wait_for_timeout(300)  # an <img onerror> would have fired by now
    assert console.evaluate("() => window.pwned") is None
    assert console.locator("#outputs").locator(FORBIDDEN).count() == 0
    assert console.locator("#file-list").locator(FORBIDDEN).count() == 0
    # Not even attempted: the renderer never turned text into script.
    violations = console.evaluate("() => window.__violations")
    assert [v for v in violations if v["directive"].startswith("script-src")] == [], violations
    # The payload is visible as text somewhere in the cell (nothing was swallowed).
    assert (
        "pwned" in cell.inner_text()
        or "onerror" in cell.inner_text()
        or (cell.locator("img.figure").count() == 1)
    )


def test_hostile_figure_title_is_only_alt_text(console: Any) -> None:
    cell = run_cell(console, HOSTILE_CELLS["figure-title-with-html"])
    img = cell.locator("img.figure")
    assert img.count() == 1
    assert PAYLOADS[0] in (img.get_attribute("alt") or "")
    assert (img.get_attribute("src") or "").startswith("data:image/png;base64,")
    assert console.evaluate("() => window.pwned") is None


def test_hostile_output_file_names_are_listed_as_text(console: Any) -> None:
    cell = run_cell(console, HOSTILE_CELLS["output-file-names-with-script"])
    names = cell.locator(".out-files button").all_inner_texts()
    assert any("<script>window.pwned=6" in n for n in names), names
    assert any("<img src=x onerror=window.pwned=7>" in n for n in names), names
    console.wait_for_timeout(300)
    assert console.locator("#file-list").get_by_text("<img src=x onerror", exact=False).count()
    assert console.locator("#file-list").locator(FORBIDDEN).count() == 0
    assert console.evaluate("() => window.pwned") is None


# --- CSP, tested by trying ------------------------------------------------------------

INJECT = """async () => {
  window.pwned = undefined;
  const before = window.__violations.length;
  const s = document.createElement("script");
  s.textContent = "window.pwned = 'inline-script'";
  document.head.appendChild(s);
  const img = document.createElement("img");
  img.setAttribute("src", "data:,not-an-image");
  img.setAttribute("onerror", "window.pwned = 'onerror-attribute'");
  document.body.appendChild(img);
  const div = document.createElement("div");
  div.innerHTML = '<img src="data:,x" onerror="window.pwned = \\'innerHTML\\'">';
  document.body.appendChild(div);
  const a = document.createElement("a");
  a.href = "javascript:window.pwned='javascript-url'";
  document.body.appendChild(a);
  a.click();
  // (eval and new Function cannot be tried from here: DevTools' evaluate bypasses CSP.
  // A string timer is compiled later, by the page itself, so it is a fair test.)
  setTimeout("window.pwned = 'setTimeout-string'", 0);
  await new Promise((r) => setTimeout(r, 500));
  const meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  return { pwned: window.pwned === undefined ? null : window.pwned, meta: meta && meta.content,
           violations: window.__violations.slice(before) };
}"""


def script_src(policy: str) -> str:
    match = re.search(r"(?:^|;)\s*script-src ([^;]*)", policy)
    assert match, policy
    return match.group(1)


@pytest.mark.parametrize("page_name", ["index.html", "console.html"])
def test_the_page_csp_refuses_injected_script(
    a_browser: Any, server: tuple[str, str], page_name: str
) -> None:
    kind, url = server
    context = a_browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    try:
        page = context.new_page()
        response = page.goto(f"{url}/{page_name}")
        assert response is not None and response.ok
        header = response.headers.get("content-security-policy")
        out = page.evaluate(INJECT)
    finally:
        context.close()
    assert out["pwned"] is None, out
    directives = {v["directive"] for v in out["violations"]}
    assert {"script-src-elem", "script-src-attr"} <= directives, out["violations"]
    for policy in [out["meta"], *([header] if kind == "headers" else [])]:
        assert policy, (kind, out["meta"], header)
        sources = script_src(policy).split()
        assert "'unsafe-inline'" not in sources, policy
        assert "'unsafe-eval'" not in sources, policy
        assert "'self'" in sources, policy
    if kind == "static":
        assert header is None  # the plain server sends none: the <meta> tag carries it


def test_the_sandbox_frame_policy_has_no_network_and_no_inline(
    a_browser: Any, server: tuple[str, str]
) -> None:
    kind, url = server
    context = a_browser.new_context()
    try:
        page = context.new_page()
        response = page.goto(f"{url}/sandbox.html")
        assert response is not None
        header = response.headers.get("content-security-policy")
        meta = page.evaluate(
            "() => document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content"
        )
    finally:
        context.close()
    for policy in [meta, *([header] if kind == "headers" else [])]:
        assert policy
        assert "connect-src 'none'" in policy, policy
        assert "default-src 'none'" in policy, policy
        sources = script_src(policy).split()
        assert "'unsafe-inline'" not in sources, policy
        assert "'self'" not in sources and "*" not in sources, policy
        assert [s for s in sources if s.startswith("'sha256-")], policy
        assert "worker-src blob:" in policy, policy
