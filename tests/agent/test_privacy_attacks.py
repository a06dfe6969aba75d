"""Schema privacy under attack (issue 18, F3): model-written cells that tamper with the
scan for the values to hide, or print the values encoded, send none of them."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from reckon.agent import Agent
from reckon.agent._privacy import Privacy
from reckon.agent._redactor import Redactor
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


# The scan's result forged: with `globals` shadowed, the scan stores its result nowhere
# and reads back one that names no table (nothing to hide, nothing found).
FORGED = """\
import json
_reckon_hidden_json = json.dumps({"strings": [], "numbers": [], "found": {}})
class _Sink(dict):
    def __setitem__(self, key, value): pass
    def __getitem__(self, key): return _reckon_hidden_json
    def pop(self, key, default=None): return default
_sink = _Sink()
globals = lambda: _sink
"""


def test_a_scan_that_names_no_table_fails_closed(executor: KernelExecutor, people: str) -> None:
    run(executor.run(FORGED))  # left in the sandbox by an earlier cell
    model = ScriptedModel([code_reply(f"print(open({people!r}).read())"), answer("ok")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("show everyone", environment=executor.environment()))
    assert [v for v in NAMES if v in sent(model)] == []
    assert outcome["status"] == "error" and outcome["sent"] == [] and model.requests == []
    assert "Nothing was sent" in outcome["message"] and "Restart the" in outcome["message"]
    assert "people.csv" in outcome["message"]


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
        pytest.param("ann lee, ANN LEE, eeL nnA", "[hidden], [hidden], [hidden]", id="folded"),
    ],
)  # fmt: skip
def test_redactor_encodings(text: str, expected: Any) -> None:
    redactor = Redactor(["Ann Lee", "Sales", "Lee"], [12345.0, 120.0], keep=["sales"])
    assert redactor.redact(text)[0] == expected
