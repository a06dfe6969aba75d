"""Schema privacy under attack (issue 18, F3): model-written cells that tamper with the
scan for the values to hide, or print the values encoded, send none of them."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from reckon.agent import Agent
from reckon.agent.privacy._privacy import Privacy
from reckon.agent.privacy._redactor import Redactor
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, model_steps, put_file, run

PEOPLE = """\
name,email,salary,city
Alice Zimmermann,alice.z@example.org,73412.5,Paris
Bob Quist,bq@example.org,51877.25,Lyon
Carla Mendez,carla@example.org,88123.75,Paris
"""
NAMES = ["Alice Zimmermann", "Bob Quist", "Carla Mendez"]
# The attack seen: every later scan finds nothing, and the next ask sent names in clear.
PATCH = "import numpy as np\nimport pandas as pd\npd.Series.unique = lambda self: np.array([])"


@pytest.fixture(autouse=True)
def pandas_restored() -> Iterator[None]:
    """The in-process kernel shares this process's pandas: undo a test's patch."""
    unique = pd.Series.unique
    yield
    pd.Series.unique = unique  # type: ignore[method-assign]


@pytest.fixture
def people(executor: KernelExecutor) -> str:
    return put_file(executor, "people.csv", PEOPLE)


def sent(model: ScriptedModel) -> str:
    return json.dumps([r.messages for r in model.requests], ensure_ascii=False)


# A subtler one: each column seems to hold only its first value.
PARTIAL = (
    "import numpy as np\nimport pandas as pd\n"
    "pd.Series.unique = lambda self: np.asarray(list(dict.fromkeys(self.tolist()))[:1])"
)


@pytest.mark.parametrize("patch", [PATCH, PARTIAL], ids=["emptied", "partial"])
def test_a_scan_patched_after_the_first_ask_unhides_nothing(
    executor: KernelExecutor, people: str, patch: str
) -> None:
    dump = f"import pandas as pd\nprint(pd.read_csv({people!r}).to_string())"
    model = ScriptedModel([code_reply(patch), answer("Patched."),
                           code_reply(dump), answer("Here they are.")])  # fmt: skip
    agent = Agent(model, executor, privacy=Privacy.parse("schema", ["city"]))
    first = run(agent.ask("tidy up", environment=executor.environment()))
    assert first["status"] == "ok", first
    second = run(agent.ask("show everyone", environment=executor.environment()))
    leaked = [v for v in [*NAMES, "bq@example.org", "88123.75"] if v in sent(model)]
    assert leaked == []
    if patch == PATCH:  # a scan that finds nothing in a table with rows: nothing goes
        assert second["status"] == "error" and "Restart the sandbox" in second["message"]
        assert len(model.requests) == 2
    else:  # what the first ask's scan found stays hidden
        assert second["status"] == "ok", second
        assert "Alice Zimmermann" in model_steps(second)[0]["result"]["stdout"]
        assert len(model.requests) == 4 and "Paris" in sent(model)  # allowed: still sent


def test_a_scan_tampered_before_the_first_ask_fails_closed(
    executor: KernelExecutor, people: str
) -> None:
    run(executor.run(PATCH))  # what an earlier session's cell left in the sandbox
    model = ScriptedModel([code_reply(f"print(open({people!r}).read())"), answer("ok")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("show everyone", environment=executor.environment()))
    assert outcome["status"] == "error" and outcome["sent"] == [] and model.requests == []
    assert "Nothing was sent" in outcome["message"] and "Restart the" in outcome["message"]
    assert "people.csv" in outcome["message"]


# The scan's result forged through a name the hidden cell looked up in the cells' own
# namespace (a global that shadows a builtin, or builtins of the cells' own). Each keeps
# the table named with its count, so the check that it was read passes and values went.
MARKER = "RECKON-HIDDEN-VALUES:"
SHADOWS = {
    "sorted": "def sorted(*args, **kwargs):\n    return []",
    "builtins": "import builtins\n__builtins__ = {**vars(builtins), 'sorted': lambda *a, **k: []}",
    "print": f"""\
import builtins, json
def print(*args, **kwargs):
    text = ' '.join(map(str, args))
    store = globals().get('_reckon_hidden_json')
    if text.startswith({MARKER!r}) and text[{len(MARKER)}:].isdigit() and store:
        forged = json.dumps({{**json.loads(store), 'strings': [], 'numbers': []}})
        globals()['_reckon_hidden_json'] = forged
        text = {MARKER!r} + str(len(forged))
    builtins.print(text, **kwargs)
""",
    "globals": """\
import json
_reckon_hidden_json = json.dumps({"strings": [], "numbers": [], "found": {PATH: 3}})
class _Sink(dict):
    def __setitem__(self, key, value): pass
    def __getitem__(self, key): return _reckon_hidden_json
    def pop(self, key, default=None): return default
_sink = _Sink()
globals = lambda: _sink
""",
}
# The stored result swapped, as it is stored, for one of the same length.
FINALIZER = """\
import json
class _Forger:
    namespace = globals()
    def __del__(self):
        real = self.namespace['_reckon_hidden_json']
        forged = json.dumps({**json.loads(real), 'strings': [], 'numbers': []})
        self.namespace['_reckon_hidden_json'] = forged.ljust(len(real))
