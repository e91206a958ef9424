"""Adjoints of reads by boolean masks on Dask arrays: ``x[x > 0]`` has a
length Dask knows only when it computes, so the generated helpers must not
ask for it (``scatter`` puts ``g`` at the mask's true positions with
``np.flatnonzero`` and ``np.bincount``; ``unbroadcast`` and ``spread`` take
an unknown length for the same one). Every case against the NumPy gradient
and central differences, at the top level, in helpers, loops, branches,
through ``s2s_ad.vjp`` and through the CLI's ``grad -o`` file in a fresh
interpreter."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dask_masks_src as src
import s2s_ad
from array_oracle import fd_gradient

da = pytest.importorskip("dask.array")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(58)
X = RNG.uniform(-1.0, 1.0, 7)
W = RNG.uniform(-1.0, 1.0, 7)
M = RNG.uniform(-1.0, 1.0, (3, 4))

CASES = {
    "squares": (src.squares, [X], [0]),
    "two_arrays": (src.two_arrays, [X, W], [0, 1]),
    "plain_sum": (src.plain_sum, [X], [0]),
    "mean_exp": (src.mean_exp, [X], [0]),
    "matrix": (src.matrix, [M], [0]),
    "in_helper": (src.in_helper, [X], [0]),
    "in_helper_of_helper": (src.in_helper_of_helper, [X], [0]),
    "in_loop": (src.in_loop, [X], [0]),
    "in_branch_then": (src.in_branch, [X, 0.7], [0, 1]),
    "in_branch_else": (src.in_branch, [X, -0.7], [0, 1]),
}


def on_dask(args):
    return [da.from_array(a, chunks=2) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("name", sorted(CASES))
def test_mask_adjoint_on_dask_matches_numpy_and_finite_differences(name):
    f, args, wrt = CASES[name]
    df = s2s_ad.grad(f, wrt=tuple(wrt))
    want = df(*args)
    for i, w in zip(wrt, want):
        np.testing.assert_allclose(w, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # np.size computes through NumPy
        got = df(*on_dask(args))
    for i, g, w in zip(wrt, got, want):
        if isinstance(args[i], np.ndarray):
            assert isinstance(g, da.Array), type(g)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-12)


def test_vjp_of_a_masked_read_on_dask():
    want = fd_gradient(src.in_helper, [X], 0)
    _, pull = s2s_ad.vjp(src.in_helper, X)
    np.testing.assert_allclose(pull(1.0)[0], want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        _, dpull = s2s_ad.vjp(src.in_helper, da.from_array(X, chunks=2))
        got = dpull(1.0)[0]
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-8)


def test_grad_o_file_on_dask_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_in_helper_of_helper.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/dask_masks_src.py:in_helper_of_helper", "--wrt", "x",
                           "-o", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import dask.array as da
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        from array_oracle import fd_gradient
        import dask_masks_src as m
        import grad_in_helper_of_helper as g
        x = np.array({X.tolist()!r})
        got = g.grad_in_helper_of_helper(da.from_array(x, chunks=2))
        assert isinstance(got, da.Array), type(got)
        np.testing.assert_allclose(np.asarray(got), fd_gradient(m.in_helper_of_helper, [x], 0),
                                   rtol=1e-6, atol=1e-8)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr
