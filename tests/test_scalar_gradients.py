"""Every function of tests/corpus_scalar.py: the generated gradient against
central finite differences, and the generated source against sympy.diff."""

import inspect

import pytest

import corpus_scalar
import s2s_ad
from oracle import close, fd_gradient
from soak import soak

CASES = list(corpus_scalar.CASES.items())
IDS = [f.__name__ for f, _ in CASES]


def _nparams(f):
    return len(inspect.signature(f).parameters)


@pytest.mark.parametrize("f, points", CASES, ids=IDS)
def test_matches_finite_differences(f, points):
    wrt = tuple(range(len(points[0])))
    df = s2s_ad.grad(f, wrt=wrt)
    for p in points:
        got = df(*p)
        want = fd_gradient(f, list(p), list(wrt))
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert close(g, w), f"{f.__name__} at {p}: d/d{i} generated {g}, finite differences {w}"


SLOW_PROOFS = {"gelu_tanh": "8 s", "black_scholes_call": "3 s"}
"""sympy's time on these (seconds, shared machine); their gradients are
compared with finite differences above in every run, their proofs in the soak."""


@pytest.mark.parametrize("f, points", [soak(f, p) if f.__name__ in SLOW_PROOFS else (f, p)
                                       for f, p in CASES], ids=IDS)
def test_sympy_agrees(f, points):
    verdict = s2s_ad.check(f)
    assert verdict.status in ("proved", "agrees"), str(verdict)


PROVABLE = [corpus_scalar.seed, corpus_scalar.square, corpus_scalar.five_uses,
            corpus_scalar.shared_weight, corpus_scalar.augmented, corpus_scalar.rosenbrock2,
            corpus_scalar.logistic, corpus_scalar.gaussian_nll, corpus_scalar.hyperbolic,
            corpus_scalar.trig_mix, corpus_scalar.error_functions, corpus_scalar.lennard_jones]


@pytest.mark.parametrize("f", PROVABLE, ids=[f.__name__ for f in PROVABLE])
def test_simple_functions_are_proved(f):
    verdict = s2s_ad.check(f)
    assert verdict.status == "proved", str(verdict)


def test_seed_values():
    # y = a x², dy/da = x², dy/dx = 2ax: at a=3, x=2 these are 4 and 12 exactly.
    da, dx = s2s_ad.grad(corpus_scalar.seed, wrt=("a", "x"))(3.0, 2.0)
    assert (da, dx) == (4.0, 12.0)


def test_seed_scales_the_gradient():
    df = s2s_ad.grad(corpus_scalar.seed, wrt=None)
    seeded = df(3.0, 2.0, dy=0.5)
    plain = df(3.0, 2.0)
    assert seeded == tuple(0.5 * g for g in plain)


def test_value_and_grad_returns_the_value():
    vg = s2s_ad.value_and_grad(corpus_scalar.black_scholes_call, wrt=(0, 4))
    args = (100.0, 95.0, 0.5, 0.02, 0.25)
    value, grads = vg(*args)
    assert close(value, corpus_scalar.black_scholes_call(*args), rtol=1e-14)
    want = fd_gradient(corpus_scalar.black_scholes_call, list(args), [0, 4])
    assert all(close(g, w) for g, w in zip(grads, want))


def test_wrt_forms():
    f = corpus_scalar.seed
    assert s2s_ad.grad(f, wrt=1)(3.0, 2.0) == 12.0
    assert s2s_ad.grad(f, wrt="a")(3.0, 2.0) == 4.0
    assert s2s_ad.grad(f, wrt=("x",))(3.0, 2.0) == (12.0,)
    assert s2s_ad.grad(f, wrt=(-1, 0))(3.0, 2.0) == (12.0, 4.0)
    with pytest.raises(s2s_ad.WrtError, match="no parameter 'q'"):
        s2s_ad.grad(f, wrt="q")
    with pytest.raises(s2s_ad.WrtError, match="out of range"):
        s2s_ad.grad(f, wrt=5)


def test_defaults_and_keyword_only_parameters():
    df = s2s_ad.grad(corpus_scalar.defaults, wrt=("x", "y", "z"))
    got = df(0.4, z=2.0)
    # f = x*y + z*x with y=2 (default), z=2: (y + z, x, x)
    assert got == (4.0, 0.4, 0.4)


def test_unused_and_constant_results_have_zero_gradient():
    assert s2s_ad.grad(corpus_scalar.unused_param, wrt=1)(0.4, 3.0) == 0.0
    assert s2s_ad.grad(corpus_scalar.constant_result)(0.4) == 0.0
    assert s2s_ad.grad(corpus_scalar.identity)(0.4) == 1.0
