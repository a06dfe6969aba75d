"""PROTOCOL.md says what the code does: the methods of both workers, field by field
(their tables against the interfaces in web/shared/protocol.js that tsc checks at both
ends), the sandbox methods the agent may call, and the events; the lists in
web/shared/protocol.js and py/reckon/_protocol.py are the same, and the workers answer
exactly those methods."""

from __future__ import annotations

import re
from pathlib import Path

from reckon import _protocol

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "PROTOCOL.md").read_text()
WEB = ROOT / "web"
JS_PROTOCOL = (WEB / "shared" / "protocol.js").read_text()


def js_list(name: str) -> list[str]:
    found = re.search(rf"export const {name} = Object\.freeze\(\[([^\]]*)\]\)", JS_PROTOCOL)
    assert found is not None, f"{name} is not in web/shared/protocol.js"
    return re.findall(r'"([\w-]+)"', found.group(1))


def parts_of(name: str, folder: str) -> list[str]:
    """The parts list `name` of web/sandbox/parts.js, which must name every file of
    web/<folder>/ (the snapshot's cache key covers its recipe by that folder)."""
    source = (WEB / "sandbox" / "parts.js").read_text()
    found = re.search(rf"export const {name} = \[([^\]]*)\]", source)
    assert found is not None, f"{name} is not in web/sandbox/parts.js"
    parts = re.findall(r'"([\w./-]+)"', found.group(1))
    assert sorted(parts) == sorted(f"{folder}/{path.name}" for path in (WEB / folder).glob("*.js"))
    return parts


def sandbox_worker() -> str:
    """The sandbox worker's source: its parts, joined in order as the page joins them."""
    parts = parts_of("WORKER_PARTS", "sandbox/worker")
    return "\n".join((WEB / name).read_text() for name in parts)


def test_the_snapshot_recipe_is_its_folder() -> None:
    assert parts_of("RECIPE_PARTS", "sandbox/snapshot")


def section(number: int) -> str:
    start = PROTOCOL.index(f"\n## {number}. ")
    end = PROTOCOL.find("\n## ", start + 1)
    return PROTOCOL[start:end]


def table_rows(text: str) -> list[list[str]]:
    rows = re.findall(r"^\| `(\w+)` \|(.*)\|$", text, flags=re.MULTILINE)
    return [[name, *(cell.strip() for cell in rest.split("|"))] for name, rest in rows]


def handler_keys(source: str, name: str) -> set[str]:
    """The method names of `const <name> = {...};` in a worker script, or of the table
    a class's `<name>() { return {...}; }` makes."""
    body = re.search(rf"const {name} = \{{\n(.*?)\n\}};", source, flags=re.S)
    indent = "  "
    if body is None:
        body = re.search(
            rf"\n  {name}\(\) \{{\n    return \{{\n(.*?)\n    \}};", source, flags=re.S
        )
        indent = "      "
    assert body is not None, f"no `const {name} = {{` table, nor a `{name}()` that returns one"
    keys = rf"^{indent}(?:async )?(\w+)(?:[:,(]| =)"
    return set(re.findall(keys, body.group(1), flags=re.M))


def test_the_agent_allowed_column_is_what_the_page_allows() -> None:
    rows = table_rows(section(3))
    documented = {row[0] for row in rows if row[-1] == "yes"}
    assert documented == set(js_list("AGENT_ALLOWED")) == set(_protocol.AGENT_ALLOWED)
    client = (WEB / "agent" / "client.js").read_text()
    # The page's gate uses that list, and serves exactly the interface made of it.
    assert "AGENT_ALLOWED.includes(method) ? null : `the agent may not ${method}`" in client
    picked = re.search(
        r"@typedef \{Pick<SandboxApi, ([^>]*)> & PageApi\} AgentSandboxApi", JS_PROTOCOL
    )
    assert picked is not None
    assert set(re.findall(r'"(\w+)"', picked.group(1))) | set(interface("PageApi")) == documented
    # And §4 names them where it says what the agent may call.
    assert (
        set(re.findall(r'"(\w+)"', section(4).split('"method":', 1)[1].split('"args"', 1)[0]))
        == documented
    )


