"""A label the question's rule decides from a computed number is decided by code, not
read off in prose (``checks/_decided``): the unit, and the loop against the real kernel."""

from __future__ import annotations

import re

import pytest

from reckon.agent import Agent
from reckon.agent.checks._decided import undecided_label
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run

NORMAL = (
    "Is the height column normally distributed? Use a normality test and call it "
    '"normal" if the p-value is greater than 0.05, otherwise "not normal". '
    "Answer as @normality[label]."
)
LINEAR = (
    "Is r between a and b strong? If the absolute r is at least 0.5 and p < 0.05 say "
    '"linear", if p < 0.05 and |r| < 0.5 say "nonlinear", else "none". '
    "Answer as @r[value] @kind[kind]."
)
SIGNIFICANT = (
    "Is the correlation significant at a significance level of 0.05? Answer true or "
    "false as @significant[flag]."
)
SKEW = (
    "Is the age column skewed? A skewness between -0.5 and 0.5 is symmetric, greater than "
    "0.5 skewed to the right and less than -0.5 skewed to the left. Answer as "
    '@skew[skewness] where "skewness" is a string that can be "symmetric", "skewed_right" '
    'or "skewed_left" based on the criteria.'
)
RAW = ("print(normaltest(x))", "NormaltestResult(statistic=1464.9, pvalue=0.0)\n")


@pytest.mark.parametrize(
    ("question", "answer_text", "cells", "flagged"),
    [
        # decided in prose, the test's raw result printed: sent back
        (NORMAL, "@normality[normal]", [RAW], "@normality[normal]"),
        # the output shows the other label: "normal" inside "not normal" does not count
        (NORMAL, "@normality[normal]", [("print(label)", "not normal\n")], "@normality[normal]"),
        (NORMAL, "@normality[not normal]", [("print(label)", "not normal\n")], None),
        (NORMAL, "@normality[Normal]", [("print(label)", "The data is normal.\n")], None),
        (LINEAR, "@r[0.83] @kind[linear]", [("print(r, kind)", "0.83 linear\n")], None),
        (LINEAR, "@r[0.83] @kind[linear]", [("print(r, kind)", "0.83 nonlinear\n")],
         "@kind[linear]"),
        (LINEAR, "@r[0.83] @kind[linear]", [("print(r, p)", "0.83 0.0\n")], "@kind[linear]"),
        (SIGNIFICANT, "@significant[true]", [("print(p < 0.05)", "True\n")], None),
        (SIGNIFICANT, "@significant[true]", [("print(p)", "0.0324\n")], "@significant[true]"),
        # not a label the question offers, or no rule over a number: left to other checks
        (NORMAL, "@normality[skewed]", [RAW], None),
        ('Which city is the largest, "Paris" or "Rome"? Answer as @city[name].',
         "@city[Paris]", [("print(top)", "12\n")], None),
        # a form the question does not ask for is not read
        (NORMAL, "@other[normal]", [RAW], None),
        # a number where the question names the labels that go there
        (SKEW, "@skew[-0.53]", [("print(skew(x))", "-0.53\n")], "@skew[-0.53], a number"),
        (SKEW, "@skew[skewed_left]", [("print(label)", "skewed_left\n")], None),
        (NORMAL, "@normality[0.0]", [RAW], None),  # no labels named for this form
    ],
)  # fmt: skip
def test_which_labels_were_decided_by_no_code(
    question: str, answer_text: str, cells: list[tuple[str, str]], flagged: str | None
) -> None:
    message = undecided_label(question, answer_text, cells)
    if flagged is None:
        assert message == ""
    elif flagged.endswith("a number"):
        assert message.startswith(f"Your answer gives {flagged}, where the question asks")
        assert '("symmetric", "skewed_right", "skewed_left")' in message
        assert message.endswith("ending with @skew[skewness] filled.")
    else:
        assert message.startswith(f"Your answer gives {flagged}, a label the question's rule")
        assert "in an if statement and print the label" in message
        # The form goes with it: seen, a right label decided again, then given in prose.
        assert message.endswith(
            "ending with " + " ".join(re.findall(r"@\w+\[\w+\]", question)) + " filled."
        )


def test_a_label_read_off_in_prose_is_decided_in_code(executor: KernelExecutor) -> None:
    """Seen in public benchmark questions: p = 0.0 printed, "normal" answered."""
    rows = "\n".join(str(v) for v in [1, 1, 1, 1, 2, 2, 3, 50, 60, 200] * 3)
    put_file(executor, "people.csv", "height\n" + rows + "\n")
    test = "from scipy.stats import normaltest\nprint(normaltest(df['height']))"
    decide = (
        "from scipy.stats import normaltest\np = normaltest(df['height']).pvalue\n"
        "print('normal' if p > 0.05 else 'not normal')"
    )
    model = ScriptedModel([code_reply(test), answer("@normality[normal]"),
                           code_reply(decide), answer("@normality[not normal]")])  # fmt: skip
    outcome = run(Agent(model, executor).ask(NORMAL, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "@normality[not normal]"
    told = model.requests[2].messages[-1]["content"]
    assert told.startswith("Your answer gives @normality[normal], a label the question's rule")
    kinds = [s["kind"] for s in outcome["steps"] if s.get("origin") != "reckon"]
    assert kinds == ["code", "recheck", "code", "answer"]
    # The message is Reckon's, not the person's: the question stays the one they asked.
    assert model.requests[3].messages[1]["content"] == NORMAL


def test_the_form_is_asked_for_again_after_code_ran_since(executor: KernelExecutor) -> None:
    """Seen: a right label in the form, sent back to be decided in code; the model ran
    its cell again and gave the label in prose, the form's message already spent."""
    rows = "\n".join(str(v) for v in [1, 1, 1, 1, 2, 2, 3, 50, 60, 200] * 3)
    put_file(executor, "people.csv", "height\n" + rows + "\n")
    test = "from scipy.stats import normaltest\nprint(normaltest(df['height']))"
    prose = "The heights are not normally distributed."
    model = ScriptedModel([code_reply(test), answer(prose), answer("@normality[not normal]"),
                           code_reply(test), answer(prose),
                           answer("@normality[not normal]")])  # fmt: skip
    outcome = run(Agent(model, executor).ask(NORMAL, environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "@normality[not normal]"
    told = [m.messages[-1]["content"] for m in model.requests[2:]]
    assert told[0].startswith("The question asks for the answer in the form @normality[label]")
    assert told[1].startswith("Your answer gives @normality[not normal], a label")
    assert told[3].startswith("The question asks for the answer in the form @normality[label]")
    assert len(model.requests) == 6
