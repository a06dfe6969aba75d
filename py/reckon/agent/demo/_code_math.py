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
