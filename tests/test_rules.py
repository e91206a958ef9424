"""Every entry of the rule table against sympy.diff of its forward template."""

import ast
import random

import pytest
import sympy

from s2s_ad import verify
from s2s_ad.rules import RULES
from s2s_ad.rules.numpy import NUMPY_RULES
from s2s_ad.rules.numpy_more import NUMPY_MORE_RULES
from s2s_ad.rules import scalar as scalar_rules
from s2s_ad.rules.own import OWN_RULES

# NumPy rules are checked on arrays, against finite differences and sympy, in
# tests/test_numpy_rules.py, and the rules of s2s-ad's own NumPy helpers in
# tests/test_closure_numpy.py; this file checks the scalar table.
SCALAR = [r for r in RULES.values()
          if r.prim not in {n.prim for n in NUMPY_RULES + NUMPY_MORE_RULES + OWN_RULES}]
from s2s_ad.rules.control import CONTROL_RULES

# List reads and boolean logic are not numeric functions of floats.
SCALAR = [r for r in SCALAR if r not in CONTROL_RULES]

X, Y = sympy.symbols("x y", real=True)
SYMBOLS = (X, Y)


def _evaluate(template: ast.expr, env: dict, point: dict):
    """Evaluate a template on sympy values; comparisons decided at ``point``."""
    branches = verify._Branches(point)
    namespace = {"math": verify.sympy_math(), **branches.namespace(), **verify.SYMPY_HELPERS,
                 **env}
    tree = ast.Expression(verify._Comparisons().visit(ast.parse(ast.unparse(template), mode="eval").body))
    return eval(compile(ast.fix_missing_locations(tree), "<rule>", "eval"), namespace)


def _domain(rule, i):
    d = rule.domain
    return d[i] if isinstance(d[0], tuple) else d


DIFFERENTIABLE = [r for r in SCALAR if any(p is not None for p in r.partials)]


@pytest.mark.parametrize("rule", DIFFERENTIABLE, ids=[r.prim for r in DIFFERENTIABLE])
def test_partials_match_sympy(rule):
    rng = random.Random(rule.prim)
    args = SYMBOLS[:rule.arity]
    for _ in range(4):
        # A sample point inside the rule's domain decides any comparison
        # (max/min); the symbolic comparison then holds around that point.
        point = {s: sympy.Rational(round(rng.uniform(*_domain(rule, i)) * 1000), 1000)
                 for i, s in enumerate(args)}
        env = dict(zip("xy", args))
        forward = _evaluate(rule.forward_ast, env, point)
        env["out"] = forward
        for i, partial in enumerate(rule.partial_asts):
            if partial is None:
                continue
            want = sympy.diff(forward, args[i])
            got = _evaluate(partial, env, point)
            difference = sympy.simplify(want - got)
            if difference != 0:
                value = difference.subs(point).evalf(50)
                assert abs(value) < 1e-40, f"{rule.prim} ∂/∂{'xy'[i]}: sympy {want}, rule {got}"


INTS = [r for r in SCALAR if r.domain == scalar_rules.INTS]


@pytest.mark.parametrize("rule", INTS, ids=lambda r: r.prim)
def test_functions_of_ints(rule):
    """A function of ints (``math.comb``): Python's value at ints, an int;
    a float raises TypeError, as Python's does (no value to differentiate)."""
    import math
    code = compile(ast.Expression(rule.forward_ast), "<rule>", "eval")
    rng = random.Random(rule.prim)
    for _ in range(20):
        vals = [rng.randint(*_domain(rule, i)) for i in range(rule.arity)]
        got = eval(code, {"math": math}, dict(zip("xy", vals)))
        assert type(got) is int
        assert got == getattr(math, rule.prim.split(".")[1])(*vals)
    with pytest.raises(TypeError):
        eval(code, {"math": math}, dict(zip("xy", [2.5] * rule.arity)))


@pytest.mark.parametrize("rule", [r for r in SCALAR if all(p is None for p in r.partials)
                                  and r not in INTS], ids=lambda r: r.prim)
def test_zero_rules_are_piecewise_constant(rule):
    """A rule that propagates nothing must have a zero derivative wherever
    one exists: check at random points with a central difference."""
    import math
    namespace = {"math": math}
    rng = random.Random(rule.prim)
    code = compile(ast.Expression(rule.forward_ast), "<rule>", "eval")
    for _ in range(20):
        # (an operand whose domain is ints, `round`'s ndigits, an int)
        ints = [all(type(b) is int for b in _domain(rule, i)) for i in range(rule.arity)]
        vals = [rng.randint(*_domain(rule, i)) if ints[i] else rng.uniform(0.1, 3.0)
                for i in range(rule.arity)]
        for i in range(rule.arity):
            if ints[i]:
                continue
            h = 1e-9
            up, down = list(vals), list(vals)
            up[i] += h
            down[i] -= h
            f_up = eval(code, namespace, dict(zip("xy", up)))
            f_down = eval(code, namespace, dict(zip("xy", down)))
            # Away from a jump the function is flat; at a jump (rare at
            # random points) the difference is not small but is not a slope.
            assert f_up == f_down or abs(f_up - f_down) > 1e-6


def test_every_math_function_with_a_derivative_has_a_rule():
    wanted = """sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1
    log log2 log10 log1p sqrt cbrt pow hypot erf erfc fabs""".split()
    missing = [n for n in wanted if f"math.{n}" not in RULES]
    assert not missing
    for b in ("abs", "min", "max", "pow", "add", "sub", "mul", "div", "neg"):
        assert b in RULES


def test_rules_parse():
    for r in RULES.values():
        assert r.forward_ast is not None
        assert len(r.partial_asts) == r.arity


def test_the_digamma_helper_against_mpmath():
    """s2s_digamma (the derivative of math.lgamma in generated modules) is
    numeric code of its own: compare it with mpmath's digamma, across the
    recurrence, the asymptotic series and the reflection."""
    import math

    import mpmath

    from s2s_ad.rules.scalar import SCALAR_HELPERS
    namespace = {"math": math}  # (the module defining it imports math at its top)
    exec(SCALAR_HELPERS["s2s_digamma"], namespace)
    digamma = namespace["s2s_digamma"]
    for x in (1e-3, 0.3, 0.5, 1.0, 2.5, 7.9, 10.0, 13.7, 150.0, 1e6, -0.5, -2.3, -7.75):
        want = float(mpmath.digamma(x))
        assert math.isclose(digamma(x), want, rel_tol=2e-14, abs_tol=1e-14), (x, digamma(x), want)
    assert math.isnan(digamma(-3.0)) and math.isnan(digamma(0.0))
