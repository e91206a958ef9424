"""A value read only in one arm of a branch keeps a zero adjoint when the
other arm runs; its producer's local derivatives may be infinite there (the
root of zero in ``r = sqrt(x*x + y*y)`` before ``if r < 1e-4:``). The
reverse sweep skips that producer's backward on the recorded decision
(s2s_ad/reverse/untouched.py) instead of evaluating ``0 / (2 * 0)``: each
gradient at the point where the other arm runs, and away from it, against
central differences; through vjp, a loop, a helper, NumPy, a second
derivative and the CLI's file in a fresh interpreter."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from tests import untouched_src as src
from tests.oracle import central_difference

ROOT = Path(__file__).resolve().parent.parent

SCALAR = [
    (src.radial, [0.0, 0.0]), (src.radial, [0.3, -0.4]), (src.radial, [2e-5, 1e-5]),
    (src.radial_helper, [0.0, 0.0]), (src.radial_helper, [0.5, 0.1]),
    (src.nested_roots, [0.0, 0.0]), (src.nested_roots, [0.2, 0.7]),
    (src.three_arms, [0.0, 0.0]), (src.three_arms, [0.3, 0.2]), (src.three_arms, [1.5, 0.5]),
    (src.elif_threshold, [0.0, 0.0]), (src.elif_threshold, [0.3, 0.4]),
    (src.elif_threshold, [11.0, 0.5]),
    (src.nested_in_both, [0.0, 0.0]), (src.nested_in_both, [0.3, 0.2]),
    (src.nested_in_both, [0.2, 0.7]), (src.nested_in_both, [2.5, 0.7]),
]


def _fd(f, args, i):
    return central_difference(f, args, i, h=1e-6)


@pytest.mark.parametrize("f,args", SCALAR, ids=[f"{f.__name__}-{a}" for f, a in SCALAR])
def test_scalar_gradient_where_an_arm_leaves_a_root_unread(f, args):
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    for i, g in enumerate(got):
        assert math.isclose(g, _fd(f, args, i), rel_tol=1e-6, abs_tol=1e-6), (i, got)
    # through vjp: the same cotangents
    value, pullback = s2s_ad.vjp(f, *args)
    assert value == f(*args)
    back = pullback(1.0)
    for i in range(2):
        assert math.isclose(back[i], got[i], rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("args", [[0.0, 1.0, 3], [0.0, 0.0, 2], [0.4, 1.2, 3]])
def test_in_a_loop(args):
    got = s2s_ad.grad(src.in_a_loop, wrt=(0, 1))(*args)
    for i, g in enumerate(got):
        assert math.isclose(g, _fd(src.in_a_loop, args, i), rel_tol=1e-6, abs_tol=1e-6)


def _fd_array(f, args, k):
    x = args[k]
    out = np.zeros_like(x)
    for j in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[j] += 1e-7
        down.flat[j] -= 1e-7
        plus, minus = list(args), list(args)
        plus[k], minus[k] = up, down
        out.flat[j] = (f(*plus) - f(*minus)) / 2e-7
    return out


@pytest.mark.parametrize("f,args", [
    (src.radial_np, [np.zeros(3)]), (src.radial_np, [np.array([0.3, -0.2, 0.5])]),
    (src.normalised, [np.zeros(4), np.array([0.5, -1.0, 2.0, 0.25])]),
    (src.normalised, [np.array([0.3, -0.2, 0.5, 1.0]), np.array([0.5, -1.0, 2.0, 0.25])]),
])
def test_numpy_gradient_without_nan(f, args):
    wrt = tuple(range(len(args)))
    got = s2s_ad.grad(f, wrt=wrt)(*args)
    for k, g in enumerate(got):
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, _fd_array(f, args, k), rtol=1e-6, atol=1e-6)


def test_second_derivative_at_the_point():
    """The generated gradient holds an ordinary branch on the recorded
    decision: its own gradient (reverse over reverse: the Hessian of 1 + x*y
    there) is right."""
    for i in range(2):
        row = s2s_ad.grad(s2s_ad.grad(src.radial_helper, wrt=i), wrt=(0, 1))(0.0, 0.0)
        g = s2s_ad.grad(src.radial_helper, wrt=i)
        for j in range(2):
            up, down = [0.0, 0.0], [0.0, 0.0]
            up[j], down[j] = 1e-6, -1e-6
            fd = (g(*up) - g(*down)) / 2e-6
            assert math.isclose(row[j], fd, abs_tol=1e-6), (i, j, row)


def test_a_zero_by_arithmetic_still_raises():
    """Only a zero the branch left untouched is skipped: an adjoint that is
    zero by value (z = 0 in r * z) multiplies the infinite derivative of
    sqrt at 0 as before, and Python raises, as the code's own 1/(2*sqrt(0))
    would."""
    assert math.isclose(s2s_ad.grad(src.touched_by_value, wrt=0)(0.25, 0.0), 1.0)
    with pytest.raises(ZeroDivisionError):
        s2s_ad.grad(src.touched_by_value, wrt=0)(0.0, 0.0)


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_radial_helper.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"{ROOT / 'tests' / 'untouched_src.py'}:radial_helper",
                           "--wrt", "x,y", "-o", str(out)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "only where dr got a contribution" in text
    points = [[0.0, 0.0], [0.5, 0.1]]
    (tmp_path / "points.pkl").write_bytes(pickle.dumps(points))
    run = subprocess.run([sys.executable, "-c",
                          "import pickle, grad_radial_helper as g; "
                          "print(pickle.dumps([g.grad_radial_helper(*p) for p in "
                          "pickle.load(open('points.pkl', 'rb'))]).hex())"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for p, got in zip(points, pickle.loads(bytes.fromhex(run.stdout.strip()))):
        for i in range(2):
            assert math.isclose(got[i], _fd(src.radial_helper, p, i), rel_tol=1e-6,
                                abs_tol=1e-6)
