"""The demo model's answers to math questions, from what the sympy or statistics cell
printed (``_code_math``)."""

from __future__ import annotations

from reckon.agent.demo._intent import Intent

__all__ = ["math_answer"]


def math_answer(intent: Intent, fields: dict[str, str], items: list[tuple[str, str]]) -> str:
    """The answer to a math question from what its cell printed (``fields``: ``name:
    value`` lines, ``items``: the indented ones)."""
    kind = intent.math
    expression = intent.expression
    if kind == "prime" and "prime" in fields:
        if fields["prime"] == "True":
            return f"Yes, {expression} is prime."
        factors = f" ({expression} = {fields['factors']})" if "factors" in fields else ""
        return f"No, {expression} is not prime{factors}."
    if kind == "integrate" and "integral" in fields:
        bounds = f"from {intent.lower} to {intent.upper}"
        text = f"The integral of {expression} {bounds} is {fields['integral']}"
        decimal = fields.get("decimal")
        return text + (f" ≈ {decimal}." if decimal and decimal != fields["integral"] else ".")
    if kind == "integrate" and "antiderivative" in fields:
        return f"An antiderivative of {expression} is {fields['antiderivative']} + C."
    if kind == "diff" and "derivative" in fields:
        var = intent.variable
        return f"The derivative of {expression} with respect to {var} is {fields['derivative']}."
    if kind == "solve" and "solutions" in fields:
        if not items:
            return f"{expression} = {intent.rhs} has no solutions for {intent.variable}."
        listed = " or ".join(f"{k} = {v}" for k, v in items)  # items are "  x: -2" lines
        return f"The solutions of {expression} = {intent.rhs} are {listed}."
    if kind == "factor" and "factors" in fields:
        return f"{expression} = {fields['factors']}."
    if kind in {"simplify", "expand"} and kind in fields:
        word = "Simplified" if kind == "simplify" else "Expanded"
        return f"{word}, {expression} is {fields[kind]}."
    if kind == "statistic" and "result" in fields:
        return _statistic_answer(intent, fields)
    if "result" in fields:
        decimal = fields.get("decimal")
        shown = intent.value or expression  # "15% of 80", not the product it became
        return f"{shown} = {fields['result']}" + (f" ≈ {decimal}." if decimal else ".")
    return ""


_STATISTIC_NAMES = {
    "mean": "mean", "median": "median", "sum": "sum", "product": "product", "max": "largest",
    "min": "smallest", "range": "range", "stdev": "sample standard deviation",
    "variance": "sample variance",
}  # fmt: skip


def _statistic_answer(intent: Intent, fields: dict[str, str]) -> str:
    *first, last = intent.expression.split(", ")
    listed = f"{', '.join(first)} and {last}"
    result, decimal = fields["result"], fields.get("decimal", "")
    exact = _decimal_places(decimal, 6) if decimal else ""
    value = result if not exact or exact == result else f"{result} ≈ {exact}"
    text = f"The {_STATISTIC_NAMES[intent.agg]} of {listed} is {value}."
    population = fields.get("population")
    if population:
        text += f" (Over the whole population rather than a sample: {population}.)"
    return text


def _decimal_places(text: str, places: int) -> str:
    """``text`` (a float as printed) to at most ``places`` decimals, no trailing zeros."""
    try:
        rounded = f"{float(text):.{places}f}".rstrip("0").rstrip(".")
    except ValueError:
        return text
    return rounded
