"""``axis=k`` with ``k`` known only when the code runs (an int parameter,
``x.ndim - 1``, a loop variable): the generated code reads it then (the axis
moved to the front and back, ``np.moveaxis(x, k, 0)``). Each gradient
against central differences for several values of k, negative ones too, at
top level, in helpers, loops and branches, through ``vjp``, the CLI's file
in a fresh interpreter and on Dask arrays."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime_axis_src as src
import s2s_ad
from array_oracle import fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(21)
X = RNG.uniform(0.3, 1.2, (2, 3, 4))

CASES = [(src.reduce_along, [0, 1, 2, -1]), (src.in_a_helper, [0, 1, -1]),
         (src.outer, [1, 2, -1]), (src.helper_of_a_helper, [1, 2]), (src.in_a_loop, [1, 3]),
         (src.in_a_branch, [0, 2, -2]), (src.shapes_made_along, [0, 1, 2, -1]),
         (src.last_axis, [None]), (src.masked_along, [0, 1, 2, -1, -3]),
         (src.masks_in_a_helper, [0, 2, -2])]


def _args(k):
    return [X] if k is None else [X, k]


@pytest.mark.parametrize("fn, ks", CASES, ids=[f.__name__ for f, _ in CASES])
def test_runtime_axis_against_finite_differences(fn, ks):
    df = s2s_ad.grad(fn, wrt=0)
    for k in ks:
        for x in (X, -X):  # in_a_branch takes both branches
            args = [x] + _args(k)[1:]
            np.testing.assert_allclose(df(*args), fd_gradient(fn, args, 0), rtol=1e-5,
                                       atol=1e-7, err_msg=f"{fn.__name__} k={k}")


@pytest.mark.parametrize("fn, ks", CASES, ids=[f.__name__ for f, _ in CASES])
def test_runtime_axis_through_vjp(fn, ks):
    for k in ks:
        value, pull = s2s_ad.vjp(fn, *_args(k))
        assert np.isclose(value, fn(*_args(k)))
        np.testing.assert_allclose(pull(0.5)[0], 0.5 * fd_gradient(fn, _args(k), 0), rtol=1e-5,
                                   atol=1e-7)


def test_one_module_serves_every_axis():
    """The axis is read when the code runs: one generated function, no
    regeneration per value."""
    text = s2s_ad.gradient_source(src.reduce_along, wrt=0)
    assert "np.moveaxis(" in text and "def grad_reduce_along(x, k" in text


def test_float32_stays_float32():
    x = X.astype(np.float32)
    g = s2s_ad.grad(src.reduce_along, wrt=0)(x, 1)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, fd_gradient(src.reduce_along, [X, 1], 0), rtol=2e-3, atol=2e-3)


def test_grad_o_file_imports_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_outer.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/runtime_axis_src.py:outer", "--wrt", "x", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        from array_oracle import fd_gradient
        import runtime_axis_src as m
        import grad_outer as g
        x = np.random.default_rng(3).uniform(0.3, 1.2, (2, 3, 4))
        for k in (1, 2, -1):
            np.testing.assert_allclose(g.grad_outer(x, k), fd_gradient(m.outer, [x, k], 0),
                                       rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


def test_runtime_axis_on_dask():
    da = pytest.importorskip("dask.array")
    import warnings
    df = s2s_ad.grad(src.shapes_made_along, wrt=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        got = df(da.from_array(X, chunks=2), 1)
        assert isinstance(got, da.Array)
        np.testing.assert_allclose(np.asarray(got), df(X, 1), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("body, message", [
    ("np.sum(x, axis=k * 0.5)", "must be one integer"),
    ("np.sum(x, axis=(0, k))", "must be a constant"),
    ("np.take(x, 0, axis=k)", "must be a constant"),
])
def test_refused_axes_are_located(body, message):
    from array_oracle import make_function
    f = make_function(f"def f(x, k: int):\n    return np.sum({body})\n")
    with pytest.raises(s2s_ad.SourceError, match=message) as info:
        s2s_ad.grad(f)
    assert ":2:" in str(info.value) and "^" in str(info.value)


@pytest.mark.parametrize("fn", [src.reduce_along, src.masked_along, src.in_a_helper],
                         ids=lambda f: f.__name__)
def test_jvp_and_hvp_need_no_tangent_for_the_axis(fn):
    """The axis is an integer: no tangent asked for it, no gradient with
    respect to it (refused, located); the JVP and the HVP against central
    differences of the function and of its gradient."""
    v = np.random.default_rng(4).normal(size=X.shape)
    e = 1e-6
    g = s2s_ad.grad(fn, wrt=0)
    for k in (0, 1, -1):
        _, tangent = s2s_ad.jvp(fn)(X, k, dx=v)
        assert np.isclose(tangent, (fn(X + e * v, k) - fn(X - e * v, k)) / (2 * e),
                          rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(s2s_ad.hvp(fn, wrt=0)(X, k, v),
                                   (g(X + e * v, k) - g(X - e * v, k)) / (2 * e),
                                   rtol=1e-5, atol=1e-6)
    with pytest.raises(s2s_ad.SourceError, match=r"runtime_axis_src.py:.*`k`: .*used as an "
                                                 r"integer"):
        s2s_ad.grad(fn, wrt=1)(X, 1)
