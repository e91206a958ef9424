"""The variants benchmarks/workloads_floors.py times to show the floor under
two targets are derivatives of the benchmark's functions: each against
central differences (and the value of each JVP against the function). A wrong
variant would show a floor that is not there."""

import math
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import workloads_floors as wf  # noqa: E402
from workloads_loops import HORNER_ARGS, PREFIX_ARGS, horner, prefix_writes  # noqa: E402

H = 1e-6


@pytest.mark.parametrize("variant", [wf.horner_mixed, wf.horner_mixed_appends])
@pytest.mark.parametrize("x", [HORNER_ARGS[1], -0.6, 1.1])
def test_horner_gradient_variants(variant, x):
    c = HORNER_ARGS[0][:40]
    dc, dx = variant(c, x)
    assert len(dc) == len(c)
    for i in (0, 1, 17, len(c) - 2, len(c) - 1):
        up, down = list(c), list(c)
        up[i] += H
        down[i] -= H
        assert dc[i] == pytest.approx((horner(up, x) - horner(down, x)) / (2 * H),
                                      rel=1e-6, abs=1e-7)
    assert dx == pytest.approx((horner(c, x + H) - horner(c, x - H)) / (2 * H), rel=1e-6)


@pytest.mark.parametrize("variant", [wf.prefix_writes_jvp_comprehensions,
                                     wf.prefix_writes_jvp_locals])
def test_list_by_index_jvp_variants(variant):
    xs, a = PREFIX_ARGS[0][:50], 0.9
    dxs = [math.cos(1.7 * k) for k in range(len(xs))]
    da = -0.4
    value, tangent = variant(xs, a, dxs, da)
    assert value == pytest.approx(prefix_writes(xs, a), rel=1e-12)

    def moved(h):
        return prefix_writes([x + h * d for x, d in zip(xs, dxs)], a + h * da)

    assert tangent == pytest.approx((moved(H) - moved(-H)) / (2 * H), rel=1e-6)
