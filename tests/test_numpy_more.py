"""The rules of s2s_ad/rules/numpy_more.py and np.einsum with any subscripts,
beyond the one-expression cases of test_numpy_rules_table.py (which runs
each in float64 and float32 against central differences, and on Dask):
forward mode against a central difference along a random direction; the positions a construct must work in (a helper, a helper
of a helper, a loop, a branch, ``vjp``, the CLI's ``grad -o`` file imported
in a fresh interpreter); NaNs, sinc at 0, degenerate eigenvalues."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function
from s2s_ad import SourceError

RNG = np.random.default_rng(1818)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NANS = "np.where(np.arange(np.size(x)).reshape(np.shape(x)) % 3 == 1, np.nan, 0.0)"

FORWARD = [
    ("np.einsum('ii->i', x) * np.einsum('ii', x)", (3, 3)),
    ("np.einsum('...ij,...jk->...ik', x, x)", (2, 3, 3)),
    ("np.einsum('bii,bi->b', x, x[:, 0])", (2, 3, 3)),
    ("np.broadcast_to(x, (2, 3, 3)) * x", (3, 3)),
    ("np.atleast_3d(x[0]) + np.atleast_2d(x[1, 1])", (3, 3)),
    ("np.kron(x, x[0])", (3, 3)),
    ("np.sinc(x) * x", (3, 3)),
    (f"np.nansum(x + {NANS}, axis=0)", (3, 3)),
    (f"np.nanmean(x * x + {NANS}, axis=-1, keepdims=True)", (3, 4)),
    ("np.meshgrid(x[0], x[1])[0] * np.meshgrid(x[0], x[1], indexing='ij')[1]", (2, 3)),
    ("np.take(x, [2, 0, 0], axis=1)", (3, 3)),
]


@pytest.mark.parametrize("expr, shape", FORWARD, ids=[e for e, _ in FORWARD])
def test_forward_mode(expr, shape):
    """jvp against a central difference along a random direction."""
    f = make_function(f"def f(x):\n    return np.sum(np.sin({expr}))\n")
    x, v = RNG.normal(size=shape), RNG.normal(size=shape)
    value, tangent = s2s_ad.jvp(f)(x, dx=v)
    h = 1e-6
    assert np.isclose(value, f(x))
    assert np.isclose(tangent, (f(x + h * v) - f(x - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("expr", ["np.linalg.eigh(x)[0]", "np.linalg.eigvalsh(x)",
                                  "np.linalg.pinv(x)", "np.linalg.eigh(x)[1] ** 2"])
def test_forward_mode_of_linear_algebra(expr):
    """Refused before (no forward rule); now against a central difference at
    a symmetric matrix with distinct eigenvalues (the eigenvectors squared:
    their signs are NumPy's choice)."""
    f = make_function(f"def f(x):\n    return np.sum(np.sin({expr}))\n")
    x = np.diag([1.0, 2.5, 4.0]) + 0.1 * RNG.normal(size=(3, 3))
    x = x + x.T
    v = RNG.normal(size=(3, 3))
    value, tangent = s2s_ad.jvp(f)(x, dx=v)
    h = 1e-6
    assert np.isclose(value, f(x))
    assert np.isclose(tangent, (f(x + h * v) - f(x - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_forward_mode_of_scipy_linalg():
    linalg = pytest.importorskip("scipy.linalg")
    f = make_function("def f(a, b):\n    return np.sum(np.sin(solve_triangular(a, b, lower=True)))\n",
                      env={"solve_triangular": linalg.solve_triangular})
    a = np.tril(RNG.normal(size=(3, 3))) + 3 * np.eye(3)
    b, da, db = RNG.normal(size=3), RNG.normal(size=(3, 3)), RNG.normal(size=3)
    _, tangent = s2s_ad.jvp(f)(a, b, da=da, db=db)
    h = 1e-6
    assert np.isclose(tangent, (f(a + h * da, b + h * db) - f(a - h * da, b - h * db)) / (2 * h),
                      rtol=1e-6, atol=1e-8)


POSITIONS = """
import numpy as np


def inner(a, w):
    return np.einsum('...ii->...i', a) * np.sinc(w) + np.einsum('ij,jj->i', a[0], a[1])


def middle(a, w):
    X, Y = np.meshgrid(w, inner(a, w)[0])
    return np.sum(X * Y) + np.sum(np.kron(np.atleast_2d(w), a[0]))


def f(a, w):
    s = 0.0
    for k in range(2):
        if k == 0:
            s = s + middle(a, w) + np.nansum(np.broadcast_to(w, (3, 3)) * a[k])
        else:
            s = s + np.sum(np.take(w, [2, 0, 0]) * np.linalg.eigvalsh(a[k] + a[k].T + 6.0 * np.diag(w * w)))
    return s
"""


def test_every_position_helpers_loop_branch_and_vjp():
    f = make_function(POSITIONS)
    a, w = RNG.normal(size=(2, 3, 3)), RNG.uniform(0.5, 1.5, 3)
    assert_gradients(f, [a, w], [0, 1])
    value, pullback = s2s_ad.vjp(f, a, w)
    assert np.isclose(value, f(a, w))
    da, dw = pullback(2.0)
    np.testing.assert_allclose(da, 2.0 * fd_gradient(f, [a, w], 0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dw, 2.0 * fd_gradient(f, [a, w], 1), rtol=1e-5, atol=1e-7)


def test_cli_grad_file_in_a_fresh_interpreter(tmp_path):
    (tmp_path / "more.py").write_text(POSITIONS, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "more.py:f", "-o",
                           "more_grad.py"], cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    a, w = RNG.normal(size=(2, 3, 3)), RNG.uniform(0.5, 1.5, 3)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "w.npy", w)
    probe = ("import numpy as np, more_grad\n"
             "a, w = np.load('a.npy'), np.load('w.npy')\n"
             "da, dw = more_grad.grad_f(a, w)\n"
             "np.save('da.npy', da)\nnp.save('dw.npy', dw)\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(tmp_path), capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert run.returncode == 0, run.stderr
    f = make_function(POSITIONS)
    np.testing.assert_allclose(np.load(tmp_path / "da.npy"), fd_gradient(f, [a, w], 0),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.load(tmp_path / "dw.npy"), fd_gradient(f, [a, w], 1),
                               rtol=1e-5, atol=1e-7)


SCIPY_POSITIONS = """
import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular


def whitened(a, b):
    c, low = cho_factor(a @ a.T + 3.0 * np.eye(3), lower=True)
    return cho_solve((c, low), b)


def f(a, b):
    s = 0.0
    for k in range(2):
        if k == 1:
            s = s + np.sum(solve_triangular(np.tril(a) + 3.0 * np.eye(3), b * k) ** 2)
        s = s + np.sum(np.sin(whitened(a, b)))
    return s
"""


def test_scipy_linalg_in_a_helper_loop_branch_and_vjp(tmp_path):
    pytest.importorskip("scipy.linalg")
    (tmp_path / "scipymore.py").write_text(SCIPY_POSITIONS, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import scipymore
        a, b = RNG.normal(size=(3, 3)), RNG.normal(size=3)
        assert_gradients(scipymore.f, [a, b], [0, 1])
        value, pullback = s2s_ad.vjp(scipymore.f, a, b)
        da, db = pullback(1.0)
        np.testing.assert_allclose(da, fd_gradient(scipymore.f, [a, b], 0), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(db, fd_gradient(scipymore.f, [a, b], 1), rtol=1e-5, atol=1e-7)
        assert "import scipy.linalg as scipy_linalg" in s2s_ad.api.gradient_source(scipymore.f)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("scipymore", None)


def test_cho_solve_refuses_a_lower_it_cannot_read():
    linalg = pytest.importorskip("scipy.linalg")
    f = make_function("def f(a, b, low: bool):\n    return np.sum(cho_solve((a, low), b))\n",
                      env={"cho_solve": linalg.cho_solve})
    with pytest.raises(SourceError, match="`lower` a constant"):
        s2s_ad.grad(f, wrt=(0, 1))


def test_nan_elements_get_no_adjoint():
    """A NaN that np.nansum/np.nanmean read directly gets 0 (one that went
    through other arithmetic first gets 0·nan, nan, from that arithmetic)."""
    f = make_function("def f(x, y):\n    return np.nansum(x * y) + np.sum(np.nanmean(x, axis=0))\n")
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    x[1, 2] = x[0, 0] = np.nan
    g = s2s_ad.grad(f, wrt=0)(x, y)
    assert g[1, 2] == 0.0 and g[0, 0] == 0.0
    finite = ~np.isnan(x)
    want = np.broadcast_to(y + 1.0 / np.sum(finite, axis=0), x.shape)
    np.testing.assert_allclose(g[finite], want[finite], rtol=1e-12)


def test_sinc_at_zero():
    """sinc is flat at 0: the derivative there is 0, not 0/0."""
    f = make_function("def f(x):\n    return np.sum(np.sinc(x))\n")
    x = np.array([0.0, 0.5, -1.25, 1e-3])
    g = s2s_ad.grad(f)(x)
    assert g[0] == 0.0
    np.testing.assert_allclose(g[1:], fd_gradient(f, [x], 0)[1:], rtol=1e-6, atol=1e-9)


def test_eigh_degenerate_eigenvalues_refused_when_the_code_runs():
    """Equal eigenvalues: the eigenvectors are not a function of the matrix,
    so their adjoint raises instead of returning inf or nan; the eigenvalues'
    adjoint (v·diag(w̄)·vᵀ on the lower triangle) is still given."""
    vectors = make_function("def f(x):\n    w, v = np.linalg.eigh(x)\n    return np.sum(v ** 3)\n")
    with pytest.raises(np.linalg.LinAlgError, match="eigenvalues are equal"):
        s2s_ad.grad(vectors)(np.diag([1.0, 1.0, 2.0]))
    values = make_function("def f(x):\n    w, v = np.linalg.eigh(x)\n    return np.sum(w * w)\n")
    x = np.diag([1.0, 1.0, 2.0])
    np.testing.assert_allclose(s2s_ad.grad(values)(x), np.tril(2 * x), atol=1e-12)


def test_eigh_reads_the_lower_triangle():
    """The upper triangle gets no adjoint (NumPy never reads it)."""
    f = make_function("def f(x):\n    w, v = np.linalg.eigh(x)\n    return np.sum(w ** 3) + np.sum(v ** 2 * w)\n")
    x = RNG.normal(size=(4, 4)) + np.diag([0.0, 4.0, 8.0, 12.0])
    g = assert_gradients(f, [x], [0])[0]
    assert np.all(np.triu(g, 1) == 0.0)


def test_broadcast_einsum_operand_gets_its_own_shape():
    """An operand NumPy broadcasts from length 1 inside np.einsum gets an
    adjoint of its own shape, summed (it used to get the broadcast shape)."""
    f = make_function("def f(a, b):\n    return np.sum(np.sin(np.einsum('ij,ij->ij', a, b)))\n")
    assert_gradients(f, [RNG.normal(size=(1, 3)), RNG.normal(size=(4, 3))], [0, 1])


def test_scipy_linalg_cli_grad_file_in_a_fresh_interpreter(tmp_path):
    """The file imports scipy.linalg as scipy_linalg itself."""
    pytest.importorskip("scipy.linalg")
    (tmp_path / "scipyfile.py").write_text(SCIPY_POSITIONS, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "scipyfile.py:f", "-o",
                           "scipyfile_grad.py"], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    a, b = RNG.normal(size=(3, 3)), RNG.normal(size=3)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    probe = ("import numpy as np, scipyfile_grad\n"
             "da, db = scipyfile_grad.grad_f(np.load('a.npy'), np.load('b.npy'))\n"
             "np.save('da.npy', da)\nnp.save('db.npy', db)\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(tmp_path), capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert run.returncode == 0, run.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        import scipyfile
        for name, i in (("da.npy", 0), ("db.npy", 1)):
            np.testing.assert_allclose(np.load(tmp_path / name),
                                       fd_gradient(scipyfile.f, [a, b], i), rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("scipyfile", None)


def test_all_and_any_take_their_axis_by_position():
    """np.all(c, 0) / np.any(c, 1), as NumPy's signature allows (was refused:
    'takes 1 array argument(s) here, got 2')."""
    f = make_function("def f(x):\n"
                      "    keep = np.all(x > 0.0, 0)\n"
                      "    some = np.any(x > 1.0, 1)\n"
                      "    return (np.sum(np.where(keep, x, 0.0) ** 2)\n"
                      "            + np.sum(np.where(some, 2.0, 1.0) * x[:, 0]))\n")
    x = np.array([[0.5, -2.0, 1.5], [3.0, 0.2, 0.4]])
    assert_gradients(f, [x], [0])