def test_the_sandbox_methods_are_the_documented_ones() -> None:
    documented = {row[0] for row in table_rows(section(3))}
    code = set(js_list("SANDBOX_METHODS"))
    assert documented == code | set(js_list("PAGE_METHODS"))
    assert code == set(_protocol.SANDBOX_METHODS)
    assert handler_keys(sandbox_worker(), "handlers") == code


def test_the_agent_methods_are_the_documented_ones() -> None:
    documented = {row[0] for row in table_rows(section(4))}
    code = set(js_list("AGENT_METHODS"))
    assert documented == code == set(_protocol.AGENT_METHODS)
    worker = (WEB / "agent" / "worker.js").read_text()
    assert handler_keys(worker, "methods") == code
    client = (WEB / "agent" / "client.js").read_text()
    called = set(re.findall(r'(?:rpc\.call|this\.call)\("(\w+)"', client))
    assert called == code


def test_every_agent_event_is_documented_and_posted() -> None:
    events = js_list("AGENT_EVENTS")
    assert set(events) == set(_protocol.AGENT_EVENTS)
    for event in events:
        assert f'`{{"type": "{event}", "askId"' in section(4), event
    # The worker's Python entry and what it holds between calls (_host_state.py).
    host = "".join(p.read_text() for p in (ROOT / "py" / "reckon" / "agent").glob("_host*.py"))
    posted = set(re.findall(r'self\._post\(\{"type": "(\w+)"', host))
    assert posted == set(events)
    client = (WEB / "agent" / "client.js").read_text()
    handled = set(re.findall(r"^      (\w+): \(msg\) =>", client, flags=re.M))
    looped = re.search(r"for \(const type of \[([^\]]*)\]\) on\[type\]", client)
    assert looped is not None
    handled |= set(re.findall(r'"(\w+)"', looped.group(1)))
    assert handled == set(events)


def test_every_message_a_worker_posts_is_a_reply_a_call_or_a_listed_event() -> None:
    listed = {"reply", *js_list("SANDBOX_EVENTS")}
    source = sandbox_worker()
    posted = set(re.findall(r'post\(\{ (?:\.\.\.\w+, )?type: "([\w-]+)"', source))
    assert posted, "no messages found: the pattern no longer matches the sandbox worker"
    assert posted <= listed, posted - listed
    # Nothing in a worker builds a message by hand but through the call layer (its
    # events: the sandbox's post(), the agent's Python events, seam.js's notify()).
    agent = (WEB / "agent" / "worker.js").read_text()
    assert "postMessage(" not in agent and "postMessage(" not in source
    for event in js_list("SANDBOX_EVENTS"):
        assert f'{{"type": "{event}", "id"' in section(3), event


def test_every_frame_message_is_documented() -> None:
    frame = (WEB / "sandbox" / "frame.js").read_text()
    handled = set(re.findall(r'^    "?([\w-]+)"?: (?:withPort\(|\(\) =>|\(\{)', frame, flags=re.M))
    handled |= set(re.findall(r'ev\.data\.type !== "([\w-]+)"', frame))
    # What the page and the frame send (channel.js's boot() sends the kind it is given).
    senders = (
        "channel.js",
        "client.js",
        "fresh.js",
        "snapshot-plan.js",
        "frame.js",
        "worker-events.js",
    )
    sources = [(WEB / "sandbox" / name).read_text() for name in senders]
    sent = {name for text in sources for name in re.findall(r'notify\("([\w-]+)"', text)}
    assert re.search(r"notify\(kind,", sources[0])
    sent |= set(re.findall(r'this\.boot\("([\w-]+)"\)', "".join(sources)))
    assert {"frame-start", "addRuntime", "frame-ping", "frame-connect"} <= handled, handled
    assert {"frame-ready", "crash", "frame-fresh", "frame-interrupt"} <= sent, sent
    handled |= sent
    assert handled <= set(js_list("FRAME_MESSAGES"))
    missing = [
        t
        for t in js_list("FRAME_MESSAGES")
        if f"`{t}`" not in PROTOCOL and f'"type": "{t}"' not in PROTOCOL
    ]
    assert missing == []


def fields(literal: str) -> dict[str, bool]:
    """The top-level fields of `{a, b?: {c}, "d": 1}` (a type or a documented shape):
    each name, and whether it is marked optional."""
    inner = literal.strip()
    assert inner.startswith("{") and inner.endswith("}"), literal
    parts, depth, start = [], 0, 1
    for i, ch in enumerate(inner[1:-1], start=1):
        if ch in "{<([":
            depth += 1
        elif ch in "}>)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:-1])
    found = {}
    for part in filter(str.strip, parts):
        name = re.match(r'\s*"?([\w-]+)"?(\?)?', part)
        assert name is not None, part
        found[name.group(1)] = bool(name.group(2))
    return found


