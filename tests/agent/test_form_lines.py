"""A line of a cell that starts with the answer's form (a print broken over two lines)
runs as the print it was meant to be; a form with nothing to fill is left to fail."""

from __future__ import annotations

import pytest

from reckon.agent import Agent
from reckon.agent.checks._form_lines import print_form_lines
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, run

# Seen four times in a row on a question not written for the agent, with the hint
# beside it each time, until the answer gave up.
BROKEN = (
    "parent = 'DCG'\n"
    "active = [100, 25]\n"
    'print(f"@parent[name]: {parent}")\n'
    '@active[value]: {sum(active)}")\n'
)


def test_the_broken_print_runs_and_the_model_is_told(executor: KernelExecutor) -> None:
    model = ScriptedModel([code_reply(BROKEN), answer("@parent[DCG], @active[125]")])
    question = "Which parent, how many active? Answer as @parent[name], @active[value]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "@parent[DCG], @active[125]"
    step = next(s for s in outcome["steps"] if s["kind"] == "code")
    assert step["proposed"] == BROKEN and step["result"]["status"] == "ok"
    assert step["result"]["stdout"] == "@parent[name]: DCG\n@active[value]: 125\n"
    told = str(model.requests[1].messages[-1]["content"])
    assert "is the answer's form, not Python" in told
    assert outcome["grounding"]["numbers"][0]["computed"]


@pytest.mark.parametrize(
    "code",
    [
        "p = 0.01\n@is_normal[p < 0.05]\n",  # nothing to fill: its own text only
        "@lru[0]\ndef f():\n    return 1\n",  # a decorator, and the cell parses
        "x = 1\n@total[value]: {x}\nprint(x +)\n",  # still no Python after the form
        "@a[value] == 3\n",  # a comparison, not a value given
        "@total[value] = -3.5\n",  # a value typed out: the model's guess, not output
    ],
)
def test_other_cells_are_left_as_they_are(code: str) -> None:
    forms = print_form_lines(code)
    assert forms.code == code and forms.lines == () and forms.note() == ""


def test_an_indented_form_line_keeps_its_block() -> None:
    code = 'x = {"a": 2}\nif x:\n    @a[value]: {x["a"]}")\n'
    forms = print_form_lines(code)
    assert forms.code == 'x = {"a": 2}\nif x:\n    print(f"""@a[value]: {x["a"]}""")\n'
    assert forms.lines == ('@a[value]: {x["a"]}")',)


def test_a_form_given_a_value_prints_that_value(executor: KernelExecutor) -> None:
    """Seen twice in a row in a benchmark run: the form assigned to, as a variable."""
    code = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'Cluster': ['Utrecht', 'Drenthe'], 'density': [3.5, 1.2]})\n"
        "top = t.sort_values('density', ascending=False)\n"
        "@province[name] = top['Cluster'].values[0]\n"
    )
    model = ScriptedModel([code_reply(code), answer("@province[Utrecht]")])
    question = "Which province is densest? Answer as @province[name]."
    outcome = run(Agent(model, executor).ask(question, environment=executor.environment()))
    step = next(s for s in outcome["steps"] if s["kind"] == "code")
    assert step["result"]["stdout"] == "@province[name]: Utrecht\n"
    assert outcome["answer"] == "@province[Utrecht]"
