"""forward/scaling.py: constant factors of a tangent gathered only where the
result is the same bit for bit; the JVPs that use it against independent
references (hand-written derivatives, central differences)."""

import ast
import math
import random

import pytest

import s2s_ad
from s2s_ad.forward import scaling

CASES = [
    ("g * (2 * t) * 100.0", "g * t * 200.0"),
    ("g * (t * 0.5) * 3.0", "g * t * 1.5"),
    ("-g * (2 * t)", "g * t * -2"),
    ("2.0 * (g * x) * 0.1", "g * x * 0.2"),
    ("g * (3 * t)", "g * (3 * t)"),            # 3 is not a power of two: left alone
    ("g * (2 * t) * c", "g * t * 2 * c"),     # c a name: the factor stays
]


@pytest.mark.parametrize("before, after", CASES)
def test_rewrites(before, after):
    assert ast.unparse(scaling.run(ast.parse(before, mode="eval").body)) == after


@pytest.mark.parametrize("before, after", CASES)
def test_same_number_bit_for_bit(before, after):
    rng = random.Random(7)
    for _ in range(2000):
        env = {k: rng.uniform(-1e3, 1e3) * 10 ** rng.randint(-8, 8) for k in "gtxc"}
        assert eval(before, env) == eval(after, env)
        env["g"] = -0.0
        assert math.copysign(1, eval(before, env)) == math.copysign(1, eval(after, env))


def rosen3(x0, x1, x2):
    return 100.0 * (x1 - x0 * x0) ** 2 + (1.0 - x0) ** 2 + 100.0 * (x2 - x1 * x1) ** 2 \
        + (1.0 - x1) ** 2


def rosen3_grad(x0, x1, x2):
    return (-400.0 * x0 * (x1 - x0 * x0) - 2.0 * (1.0 - x0),
            200.0 * (x1 - x0 * x0) - 400.0 * x1 * (x2 - x1 * x1) - 2.0 * (1.0 - x1),
            200.0 * (x2 - x1 * x1))


def test_jvp_with_gathered_factors_against_the_hand_written_gradient():
    assert "* 200.0" in s2s_ad.jvp_source(rosen3)
    j = s2s_ad.jvp(rosen3)
    rng = random.Random(3)
    for _ in range(20):
        x = [rng.uniform(-2, 2) for _ in range(3)]
        d = [rng.uniform(-1, 1) for _ in range(3)]
        value, tangent = j(*x, dx0=d[0], dx1=d[1], dx2=d[2])
        want = sum(g * v for g, v in zip(rosen3_grad(*x), d))
        assert value == rosen3(*x)
        assert math.isclose(tangent, want, rel_tol=1e-12, abs_tol=1e-9)


def damped(x, a, n):
    for i in range(n):
        x = x + 0.01 * (a * math.sin(x) - x * x * 0.1)
    return x


def test_jvp_in_a_loop_against_central_differences():
    j = s2s_ad.jvp(damped)
    _, t = j(0.3, 1.7, 50, dx=0.5, da=-0.25)
    h = 1e-6
    fd = (damped(0.3 + 0.5 * h, 1.7 - 0.25 * h, 50) - damped(0.3 - 0.5 * h, 1.7 + 0.25 * h, 50)) \
        / (2 * h)
    assert math.isclose(t, fd, rel_tol=1e-7)