def interface(name: str) -> dict[str, tuple[dict[str, bool], str]]:
    """The typedef `name` of web/shared/protocol.js: each method's args (name -> optional)
    and its reply's type."""
    end = JS_PROTOCOL.find(f"\n * }}}} {name}\n")
    assert end >= 0, f"no interface {name} in web/shared/protocol.js"
    body = JS_PROTOCOL[JS_PROTOCOL.rindex("@typedef {{\n", 0, end) + len("@typedef {{\n") : end]
    methods = {}
    for line in body.splitlines():
        method = re.fullmatch(r' \*   "?([\w-]+)"?: \(args: (\{.*?\})\) => (.+),', line)
        assert method is not None, f"{name}: cannot read {line!r}"
        methods[method.group(1)] = (fields(method.group(2)), method.group(3))
    return methods


def documented_args(cell: str) -> dict[str, bool]:
    """A table's args cell: "`path`, `output?`", "`options: {…}`" or "—"."""
    return {m.group(1): bool(m.group(2)) for m in re.finditer(r"`(\w+)(\?)?[:`]", cell)}


# What a reply cell says in words, and the type that says it in the interface.
NAMED_REPLIES = {
    "the run result": "RunResult",
    "section 2": "InspectResult",
    "the outcome": "AskReply",
}


def documented_reply(cell: str) -> dict[str, bool] | str:
    """A table's reply cell: the fields of its shapes (every `{…}` it shows), or the name of
    the type it names in words."""
    for words, typename in NAMED_REPLIES.items():
        if cell.startswith(words):
            return typename
    shapes = [span for span in re.findall(r"`([^`]*)`", cell) if span.startswith("{")]
    assert shapes, f"the reply cell {cell!r} shows no shape"
    return {name: opt for shape in shapes for name, opt in fields(shape).items()}


def mismatches(
    table: list[list[str]], methods: dict[str, tuple[dict[str, bool], str]]
) -> list[str]:
    """Every difference between a table of PROTOCOL.md and an interface, in words. Any
    reply may be an error, `{status: "error", message}` (the section says so once), so
    `message` is not compared; nor whether a reply field is optional (an error lacks them)."""
    found = []
    rows = {row[0]: row for row in table}
    for name in sorted(set(rows) ^ set(methods)):
        found.append(f"{name}: {'documented only' if name in rows else 'in the interface only'}")
    for name in sorted(set(rows) & set(methods)):
        args, reply_type = methods[name]
        doc_args = documented_args(rows[name][1])
        if doc_args != args:
            found.append(f"{name} args: PROTOCOL.md {doc_args}, interface {args}")
        doc_reply = documented_reply(rows[name][2])
        if isinstance(doc_reply, str):
            if doc_reply not in reply_type:
                found.append(f"{name} reply: PROTOCOL.md says {doc_reply}, interface {reply_type}")
            continue
        assert reply_type.startswith("{"), f"{name}: the interface has {reply_type}, not fields"
        typed = set(fields(reply_type)) - {"message"}
        if set(doc_reply) - {"message"} != typed:
            documented = sorted(set(doc_reply) - {"message"})
            found.append(f"{name} reply: PROTOCOL.md {documented}, interface {sorted(typed)}")
    return found


def test_the_sandbox_table_is_its_interfaces_field_by_field() -> None:
    methods = {**interface("SandboxApi"), **interface("PageApi")}
    assert mismatches(table_rows(section(3)), methods) == []


def test_the_agent_table_is_its_interface_field_by_field() -> None:
    assert mismatches(table_rows(section(4)), interface("AgentApi")) == []


def test_the_ask_reply_is_the_documented_done_shape() -> None:
    done = re.search(
        r"The `ask` reply \(`done`, the outcome\) is `(\{.*?\})`", section(4), flags=re.S
    )
    assert done is not None
    end = JS_PROTOCOL.index("} AskReply\n")
    typed = JS_PROTOCOL[JS_PROTOCOL.rindex("@typedef {", 0, end) + len("@typedef {") : end]
    assert set(fields(done.group(1))) == set(fields(typed.replace("\n *", " ")))


