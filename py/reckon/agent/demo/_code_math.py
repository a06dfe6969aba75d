"""The sympy cells the demo model writes for math questions.

The expression travels as a string literal and is parsed by sympy inside the
sandbox, so nothing the user typed is ever evaluated by the agent itself.
"""

from __future__ import annotations

from reckon.agent.demo._intent import Intent

__all__ = ["math_code"]


def math_code(intent: Intent, *, attempt: int = 0) -> str:
    """A sympy cell for a math intent; attempt 1 parses leniently ("2x" means 2*x)."""
    if attempt == 0:
        head = "import sympy as sp\n\n"
        parse = "sp.sympify"
    else:
        # Second try: a parser that accepts implicit multiplication ("2x", "x y").
        head = (
            "import sympy as sp\nfrom sympy.parsing.sympy_parser import (\n"
            "    parse_expr, standard_transformations, implicit_multiplication_application,\n"
            "    convert_xor)\n\n"
            "def parse(text):\n"
            "    rules = standard_transformations + (implicit_multiplication_application,"
            " convert_xor)\n"
            "    return parse_expr(text, transformations=rules)\n\n"
        )
        parse = "parse"
    if intent.math == "statistic":
        return _statistic_code(intent)
    expr = f"{parse}({intent.expression!r})"
    var = f"var = sp.Symbol({intent.variable!r})\n"
    kind = intent.math
    if kind == "prime":
        return (
            head
            + f"""\
n = {int(intent.expression)}
print("prime:", sp.isprime(n))
if n > 1 and not sp.isprime(n):
    parts = [f"{{p}}^{{k}}" if k > 1 else str(p) for p, k in sp.factorint(n).items()]
    print("factors:", " * ".join(parts))
"""
        )
    if kind == "integrate":
        if intent.lower and intent.upper:
            bounds = f"(var, {parse}({intent.lower!r}), {parse}({intent.upper!r}))"
            return (
                head
                + var
                + f"""\
result = sp.integrate({expr}, {bounds})
print("integral:", result)
if not result.is_Integer:
    print("decimal:", sp.N(result, 12))
"""
            )
        return head + var + f'print("antiderivative:", sp.integrate({expr}, var))\n'
    if kind == "diff":
        return head + var + f'print("derivative:", sp.simplify(sp.diff({expr}, var)))\n'
    if kind == "solve":
        return (
            head
            + var
            + f"""\
solutions = sp.solve(sp.Eq({expr}, {parse}({intent.rhs!r})), var)
print("solutions:", len(solutions))
for s in solutions:
    print(f"  {{var}}: {{s}}")
"""
        )
    if kind == "factor":
        return (
            head
            + f"""\
value = {expr}
if value.is_Integer:
    parts = [f"{{p}}^{{k}}" if k > 1 else str(p) for p, k in sp.factorint(value).items()]
    print("factors:", " * ".join(parts))
else:
    print("factors:", sp.factor(value))
"""
        )
    if kind in {"simplify", "expand"}:
        return head + f'print("{kind}:", sp.{kind}({expr}))\n'
    return (
        head
        + f"""\
value = {expr}
print("result:", value)
if not value.is_Integer:
    print("decimal:", sp.N(value, 15))
"""
    )


# Fractions keep a mean of whole numbers exact (6.333… shown as 19/3 too).
_STATISTIC_CODE = {
    "mean": "statistics.mean(values)",
    "median": "statistics.median(values)",
    "sum": "sum(values)",
    "product": "math.prod(values)",
    "max": "max(values)",
    "min": "min(values)",
    "range": "max(values) - min(values)",
    "stdev": "statistics.stdev(values)",
    "variance": "statistics.variance(values)",
}


def _statistic_code(intent: Intent) -> str:
    """A cell that works out a statistic of the numbers the question listed."""
    values = ", ".join(f"Fraction({v!r})" for v in intent.expression.split(", "))
    imports = "import math\n" if intent.agg == "product" else ""
    lines = [
        f"{imports}import statistics\nfrom fractions import Fraction\n",
        f"values = [{values}]",
        f"result = {_STATISTIC_CODE[intent.agg]}",
        'print("result:", result)',
        'print("decimal:", float(result))' if intent.agg not in {"stdev"} else "",
    ]
    if intent.agg == "stdev":
        # stdev of Fractions is a float already: say which one it is, and the other.
        lines[-1] = 'print("population:", statistics.pstdev(values))'
    elif intent.agg == "variance":
        lines.append('print("population:", statistics.pvariance(values))')
    return "\n".join(line for line in lines if line) + "\n"
