"""GradBench's saddle eval (examples/gradbench/saddle.py): the outer slope
differentiates an inner ascent that takes derivatives of f inside a
`while` loop with branches, the inner derivative passed to the ascent as an
argument. Each mode pair's slope against central differences of the inner
maximum's value; the four variants agree and find the saddle at the
origin."""

import pytest

from gradbench import saddle

POINTS = [(0.6, -0.3, 1.0, 1.0), (-1.2, 0.4, 0.5, -0.7)]


def central(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("variant", ["rr", "rf", "fr", "ff"])
def test_outer_slope_against_differences(variant):
    value = saddle.best_value_reverse if variant[1] == "r" else saddle.best_value_forward
    slope = saddle.outer_slope(variant[0], value)
    for args in POINTS:
        got = slope(*args)
        for k in (0, 1):
            assert got[k] == pytest.approx(central(value, args, k), rel=1e-6, abs=1e-8)


def test_every_variant_finds_the_saddle():
    found = [saddle.saddle(v) for v in ("rr", "rf", "fr", "ff")]
    for p, q in found:
        assert p == pytest.approx(found[0][0], abs=1e-12)
        assert q == pytest.approx(found[0][1], abs=1e-12)
        assert max(map(abs, p + q)) < 1e-4   # f's saddle is at the origin
