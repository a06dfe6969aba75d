"""Check the answer: the key number computed again by a different route, and compared.

After an answer, the agent asks the model (in the same conversation, with the
sandbox's state) to recompute the key number(s) another way — another method or
library call, or an independent ``run_sql`` query — and to reply with only
``@name[value]`` pairs. The verdict compares those values with the numbers the
answer quotes, to the precision the answer shows them:

- ``confirmed``: every recomputed value matches a number of the answer;
- ``disagrees``: one does not (both computations are in the result);
- ``unavailable``: the check ran nothing usable (no number, a failure, a stop).
"""

from __future__ import annotations

import re

from reckon.agent._types import JSONDict

__all__ = ["VERIFY_HEADER", "compare", "key_pairs", "verification", "verification_prompt"]

VERIFY_HEADER = "Verification request:"
_PAIR = re.compile(r"@([A-Za-z_][\w.-]*)\[([^\]]*)\]")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?")


def verification_prompt(answer: str) -> str:
    return (
        f"{VERIFY_HEADER} check the key number of your last answer by a different route.\n"
        f"Your answer was:\n{answer}\n\n"
        "Compute the key number(s) again without reusing the code or the variables from "
        "before: use another method or library call, or an independent run_sql query. "
        "Then reply with only the recomputed value(s) as @name[value] pairs, using the same "
        "names as your answer if it had any (for example @mean_price[25.5]). If the answer "
        "has no number to check, reply @none[]."
    )


def _shown(text: str) -> dict[str, tuple[float, int]]:
    """Each numeric ``@name[value]`` pair: its value and the decimals it was shown with."""
    pairs: dict[str, tuple[float, int]] = {}
    for name, raw in _PAIR.findall(text):
        claims = _claims(raw)
        if claims:
            pairs[name] = claims[0]
    return pairs


def key_pairs(text: str) -> dict[str, float]:
    """The numeric ``@name[value]`` pairs of ``text`` (later ones win)."""
    return {name: value for name, (value, _) in _shown(text).items()}


def _claims(answer: str) -> list[tuple[float, int]]:
    """Each number quoted in the answer, with the decimals it was shown with."""
    claims = []
    for token in _NUMBER.findall(answer):
        digits = token.replace(",", "")
        try:
            value = float(digits)
        except ValueError:
            continue
        decimals = len(digits.split(".", 1)[1]) if "." in digits and "e" not in digits else 0
        claims.append((value, decimals))
    return claims


def _matches(recomputed: float, claimed: float, decimals: int) -> bool:
    # The answer may round: 64103.25 quoted as 64103.2 or 64103 still agrees.
    tolerance = 0.5 * 10.0 ** (-decimals) + 1e-9 * max(1.0, abs(claimed))
    return abs(recomputed - claimed) <= tolerance


def compare(answer: str, check: str) -> JSONDict:
    """The verdict for ``answer`` given the check's reply (see the module docstring)."""
    recomputed = key_pairs(check)
    if not recomputed:
        return {"status": "unavailable", "recomputed": {},
                "message": "the check gave no number to compare"}  # fmt: skip
    shown = _shown(answer)
    claims = _claims(_PAIR.sub(" ", answer)) + list(shown.values())
    mismatches = []
    for name, value in recomputed.items():
        if name in shown:
            agrees = _matches(value, *shown[name])
        else:
            agrees = any(_matches(value, c, d) for c, d in claims)
        if not agrees:
            mismatches.append(name)
    status = "disagrees" if mismatches else "confirmed"
    claimed = {name: value for name, (value, _) in shown.items()}
    verdict: JSONDict = {"status": status, "recomputed": recomputed, "claimed": claimed}
    if mismatches:
        verdict["mismatches"] = mismatches
    return verdict


def verification(outcome: JSONDict, check: JSONDict) -> JSONDict:
    """The record of ``check``, the answer recomputed another way, against ``outcome``."""
    original = [s["code"] for s in outcome["steps"] if s.get("kind") == "code"]
    computations = {
        "original": {"code": original, "answer": outcome["answer"]},
        "check": {"code": [s["code"] for s in check["steps"] if s.get("kind") == "code"],
                  "answer": check["answer"], "steps": check["steps"]},
    }  # fmt: skip
    if check["status"] != "ok":
        message = f"the check did not finish: {check.get('message', check['status'])}"
        return {"status": "unavailable", "message": message, **computations}
    return {**compare(outcome["answer"], check["answer"]), **computations}
