"""The privacy setting: in schema mode no value of a protected column reaches the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reckon import ProtocolError
from reckon.agent import Agent, DemoModel, OpenAIModel
from reckon.agent.privacy._privacy import HIDDEN, Privacy, Redactor
from support import FakeUpstream, HttpxTransport, ScriptedModel, sse, text_stream, tool_stream

from .helpers import KernelExecutor, answer, code_reply, model_steps, put_file, run

PEOPLE = """\
name,email,department,salary,city
Alice Zimmermann,alice.z@example.org,Engineering,73412.5,Paris
Bob Quist,bq@example.org,Sales,51877.25,Lyon
Carla Mendez,carla@example.org,Engineering,88123.75,Paris
Dmitri Volkov,dv@example.org,Support,42999.5,Nice
"""
# Every value of a column the person did not allow (city is allowed below).
PROTECTED = [
    "Alice Zimmermann", "Bob Quist", "Carla Mendez", "Dmitri Volkov", "Zimmermann",
    "alice.z@example.org", "bq@example.org", "carla@example.org", "dv@example.org",
    "73412.5", "51877.25", "88123.75", "42999.5", "73412", "88123",
]  # fmt: skip


@pytest.fixture
def people(executor: KernelExecutor) -> str:
    return put_file(executor, "people.csv", PEOPLE)


def leaks(bodies: list[Any], values: list[str] = PROTECTED) -> list[str]:
    text = json.dumps(bodies, ensure_ascii=False)
    return [value for value in values if value in text]


PRYING_CELLS = [
    "import pandas as pd\ndf = pd.read_csv({path!r})\nprint(df.head())\nprint(df.describe())",
    "print(df.to_dict('records'))\nprint(df['salary'].round(0).tolist())\ndf.iloc[0]",
    "raise KeyError(df['name'][2] + ' / ' + df['email'][3])",
    "import matplotlib.pyplot as plt\nplt.bar(df['name'], df['salary'])\nplt.title(df['name'][0])",
    "print(len(df), df.shape, round(df['salary'].mean(), 2), df['department'].nunique())",
    # A silent cell's assigned values are shown to the model: hidden like any output.
    "names, top = df['name'].tolist(), df['salary'].max()",
]


def scripted(upstream: FakeUpstream, path: str) -> OpenAIModel:
    for cell in PRYING_CELLS:
        upstream.handlers.append(sse([tool_stream(cell.format(path=path))]))
    upstream.handlers.append(sse([text_stream("Done.")]))
    return OpenAIModel(HttpxTransport(upstream.url), model="gpt-test")


def test_schema_mode_sends_no_protected_value_to_a_real_upstream(
    upstream: FakeUpstream, executor: KernelExecutor, people: str
) -> None:
    privacy = Privacy.parse("schema", ["city"])
    agent = Agent(scripted(upstream, people), executor, privacy=privacy, max_failures=5)
    outcome = run(agent.ask("show me everything", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["privacy"] == "schema"
    assert len(upstream.payloads) == len(PRYING_CELLS) + 1
    # What the upstream received, and what the transcript says was sent, hold none of it.
    assert leaks(upstream.payloads) == []
    assert [r["body"] for r in outcome["sent"]] == upstream.payloads
    # The page still sees the real output, and the model was told values were hidden.
    steps = model_steps(outcome)
    assert "Alice Zimmermann" in steps[0]["result"]["stdout"] and steps[0]["hidden"] > 0
    last = upstream.payloads[-1]["messages"]
    observations = [m["content"] for m in last if m["role"] == "tool"]
    assert HIDDEN in observations[0] and "[hidden]" in observations[1]
    assert "replaced by [hidden]" in observations[0]
    # Allowed columns, schema, shapes and aggregates are still there.
    assert "Paris" in observations[0] and "salary" in observations[0]
    assert "4 (4, 5) 64103.25 3" in observations[4]
    assert "values assigned" in observations[5] and "[hidden]" in observations[5]
    system = last[0]["content"]
    assert "Privacy:" in system and "except the columns city" in system


def test_full_mode_sends_the_values_so_the_check_above_can_fail(
    upstream: FakeUpstream, executor: KernelExecutor, people: str
) -> None:
    agent = Agent(scripted(upstream, people), executor, max_failures=5)
    outcome = run(agent.ask("show me everything", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["privacy"] == "full"
    assert set(leaks(upstream.payloads)) >= {"Alice Zimmermann", "dv@example.org", "88123.75"}


def test_schema_mode_with_the_demo_model(executor: KernelExecutor, people: str) -> None:
    agent = Agent(DemoModel(), executor, privacy=Privacy.parse("schema"))
    environment = executor.environment()
    for question in ["summarize the data", "average salary by department", "top 2 name by salary"]:
        outcome = run(agent.ask(question, environment=environment))
        assert outcome["status"] == "ok", outcome
        assert leaks([r["body"] for r in outcome["sent"]], [*PROTECTED, "Paris"]) == []
    mean = run(agent.ask("average salary by department", environment=environment))
    assert "80768.12" in mean["answer"] or "80768.1" in mean["answer"]


def test_the_hidden_cell_leaves_no_variables_and_a_failure_sends_nothing(
    executor: KernelExecutor, people: str
) -> None:
    model = ScriptedModel([code_reply("print(sorted(k for k in globals() if 'reckon' in k))"),
                           answer("ok")])  # fmt: skip
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("q", environment=executor.environment()))
    assert model_steps(outcome)[0]["result"]["stdout"] == "[]\n"
    broken = executor.environment()
    broken["files"][0]["read_with"] = "pd.read_csv('/nowhere.csv')"
    (executor.data_dir / "people.csv").unlink()
    failed = run(
        Agent(model, executor, privacy=Privacy.parse("schema")).ask("q", environment=broken)
    )
    assert failed["status"] == "error" and "Nothing was sent" in failed["message"]
    assert failed["sent"] == [] and len(model.requests) == 2


def test_redactor_rules() -> None:
    redactor = Redactor(["Ann Lee", "Lee", "M", "75001"], [73400.0, 3.14159, 7.0, 250.0])
    hidden, count = redactor.redact("Ann Lee (M) earns 73,400 or 73400.0; pi 3.14, zip 75001.")
    assert hidden == "[hidden] ([hidden]) earns [hidden] or [hidden]; pi [hidden], zip [hidden]."
    assert count == 6
    # Small integers stay (counts, indexes); other numbers and partial words are not values.
    assert redactor.redact("7 rows, 250 total, 2500, Leeds, MM") == (
        "7 rows, [hidden] total, 2500, Leeds, MM",
        1,
    )
    kept = Redactor(["salary", "Bob"], [], keep=["salary"])
    assert kept.redact("salary of Bob") == ("salary of [hidden]", 1)


@pytest.mark.parametrize(
    ("mode", "allow", "message"),
    [
        ("private", None, r"settings.privacy must be one of 'full', 'schema'"),
        ("schema", "city", r"allowColumns must be a list"),
        ("schema", [1], r"allowColumns must be a list"),
    ],
)
def test_bad_privacy_settings_say_what_to_do(mode: str, allow: Any, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        Privacy.parse(mode, allow)


def test_many_values_are_paged_out_and_all_hidden(executor: KernelExecutor) -> None:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    rows = [f"customer-{i:05d}-{'x' * (i % 7)},{1000 + i * 3.5}" for i in range(12_000)]
    big = executor.data_dir / "big.csv"
    big.write_text("who,amount\n" + "\n".join(rows) + "\n")
    code = f"import pandas as pd\ndf = pd.read_csv({str(big)!r})\nprint(df.tail(3))"
    model = ScriptedModel([code_reply(code), answer("done")])
    agent = Agent(model, executor, privacy=Privacy.parse("schema"))
    outcome = run(agent.ask("q", environment=executor.environment()))
    assert outcome["status"] == "ok"
    # The last rows are in the last page of values: hidden too.
    seen = model.requests[1].messages[-1]["content"]
    assert "customer-11999" not in seen and "42995.5" not in seen and "[hidden]" in seen
    assert "customer-11999" in model_steps(outcome)[0]["result"]["stdout"]
    hidden_runs = [c for c in executor.codes if "_reckon_hidden" in c]
    assert len(hidden_runs) >= 4  # collect, at least two pages, clean up
    assert "_reckon_hidden_json" not in executor.session.namespace
