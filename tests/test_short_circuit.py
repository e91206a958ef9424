"""`and`/`or` and conditional expressions nested in each other's operands.

Each operand after the first of ``a and b`` / ``a or b`` is evaluated only when
needed, and may itself hold a conditional expression or another short-circuit;
each is lowered in the branch that evaluates it. These programs were taken as
constants (a wrong gradient) or crashed while lowering (KeyError) before.
Gradients against central differences, at top level, inside a helper, in a loop
and through ``vjp``; ``check`` must not prove a wrong derivative.
"""

import math

import pytest

import s2s_ad
from array_oracle import make_function
from oracle import close, fd_gradient

PROGRAMS = {
    "or_ifexp": ("""
def f(x, y):
    if (x > 1.0) or ((x if x < 0.0 else 1.5) < 0.2):
        y = x * 3.0
    return y
""", [(0.5, 2.0), (1.5, 2.0), (-0.5, 2.0)]),
    "and_ifexp": ("""
def f(x, y):
    if (x > 1.0) and ((x if x < 2.0 else -1.5) > 0.2):
        y = x * 3.0
    return y
""", [(0.5, 2.0), (1.5, 2.0), (2.5, 2.0)]),
    "nested_ifexp": ("""
def f(x, y):
    return x * y if x > 0.0 else (x * 2.0 if x < -1.0 else x * y * 3.0)
""", [(0.5, 2.0), (-0.5, 2.0), (-2.0, 2.0)]),
    "or_inside_ifexp_inside_or": ("""
def f(x, y):
    if (x > 1.0) or ((x if (x < 0.2) or (x < 0.1) else 2.0) > 0.2):
        y = x * y
    return y
""", [(0.5, 2.0), (0.15, 2.0), (1.5, 2.0)]),
    "clamp_reassigns_itself": ("""
def f(t, y):
    t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
    return t * t * y
""", [(-0.5, 2.0), (0.5, 2.0), (1.5, 2.0)]),
    "while_condition": ("""
def f(x, y):
    while (x < 3.0) and ((y if y > 0.0 else -y) < 10.0):
        x = x + 1.0
        y = y * 1.5
    return x * y
""", [(0.5, 2.0), (0.5, -3.0), (2.5, 20.0)]),
    "and_or_value": ("""
def f(x, y):
    a = x > 0.0 and y > 0.0 or x < -1.0
    if a:
        return x * y
    return x + y
""", [(1.0, 2.0), (-2.0, 3.0), (0.5, -1.0)]),
    "three_operands": ("""
def f(x, y):
    if x > 0.0 and (y if x > 1.0 else -y) > 0.0 and math.sin(x) > 0.1:
        return math.exp(x) * y
    return x - y
""", [(0.5, -2.0), (1.5, 2.0), (0.05, -1.0), (-1.0, 1.0)]),
}


# The helper and loop forms call ``g`` at the drawn point itself: a point
# moved across one of the branch boundaries would test another branch.
def as_helper(source: str) -> str:
    return (source.replace("def f(", "def g(")
            + "\ndef f(x, y):\n    return 2.0 * g(x, y) + x\n")


def in_loop(source: str) -> str:
    return (source.replace("def f(", "def g(")
            + "\ndef f(x, y):\n    s = 0.0\n    for k in range(3):\n"
              "        s = s + g(x, y) * (k + 1.0)\n    return s\n")


FORMS = {"top_level": lambda s: s, "helper": as_helper, "loop": in_loop}


def assert_close(got, ref):
    assert all(close(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(got, ref)), (got, ref)


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_matches_finite_differences(name, form):
    source, points = PROGRAMS[name]
    f = make_function(FORMS[form](source), env={"math": math})
    df = s2s_ad.grad(f, wrt=None)
    for point in points:
        assert_close(df(*point), fd_gradient(f, list(point), [0, 1]))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vjp_scales_the_same_gradient(name):
    source, points = PROGRAMS[name]
    f = make_function(source, env={"math": math})
    for point in points:
        value, pull = s2s_ad.vjp(f, *point)
        assert close(value, f(*point))
        assert_close(pull(0.5), [0.5 * g for g in fd_gradient(f, list(point), [0, 1])])


def test_check_does_not_prove_the_constant_reading():
    # Before the fix, `and` with a conditional expression in its second operand
    # was lowered as a constant and `check` said PROVED for `return 0.0, dy`.
    f = make_function(PROGRAMS["and_ifexp"][0])
    verdict = s2s_ad.check(f, at={"x": 1.5, "y": 2.0})
    assert verdict.status == "proved"
    assert_close(s2s_ad.grad(f, wrt=None)(1.5, 2.0), (3.0, 0.0))
