"""Loop-invariant arithmetic is computed once, before the loop, and never taped per iteration."""
import math

import pytest

import s2s_ad
from s2s_ad import api, ir
from s2s_ad.frontend import hoist
from tests import hoist_src


def _fd(f, args, i, h=1e-6):
    up, dn = list(args), list(args)
    up[i] += h
    dn[i] -= h
    return (f(*up) - f(*dn)) / (2 * h)


@pytest.mark.parametrize("name,args", [
    ("decay", (1.5, 0.7)),
    ("chain", (0.3, 1.2, -0.8)),
    ("in_while", (2.0, 0.5)),
    ("in_branch", (1.0, 0.3)),
    ("in_branch", (-1.0, 0.3)),
])
def test_gradient_matches_finite_differences(name, args):
    f = getattr(hoist_src, name)
    g = s2s_ad.grad(f, wrt=None)(*args)
    g = g if isinstance(g, tuple) else (g,)
    for i, gi in enumerate(g):
        assert gi == pytest.approx(_fd(f, args, i), rel=1e-6, abs=1e-8)


def _loop_ops(func):
    loop = next(n for n in func.body.ops if isinstance(n, (ir.For, ir.While)))
    return [n.prim for n in ir.walk(loop.body) if isinstance(n, ir.Op)]


def test_invariant_op_leaves_the_loop_and_the_tape():
    func = api.lower(hoist_src.decay)
    assert "neg" in _loop_ops(func)
    hoist.run(func)
    assert "neg" not in _loop_ops(func)
    text = s2s_ad.gradient_source(hoist_src.decay, wrt="k")
    assert "t1_tape" not in text and "records 1 value per iteration (x_1)" in text


def test_ops_that_may_raise_stay_in_a_loop_that_may_not_run():
    func = api.lower(hoist_src.zero_trips)
    hoist.run(func)
    assert {"div", "math.log"} <= set(_loop_ops(func))
    # zero trips: the function never divides by y = 0, nor does its gradient
    assert hoist_src.zero_trips(1.0, 0.0, 0) == 1.0
    assert s2s_ad.grad(hoist_src.zero_trips, wrt=("x", "y"))(1.0, 0.0, 0) == (1.0, 0.0)
    g = s2s_ad.grad(hoist_src.zero_trips, wrt="y")(1.0, 2.0, 3)
    assert g == pytest.approx(3 * (-1 / 4 + 1 / 2))


def test_chain_of_invariants_moves_together():
    func = api.lower(hoist_src.chain)
    hoist.run(func)
    ops = _loop_ops(func)
    assert "sub" not in ops and "abs" not in ops
    assert math.isfinite(s2s_ad.grad(hoist_src.chain, wrt="a")(0.3, 1.2, -0.8))