def test_a_planted_mismatch_is_found() -> None:
    """The comparison itself can fail: a field, a method or a named reply changed in the
    table is reported."""
    table = table_rows(section(3))
    methods = {**interface("SandboxApi"), **interface("PageApi")}
    planted = [
        [row[0], row[1].replace("`path`", "`file_path`"), *row[2:]]
        if row[0] == "deleteFile"
        else row
        for row in table
    ]
    assert mismatches(planted, methods) == [
        "deleteFile args: PROTOCOL.md {'file_path': False}, interface {'path': False}"
    ]
    planted = [
        [row[0], row[1], "`{status}`", *row[3:]] if row[0] == "deleteFile" else row for row in table
    ]
    reply = "deleteFile reply: PROTOCOL.md ['status'], interface ['path', 'status']"
    assert mismatches(planted, methods) == [reply]
    assert mismatches(table[1:], methods) == [f"{table[0][0]}: in the interface only"]


def keys_of(text: str) -> dict[str, bool]:
    """The keys of the first `{…}` in a documented (jsonc) shape, at its own level: each
    name, and whether it is marked optional (`"name"?:`). Strings, comments and nested
    objects are skipped."""
    found: dict[str, bool] = {}
    depth, i = 0, text.index("{")
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = text.index('"', i + 1)
            key = re.match(r"(\?)?\s*:", text[end + 1 :])
            if depth == 1 and key is not None:
                found[text[i + 1 : end]] = bool(key.group(1))
            i = end
        elif text.startswith("//", i):
            i = text.index("\n", i)
            continue
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return found
        i += 1
    raise AssertionError(f"no closed object in {text[:80]!r}")


def typedef(name: str) -> dict[str, bool]:
    """The fields of `@typedef {{…}} name` in web/shared/protocol.js."""
    found = re.search(rf"@typedef (\{{\{{(?:(?!@typedef).)*?\}}\}}) {name}\n", JS_PROTOCOL, re.S)
    assert found is not None, f"no typedef {name} in web/shared/protocol.js"
    return fields(found.group(1)[1:-1].replace("\n *", " "))


# Each field of a run result that holds records or an object, and the type of one.
RUN_RESULT_PARTS = {
    "result": "RunValue",
    "figures": "Figure",
    "files": "FileChange",
    "error": "RunError",
    "assigned": "Assigned",
    "tools": "ToolCallRecord",
}


def run_result_doc() -> str:
    block = re.search(r"```jsonc\n(\{.*?\n\})\n```", section(1), flags=re.S)
    assert block is not None, "no run result block in PROTOCOL.md §1"
    return block.group(1)


def test_the_run_result_block_is_its_types_field_by_field() -> None:
    """§1's example run result names exactly RunResult's fields (optional ones marked
    `"name"?`), at both ends, and each record exactly its own type's fields."""
    doc = run_result_doc()
    top = keys_of(doc)
    assert top == typedef("RunResult")
    # The module's annotations are forward references (`from __future__ import annotations`).
    annotations = _protocol.RunResult.__annotations__.items()
    python = {
        k: getattr(v, "__forward_arg__", "").startswith("NotRequired[") for k, v in annotations
    }
    assert top == python
    for name, type_name in RUN_RESULT_PARTS.items():
        part = re.search(rf'^  "{name}"\??:(.*?)(?=^  "|\Z)', doc, flags=re.S | re.M)
        assert part is not None, name
        documented = set(keys_of(part.group(1)))
        assert documented == set(typedef(type_name)), name
        typed = getattr(_protocol, type_name, None)  # the page adds `tools` (web/tools.js)
        assert typed is None or documented == set(typed.__annotations__), name


def test_a_run_result_field_left_out_is_found() -> None:
    doc = run_result_doc()
    assert keys_of(doc)["notes"] is True
    planted = doc.replace('  "notes"?: [', '  "remarks"?: [')
    assert keys_of(planted) != typedef("RunResult")
    record = re.search(r'^  "tools"\?:(.*?)(?=^  "|\Z)', doc, flags=re.S | re.M)
    assert record is not None
    assert set(keys_of(record.group(1).replace('"request"?', '"approval"?'))) != set(
        typedef("ToolCallRecord")
    )
