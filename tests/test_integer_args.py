"""A parameter passed to a helper that uses it as an integer (a range
bound, a list index) has no derivative in the caller either
(s2s_ad/frontend/integer_args.py): ``grad(..., wrt=...)`` naming it is
refused, located at the call; ``wrt=None`` leaves it out; ``vjp`` returns
None for it. The other gradients are checked against central differences."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import integer_args_src as src  # noqa: E402


def fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("fn, count", [(src.euler, 4), (src.scaled, 4), (src.shifted, 3),
                                       (src.outer, 5), (src.picked, 2), (src.repeated, 3)])
def test_wrt_none_leaves_the_integer_out(fn, count):
    g = s2s_ad.grad(fn, wrt=None)(0.3, count)
    assert not isinstance(g, tuple)
    assert abs(g - fd(lambda x: fn(x, count), 0.3)) < 1e-7


@pytest.mark.parametrize("fn, count, line", [(src.scaled, 4, 20), (src.shifted, 3, 24),
                                             (src.outer, 5, 28), (src.picked, 2, 36),
                                             (src.repeated, 3, 55)])
def test_wrt_naming_the_integer_is_refused_at_the_call(fn, count, line):
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(fn, wrt=1)(0.3, count)
    err = info.value
    assert err.file.endswith("integer_args_src.py") and err.line == line
    text = str(err)
    assert "cannot differentiate with respect to" in text and "used as an integer" in text
    assert text.splitlines()[-1].strip() == "^"


@pytest.mark.parametrize("fn, count", [(src.euler, 4), (src.scaled, 4), (src.shifted, 3),
                                       (src.outer, 5), (src.picked, 2), (src.repeated, 3)])
def test_vjp_returns_none_for_the_integer(fn, count):
    value, back = s2s_ad.vjp(fn, 0.3, count)
    dx, dcount = back(1.5)
    assert dcount is None
    assert abs(value - fn(0.3, count)) < 1e-14
    assert abs(dx - 1.5 * fd(lambda x: fn(x, count), 0.3)) < 1e-6


def test_numpy_helper():
    x = np.array([0.3, -0.7, 1.1])
    g = s2s_ad.grad(src.total_np, wrt=None)(x, 4)
    ref = np.array([fd(lambda t: src.total_np(np.where(np.arange(3) == k, t, x), 4), x[k])
                    for k in range(3)])
    assert np.allclose(g, ref, atol=1e-7)
    value, back = s2s_ad.vjp(src.euler_np, x, 4)
    dx, ds = back(np.ones(3))
    assert ds is None and np.allclose(dx, ref, atol=1e-7)
    with pytest.raises(SourceError, match="used as an integer"):
        s2s_ad.grad(src.total_np, wrt=1)(x, 4)


def test_jvp_of_the_other_parameter():
    value, tangent = s2s_ad.jvp(src.scaled, wrt=0)(0.3, 4, dx=1.0)
    assert abs(tangent - fd(lambda x: src.scaled(x, 4), 0.3)) < 1e-7


def test_cli_refuses_the_integer(tmp_path):
    run = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                          os.path.join(HERE, "integer_args_src.py") + ":scaled", "--wrt", "s"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode != 0
    assert "integer_args_src.py:20:" in run.stderr and "used as an integer" in run.stderr
