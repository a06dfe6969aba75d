"""Recognising math questions. Only recognising: the sandbox does the math.

The agent never evaluates the user's text; it lifts the expression out of the
question and the generated code hands it to sympy inside the sandbox.
"""

from __future__ import annotations

import re

from reckon.agent.demo._intent import Intent

__all__ = ["parse_math"]

_FUNCTIONS = {
    "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "log", "ln",
    "exp", "pi", "e", "abs", "factorial", "oo", "i", "E", "I", "binomial", "gcd", "lcm",
}  # fmt: skip
_EXPRESSION = re.compile(r"^[\w\s+\-*/^().,!%]+$")
_WORDS = [
    (r"\bdivided by\b", "/"),
    (r"\bmultiplied by\b", "*"),
    (r"\btimes\b", "*"),
    (r"\bplus\b", "+"),
    (r"\bminus\b", "-"),
    (r"\bto the power of\b", "**"),
    (r"\bsquared\b", "**2"),
    (r"\bcubed\b", "**3"),
    (r"\bmod(?:ulo)?\b", "%"),
    (r"\bsquare root of\s+(\S+)", r"sqrt(\1)"),
    (r"(\d)\s*[x×]\s*(\d)", r"\1*\2"),
]
_LEAD = re.compile(
    r"^(?:please\s+)?(?:what(?:'s| is)|calculate|compute|evaluate|how much is|find|work out)\s+"
    r"(?:the\s+)?(?:value of\s+)?",
    re.IGNORECASE,
)

# Integrals (with bounds or without), then derivatives: (kind, pattern), in that order.
_CALCULUS = (
    (
        "integrate",
        re.compile(
            r"\b(?:integrate|integral of|antiderivative of)\s+(?P<expr>.+?)"
            r"(?:\s*d(?P<var>[a-z]))?(?:\s+from\s+(?P<lo>\S+)\s+to\s+(?P<hi>\S+))?\s*$",
            re.IGNORECASE,
        ),
    ),
    (
        "diff",
        re.compile(
            r"\b(?:derivative of|differentiate|d/d[a-z]\s*(?:of)?)\s+(?P<expr>.+?)"
            r"(?:\s+(?:with respect to|wrt)\s+(?P<var>[a-z]))?\s*$",
            re.IGNORECASE,
        ),
    ),
)


# "the mean of 3, 5 and 10": a statistic of numbers the question lists, the list last.
_STATISTICS = {
    "mean": "mean", "average": "mean", "median": "median", "sum": "sum", "total": "sum",
    "product": "product", "maximum": "max", "max": "max", "largest": "max", "minimum": "min",
    "min": "min", "smallest": "min", "standard deviation": "stdev", "variance": "variance",
    "range": "range",
}  # fmt: skip
_LISTED = r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?|-?\.\d+"
_STATISTIC = re.compile(
    rf"\b(?P<stat>{'|'.join(sorted(_STATISTICS, key=len, reverse=True))})\s+"
    rf"(?:value\s+)?of\s+(?:the\s+)?(?:numbers\s+|values\s+)?"
    rf"(?P<values>(?:{_LISTED})(?:\s*(?:,|and|&|,\s*and)\s*(?:{_LISTED}))+)$",
    re.IGNORECASE,
)
_PERCENT = re.compile(rf"^(?P<part>{_LISTED})\s*(?:%|percent)\s+of\s+(?P<whole>{_LISTED})$", re.I)


def parse_math(question: str) -> Intent | None:
    """A math ``Intent`` for ``question``, or ``None`` when it is not a math question."""
    text = question.strip().rstrip("?.! ")
    lowered = text.lower()
    if match := _STATISTIC.search(text):
        values = [v.replace(",", "") for v in re.findall(_LISTED, match.group("values"))]
        intent = Intent("math", question=question, math="statistic", expression=", ".join(values))
        intent.agg = _STATISTICS[match.group("stat").lower()]
        return intent
    if match := _PERCENT.match(_LEAD.sub("", text)):
        part, whole = (match.group(k).replace(",", "") for k in ("part", "whole"))
        intent = _math(question, "arith", f"{part}*{whole}/100")
        intent.value = f"{part}% of {whole}"
        return intent
    if match := re.search(r"\bis\s+(\d+)\s+(?:a\s+)?prime\b", lowered):
        return _math(question, "prime", match.group(1))
    for kind, pattern in _CALCULUS:
        if match := pattern.search(text):
            intent = _math(question, kind, match.group("expr"), var=match.group("var"))
            bounds = match.groupdict()  # an integral's, if it has them
            intent.lower, intent.upper = bounds.get("lo") or "", bounds.get("hi") or ""
            return intent if _plausible(intent.expression) else None
    if match := re.search(
        r"^(?:please\s+)?solve\s+(?:for\s+(?P<var1>[a-z])\s*:?\s+)?(?P<expr>.+?)"
        r"(?:\s+for\s+(?P<var>[a-z]))?\s*$",
        text,
        re.IGNORECASE,
    ):
        expression, _, rhs = match.group("expr").partition("=")
        var = match.group("var") or match.group("var1")
        intent = _math(question, "solve", expression, var=var)
        intent.rhs = _normalise(rhs.strip()) or "0"
        return intent if _plausible(intent.expression) else None
    for kind, words in (("factor", "factori[sz]e|factor"), ("simplify", "simplify"),
                        ("expand", "expand")):  # fmt: skip
        if match := re.search(rf"^(?:please\s+)?(?:{words})\s+(?P<expr>.+)$", text, re.I):
            intent = _math(question, kind, match.group("expr"))
            return intent if _plausible(intent.expression) else None
    expression = _normalise(_LEAD.sub("", text))
    arithmetic = _plausible(expression) and not _free_names(expression)
    if arithmetic and re.search(r"\d", expression) and re.search(r"[+\-*/^%!(]", expression):
        return _math(question, "arith", expression)
    return None


def _math(question: str, kind: str, expression: str, *, var: str | None = None) -> Intent:
    expression = _normalise(expression)
    names = _free_names(expression)
    variable = var or ("x" if "x" in names or not names else sorted(names)[0])
    return Intent("math", question=question, math=kind, expression=expression, variable=variable)


def _normalise(text: str) -> str:
    text = text.strip().rstrip("?.! ")
    for pattern, replacement in _WORDS:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    return text.replace("^", "**").replace("×", "*").replace("÷", "/").strip()


def _free_names(expression: str) -> set[str]:
    return {name for name in re.findall(r"[A-Za-z_]\w*", expression) if name not in _FUNCTIONS}


def _plausible(expression: str) -> bool:
    """Looks like a formula: math characters only and no prose words."""
    if not expression or not _EXPRESSION.match(expression):
        return False
    return all(len(name) <= 2 for name in _free_names(expression))
