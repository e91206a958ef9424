"""Chained comparisons, nested unpacking, starred arguments and tuples,
sum with a start, sum of an array, math.fsum/prod/dist/lgamma/gamma and
tuple targets with subscripts: against central differences, through grad,
vjp, a helper, a loop, sympy (check) and the CLI."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
import syntax_src as s
from array_oracle import fd_gradient as array_fd
from modules import run_generated
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

SCALAR = [s.chained, s.chained_in_loop, s.nested_unpack, s.starred, s.sums, s.gammas,
          s.calls_them_all, s.in_a_loop]
POINTS = [(0.7, 1.3), (1.6, 0.4), (2.4, 0.9)]


@pytest.mark.parametrize("fn", SCALAR, ids=lambda f: f.__name__)
def test_against_finite_differences(fn):
    df = s2s_ad.grad(fn, wrt=(0, 1))
    for point in POINTS:
        got = df(*point)
        want = fd_gradient(fn, list(point), [0, 1])
        assert all(close(g, w, rtol=1e-6, atol=1e-7) for g, w in zip(got, want)), \
            (fn.__name__, point, got, want)


@pytest.mark.parametrize("fn", SCALAR[:6], ids=lambda f: f.__name__)
def test_through_vjp(fn):
    value, pull = s2s_ad.vjp(fn, 0.7, 1.3)
    assert close(value, fn(0.7, 1.3))
    want = fd_gradient(fn, [0.7, 1.3], [0, 1])
    assert all(close(g, 3.0 * w) for g, w in zip(pull(3.0), want))


@pytest.mark.parametrize("fn", [s.sums, s.gammas, s.nested_unpack, s.chained],
                         ids=lambda f: f.__name__)
def test_sympy_proves_them(fn):
    verdict = s2s_ad.check(fn, at={"x": 0.7, "y": 1.3})
    assert verdict.status in ("proved", "agrees"), str(verdict)


def test_sum_of_an_array_and_tuple_subscript_targets():
    rng = np.random.default_rng(2)
    w = rng.normal(size=(3, 2))
    np.testing.assert_allclose(s2s_ad.grad(s.sum_of_array)(w), array_fd(s.sum_of_array, [w], 0),
                               rtol=1e-5)
    x = rng.normal(size=4)
    np.testing.assert_allclose(s2s_ad.grad(s.tuple_subscript_targets)(x),
                               array_fd(s.tuple_subscript_targets, [x], 0), rtol=1e-5)


def test_lgamma_at_negative_and_large_arguments():
    # ln|Γ| has derivative ψ for negative non-integers too
    for x in (-2.3, -0.4, 0.05, 40.0):
        got = s2s_ad.grad(s.gammas)(x, 0.8)
        assert close(got, fd_gradient(s.gammas, [x, 0.8], [0])[0], rtol=1e-6), x


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "g_syntax.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "syntax_src.in_a_loop",
                           "--wrt", "x,y", "-o", str(out)], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = run_generated(tmp_path, "g_syntax", "grad_in_a_loop", (0.7, 1.3))
    want = fd_gradient(s.in_a_loop, [0.7, 1.3], [0, 1])
    assert all(close(float(g), w) for g, w in zip(got, want))


def test_refusals_are_located(tmp_path):
    from modules import import_source
    mod = import_source(tmp_path, "def f(x):\n    t = x * 2.0\n    return max(*t)\n", "bad_star")
    with pytest.raises(s2s_ad.SourceError, match="tuple or list built in the function") as info:
        s2s_ad.grad(mod.f)
    assert (info.value.line, info.value.col) == (3, 15)
