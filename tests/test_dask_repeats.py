"""Adjoints of reads by integer arrays that repeat an element, on Dask
arrays: Dask has no np.add.at, so the generated add_at sums g by each
element's flat position with np.bincount. Every case is compared with
central differences of the function on NumPy arrays (an independent
reference), at the top level, in helpers, loops, branches, through
``s2s_ad.vjp`` and through the CLI's ``grad -o`` file in a fresh
interpreter. (Reads Dask cannot run itself, an index of several integer
arrays or a 2-d one, or that give arrays of lengths it does not know yet,
a boolean mask's, are left out.)"""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dask_repeats_src as src
import s2s_ad
from array_oracle import fd_gradient

da = pytest.importorskip("dask.array")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(94)
X = RNG.uniform(-1.0, 1.0, 3)
M = RNG.uniform(-1.0, 1.0, (3, 4))
IDX = np.array([0, 2, 0, 1, 2])  # repeats 0 and 2
ROWS = np.array([1, 0, 1])        # repeats 1

CASES = {
    "fancy": (src.fancy, [X, IDX]),
    "columns": (src.columns, [M, IDX]),
    "taken": (src.taken, [M, IDX]),
    "taken_flat": (src.taken_flat, [M, IDX]),
    "taken_along": (src.taken_along, [M, ROWS]),
    "in_helper": (src.in_helper, [X, IDX]),
    "in_helper_of_helper": (src.in_helper_of_helper, [X, IDX]),
    "in_loop": (src.in_loop, [X, IDX]),
    "in_branch": (src.in_branch, [X, IDX]),
}


def on_dask(args, index_too=False):
    """The float arrays chunked (so sums cross chunks); the integer index
    arrays too with ``index_too``."""
    return [da.from_array(a, chunks=2) if isinstance(a, np.ndarray)
            and (a.dtype.kind == "f" or index_too) else a for a in args]


@pytest.mark.parametrize("name", sorted(CASES))
def test_repeated_index_adjoint_on_dask_matches_finite_differences(name):
    f, args = CASES[name]
    want = fd_gradient(f, args, 0)
    df = s2s_ad.grad(f, wrt=0)
    np.testing.assert_allclose(df(*args), want, rtol=1e-6, atol=1e-8)  # NumPy: np.add.at
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        got = df(*on_dask(args))
        assert isinstance(got, da.Array)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["fancy", "taken", "in_loop"])
def test_repeated_dask_index_arrays(name):
    """The index arrays themselves Dask arrays (the function reads them)."""
    f, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            np.asarray(f(*on_dask(args, index_too=True)))
        except (NotImplementedError, ValueError, TypeError, IndexError) as e:
            pytest.skip(f"the function itself does not run on Dask: {e}")
        got = s2s_ad.grad(f, wrt=0)(*on_dask(args, index_too=True))
        np.testing.assert_allclose(np.asarray(got), fd_gradient(f, args, 0),
                                   rtol=1e-6, atol=1e-8)


def test_repeated_index_in_float32_on_dask():
    f, args = CASES["columns"]
    single = [a.astype(np.float32) if a.dtype.kind == "f" else a for a in args]
    got = s2s_ad.grad(f, wrt=0)(*on_dask(single))
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), fd_gradient(f, args, 0), rtol=2e-3, atol=2e-3)


def test_vjp_of_rows_read_by_a_repeating_index_on_dask():
    cot = RNG.uniform(-1.0, 1.0, (3, 4))
    value, pull = s2s_ad.vjp(src.returns_rows, M, ROWS)
    # the reference: the vjp is the gradient of <cotangent, f>
    want = fd_gradient(lambda m, rows: np.sum(cot * src.returns_rows(m, rows)), [M, ROWS], 0)
    np.testing.assert_allclose(pull(cot)[0], want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        dvalue, dpull = s2s_ad.vjp(src.returns_rows, da.from_array(M, chunks=2), ROWS)
        got = dpull(da.from_array(cot, chunks=2))[0]
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-8)


def test_grad_o_file_on_dask_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_in_helper_of_helper.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/dask_repeats_src.py:in_helper_of_helper", "--wrt", "x",
                           "-o", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import dask.array as da
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        from array_oracle import fd_gradient
        import dask_repeats_src as m
        import grad_in_helper_of_helper as g
        x, idx = np.array({X.tolist()!r}), np.array({IDX.tolist()!r})
        got = g.grad_in_helper_of_helper(da.from_array(x, chunks=2), idx)
        assert isinstance(got, da.Array), type(got)
        np.testing.assert_allclose(np.asarray(got), fd_gradient(m.in_helper_of_helper, [x, idx], 0),
                                   rtol=1e-6, atol=1e-8)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


def test_repeated_index_with_complex_values_on_dask():
    """np.bincount sums real weights: add_at sums the real and imaginary
    parts apart. The reference is NumPy's np.add.at on the same adjoint."""
    f, args = CASES["fancy"]
    z = X + 1j * RNG.uniform(-1.0, 1.0, 3)
    df = s2s_ad.grad(f, wrt=0)
    want = df(z, IDX)
    assert np.iscomplexobj(want) and np.any(want.imag != 0.0)
    got = df(da.from_array(z, chunks=2), IDX)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


def test_dask_adjoints_added_into_an_array_made_with_numpy():
    """add_scattered and add_at add a Dask adjoint into the adjoint of an
    array the function made with np.zeros (a NumPy array)."""
    w, idx = np.array([0.5, -1.0, 2.0, 0.7]), np.array([1, 1, 3])
    want = fd_gradient(src.numpy_made, [w, idx], 0)
    df = s2s_ad.grad(src.numpy_made, wrt=0)
    text = s2s_ad.source_of(df)
    assert "add_scattered(" in text and "add_at(" in text
    np.testing.assert_allclose(df(w, idx), want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        got = df(da.from_array(w, chunks=2), idx)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-8)
