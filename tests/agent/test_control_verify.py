"""Check the answer: the key number again by a different route, and the verdict."""

from __future__ import annotations

import json
import shutil

import pytest

from reckon.agent import Agent, DemoModel
from reckon.agent.checks._verify import VERIFY_HEADER, compare
from support import QUESTION_SETS, ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, run

SHIPPED = QUESTION_SETS


def shipped_questions(executor: KernelExecutor) -> list[dict[str, str]]:
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    for name in ("sales.csv", "people.csv"):
        shutil.copy(SHIPPED / name, executor.data_dir / name)
    lines = (SHIPPED / "questions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_the_demo_confirms_its_answers_on_the_shipped_set_by_another_route(
    executor: KernelExecutor,
) -> None:
    environment = None
    for question in shipped_questions(executor):
        environment = environment or executor.environment()
        agent = Agent(DemoModel(), executor, verify=True)
        outcome = run(agent.ask(question["question"], environment=environment))
        verification = outcome["verification"]
        assert verification["status"] == "confirmed", (question["id"], verification)
        original, check = verification["original"]["code"], verification["check"]["code"]
        assert original and check and original != check
        # A different route: SQL, or Python that does not repeat the answer's call.
        assert check[0].startswith("run_sql(") or "pd.read_csv" not in check[0]
        assert all(step.get("phase") == "verify" for step in verification["check"]["steps"])


def test_a_wrong_answer_is_caught_and_the_history_stays_clean(executor: KernelExecutor) -> None:
    model = ScriptedModel(
        [
            code_reply("print(sum([10, 20, 30, 10]) / 4)"),  # a wrong price list
            answer("The mean price is 17.5."),  # computed, but wrong: 16.25
            code_reply("import statistics\nprint(statistics.mean([10, 20, 30, 5]))"),
            answer("@mean_price[16.25]"),
            answer("It is still what I said."),
        ]
    )
    agent = Agent(model, executor)
    outcome = run(agent.ask("mean price?", environment=executor.environment(), verify=True))
    assert outcome["status"] == "ok" and outcome["answer"] == "The mean price is 17.5."
    verification = outcome["verification"]
    assert verification["status"] == "disagrees" and verification["mismatches"] == ["mean_price"]
    assert verification["recomputed"] == {"mean_price": 16.25}
    assert verification["original"]["code"] == ["print(sum([10, 20, 30, 10]) / 4)"]
    assert "statistics.mean" in verification["check"]["code"][0]
    # The model was asked with the answer in the request; the request is in what was sent.
    ask = model.requests[2].messages[-1]["content"]
    assert ask.startswith(VERIFY_HEADER) and "17.5" in ask
    assert len(outcome["sent"]) == 4 and outcome["usage"]["calls"] == 4
    # A follow-up does not see the check.
    run(agent.ask("and?", environment=executor.environment()))
    contents = [str(m.get("content")) for m in model.requests[-1].messages]
    assert not any(c.startswith(VERIFY_HEADER) for c in contents)
    assert "@mean_price[16.25]" not in contents


def test_no_number_or_a_failing_check_is_unavailable(executor: KernelExecutor) -> None:
    model = ScriptedModel([answer("Hello."), answer("@none[]")])
    outcome = run(Agent(model, executor, verify=True).ask("hi", environment={}))
    assert outcome["verification"]["status"] == "unavailable"
    failing = ScriptedModel(
        [answer("It is 4."), code_reply("1/0"), code_reply("1/0"), code_reply("1/0")]
    )
    # The question gives the 4, so the answer is not sent back to be worked out.
    agent = Agent(failing, executor, verify=True, max_failures=3)
    outcome = run(agent.ask("Is it 4?", environment={}))
    verification = outcome["verification"]
    assert verification["status"] == "unavailable" and "did not finish" in verification["message"]
    assert outcome["status"] == "ok" and outcome["answer"] == "It is 4."


@pytest.mark.parametrize(
    ("answer_text", "check", "status"),
    [
        ("The mean is 64103.25.", "@mean[64103.25]", "confirmed"),
        ("The mean is about 64103.3.", "@mean[64103.25]", "confirmed"),  # shown rounded
        ("The mean is about 64103.", "@mean[64103.25]", "confirmed"),
        ("The mean is 64104.", "@mean[64103.25]", "disagrees"),
        ("@East[25.5] @West[25.1]", "@East[25.5] @West[25.2]", "disagrees"),
        ("@East[25.5] @West[25.1]", "@West[25.1]", "confirmed"),
        ("r = -0.7521", "@r[-0.7521]", "confirmed"),
        ("1,234 rows", "@rows[1234]", "confirmed"),
        ("Nothing to count.", "@none[]", "unavailable"),
        ("It is 3.", "I could not do it.", "unavailable"),
    ],
)
def test_compare(answer_text: str, check: str, status: str) -> None:
    assert compare(answer_text, check)["status"] == status