_reckon_hidden_json = _Forger()
"""


@pytest.mark.parametrize("shadow", SHADOWS, ids=list(SHADOWS))
def test_a_scan_whose_names_a_cell_shadowed_still_finds_every_value(
    executor: KernelExecutor, people: str, shadow: str
) -> None:
    run(executor.run(SHADOWS[shadow].replace("PATH", repr(people))))  # an earlier cell's
    model = ScriptedModel([code_reply(f"print(open({people!r}).read())"), answer("ok")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("show everyone", environment=executor.environment()))
    assert outcome["status"] == "ok", outcome
    assert "Alice Zimmermann" in model_steps(outcome)[0]["result"]["stdout"]
    assert [v for v in [*NAMES, "bq@example.org", "88123.75"] if v in sent(model)] == []


def test_a_scan_result_swapped_as_it_is_stored_fails_closed(
    executor: KernelExecutor, people: str
) -> None:
    run(executor.run(FINALIZER))
    model = ScriptedModel([code_reply(f"print(open({people!r}).read())"), answer("ok")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("show everyone", environment=executor.environment()))
    assert [v for v in NAMES if v in sent(model)] == []
    assert outcome["status"] == "error" and outcome["sent"] == [] and model.requests == []
    assert "Nothing was sent" in outcome["message"] and "Restart the" in outcome["message"]


class ForgedScan:
    """The real kernel, but the hidden runs answer a scan that found no value and
    lists ``found`` as the tables it read (what a tampered scan could report)."""

    def __init__(self, executor: KernelExecutor, found: Any) -> None:
        self.executor = executor
        self.text = json.dumps({"strings": [], "numbers": [], "found": found})
        self.hidden = 0

    async def run(self, code: str) -> dict[str, Any]:
        return await self.executor.run(code)

    async def interrupt(self) -> None:
        await self.executor.interrupt()

    async def run_hidden(self, code: str) -> dict[str, Any]:
        self.hidden += 1
        digest = hashlib.sha256(self.text.encode()).hexdigest()
        printed = [f"{len(self.text)} {digest}", self.text, ""][self.hidden - 1]
        return {"status": "ok", "stdout": f"{MARKER}{printed}\n" if printed else ""}


@pytest.mark.parametrize(
    "found", [{}, {"elsewhere.csv": 3}, None], ids=["no-table", "another-table", "no-list"]
)
def test_a_scan_that_does_not_name_the_table_fails_closed(
    executor: KernelExecutor, people: str, found: Any
) -> None:
    model = ScriptedModel([answer("ok")])
    agent = Agent(model, ForgedScan(executor, found), privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("show everyone", environment=executor.environment()))
    assert model.requests == []
    assert outcome["status"] == "error" and outcome["sent"] == []
    assert "Nothing was sent" in outcome["message"] and "Restart the" in outcome["message"]
    assert ("people.csv" in outcome["message"]) == (found is not None)


def encodings(value: str) -> dict[str, str]:
    return {
        "base64": base64.b64encode(value.encode()).decode(),
        "urlsafe": base64.urlsafe_b64encode(value.encode()).decode().rstrip("="),
        "hex": value.encode().hex(),
        "spaced": " ".join(value),
        "dashed": "-".join(value.replace(" ", "")),
        "upper": value.upper(),
        "reversed": value[::-1],
    }


def test_values_printed_encoded_are_hidden(executor: KernelExecutor, people: str) -> None:
    cell = (
        "import base64, pandas as pd\n"
        f"df = pd.read_csv({people!r})\n"
        "for n in df['name']:\n"
        "    b = n.encode()\n"
        "    print(base64.b64encode(b).decode(), base64.urlsafe_b64encode(b).decode().rstrip('='),"
        " b.hex(), ' '.join(n), '-'.join(n.replace(' ', '')), n.upper(), n[::-1])\n"
        "print([s / 1000 for s in df['salary']], [s * 100 for s in df['salary']])"
    )
    model = ScriptedModel([code_reply(cell), answer("Done.")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("encode them", environment=executor.environment()))
    assert outcome["status"] == "ok"
    printed = model_steps(outcome)[0]["result"]["stdout"]
    forms = {f"{n} {k}": v for n in NAMES for k, v in encodings(n).items()}
    assert all(v in printed for v in forms.values())  # the cell did print them
    seen = sent(model)
    assert [k for k, v in forms.items() if v in seen] == []
    for scaled in ("73.4125", "88.12375", "7341250", "8812375"):
        assert scaled in printed and scaled not in seen


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("sales.csv has 2 rows", "sales.csv has 2 rows", id="a-table-name-stays"),
        pytest.param("12345 and 1234.5 and 0.012345", "[hidden] and [hidden] and [hidden]",
                     id="scaled"),
        pytest.param("12 and 1200 and 0.5", "12 and 1200 and 0.5", id="too-few-digits"),
        pytest.param("EmployeeNumber 42", "EmployeeNumber 42", id="plain-word-not-base64"),
        pytest.param("L-E-E and L E E", "L-E-E and L E E", id="short-values-exact-only"),
        # "lee, ANN" is the name with its words swapped: the first two spans join.
        pytest.param("ann lee, ANN LEE, eeL nnA", "[hidden], [hidden]", id="folded"),
    ],
)  # fmt: skip
def test_redactor_encodings(text: str, expected: Any) -> None:
    redactor = Redactor(["Ann Lee", "Sales", "Lee"], [12345.0, 120.0], keep=["sales"])
    assert redactor.redact(text)[0] == expected
