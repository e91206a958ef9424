"""The gradient module of a function of a list parameter, read back from its
file and differentiated again: its list adjoint (``dc = [0.0] * 4`` then
``dc[i] = ds`` / ``dc[i] += v`` in the reverse loop) is a list built in the
function, written by index in a loop unrolled for it; returned beside a
number (``return dc, dx``), or made for a length known only at run time
(``dc = [0.0] * len(c)``), it is a list written by index in the loop. Every second
derivative is compared with central differences of the file's gradient,
itself checked against central differences of ``f``."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from examples import horner
from tests import list_adjoint_src
from tests.modules import import_source, run_generated
from tests.soak import soak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C = [0.3, -1.2, 0.7, 2.0]
X = 0.8

CASES = [
    (horner.horner, "examples/horner.py:horner"),
    (list_adjoint_src.squares_horner, "tests/list_adjoint_src.py:squares_horner"),
    (list_adjoint_src.weighted, "tests/list_adjoint_src.py:weighted"),
]


def central(fn, c, x, h=1e-5):
    """∂ fn(c, x) / ∂ (c_0, ..., c_3, x) by central differences, float64:
    one column per input, each a flat array of fn's outputs."""
    columns = []
    for q in range(len(c) + 1):
        up, down = list(c) + [x], list(c) + [x]
        step = h * max(1.0, abs(up[q]))
        up[q] += step
        down[q] -= step
        columns.append((np.ravel(np.array(fn(up[:-1], up[-1]), dtype=float))
                        - np.ravel(np.array(fn(down[:-1], down[-1]), dtype=float)))
                       / (2 * step))
    return np.stack(columns, axis=-1)


def file_gradient(fn, folder, label):
    """``fn``'s gradient in its list parameter, from its file, checked."""
    text = s2s_ad.gradient_source(fn, wrt="c", lengths={"c": len(C)})
    assert f"dc = [0.0] * {len(C)}" in text
    g = getattr(import_source(str(folder), text, label), "grad_" + fn.__name__)
    first = np.array(g(C, X), dtype=float)
    want = central(lambda c, x: fn(c, x), C, X, 1e-6)[0, :len(C)]
    np.testing.assert_allclose(first, want, rtol=1e-6, atol=1e-8)
    return g


@pytest.mark.parametrize("fn,target", CASES, ids=[f.__name__ for f, _ in CASES])
def test_list_adjoint_module_differentiated_api(fn, target, tmp_path):
    g = file_gradient(fn, tmp_path, f"la_{fn.__name__}")
    H = central(g, C, X)  # row k: ∂ dc[k] / ∂ (c, x)
    assert np.max(np.abs(H)) > 0.1
    for k in range(len(C)):
        dc, dx = s2s_ad.grad(g, wrt=("c", "x"), output=k)(C, X)
        np.testing.assert_allclose(np.array(list(dc) + [dx], dtype=float), H[k],
                                   rtol=1e-5, atol=1e-6)
    # jvp: the gradient and H v
    v = [0.4, -0.3, 1.1, 0.2, -0.7]
    value, tangent = s2s_ad.jvp(g, wrt=("c", "x"))(C, X, dc=v[:4], dx=v[4])
    np.testing.assert_allclose(np.array(value, dtype=float), np.array(g(C, X)), rtol=1e-12)
    np.testing.assert_allclose(np.array(tangent, dtype=float), H @ v, rtol=1e-5, atol=1e-6)
    # vjp: a cotangent of the list gives Hᵀ u
    u = [1.0, -2.0, 0.5, 3.0]
    _, back = s2s_ad.vjp(g, C, X)
    dc, dx = back(u)[:2]  # (and the seed `ds`'s)
    np.testing.assert_allclose(np.array(list(dc) + [dx], dtype=float), H.T @ u,
                               rtol=1e-5, atol=1e-6)


def _cli(*argv):
    run = subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run


@pytest.mark.parametrize("fn,target", [(pytest.param if k == 0 else soak)(f, t, id=f.__name__)
                                       for k, (f, t) in enumerate(CASES)])
def test_list_adjoint_file_differentiated_cli(fn, target, tmp_path):
    """`s2s-ad grad -o` of the gradient file, each written module run in a
    fresh interpreter without s2s-ad (horner in the default run, each of the
    three with ``--soak``: five command lines and four fresh interpreters a
    case; every case's module read back through the API in the default run,
    test_list_adjoint_module_differentiated_api)."""
    first = tmp_path / "first_list.py"
    _cli("grad", target, "--wrt", "c", "--length", "c=4", "-o", str(first))
    g = getattr(import_source(str(tmp_path), first.read_text(encoding="utf-8"), "first_list_again"),
                "grad_" + fn.__name__)
    H = central(g, C, X)
    for k in range(len(C)):
        second = tmp_path / f"second_list_{k}.py"
        _cli("grad", f"{first}:grad_{fn.__name__}", "--wrt", "c,x", "--output", str(k),
             "--length", "c=4", "-o", str(second))
        dc, dx = run_generated(tmp_path, f"second_list_{k}", f"grad_grad_{fn.__name__}", [C, X])
        np.testing.assert_allclose(np.concatenate([np.ravel(dc), np.ravel(dx)]), H[k],
                                   rtol=1e-5, atol=1e-6)


def test_list_and_number_adjoints_returned_together(tmp_path):
    """`return dc, dx` (a list beside a number): `dc = [0.0] * 4` stays a list
    written by index (frontend/list_writes.py); the number's second
    derivatives against central differences of the file's gradient, and the
    list chosen as the output refused, located."""
    text = s2s_ad.gradient_source(horner.horner, wrt=("c", "x"), lengths={"c": 4})
    g = import_source(str(tmp_path), text, "la_both").grad_horner
    H = central(lambda c, x: g(c, x)[1], C, X)  # ∂dx/∂(c, x)
    dc, dx = s2s_ad.grad(g, wrt=("c", "x"), output=1)(C, X)
    np.testing.assert_allclose(np.array(list(dc) + [dx], dtype=float), H[0],
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(SourceError) as e:
        s2s_ad.grad(g, wrt=("c", "x"), output=0)(C, X)
    assert "la_both.py:" in str(e.value).splitlines()[0] and "^" in str(e.value)
    assert "a list of any length, which has no gradient" in str(e.value)


def test_list_adjoint_of_run_time_length_file_differentiated(tmp_path):
    """`dc = [0.0] * len(c)` written by `dc[k] = ds` in the reversed loop and
    returned beside `dx` (the gradient file of horner for every length): its
    `dx` differentiated again by the CLI, run in a fresh interpreter, against
    central differences of the file's gradient, for two lengths; the list
    itself as the output refused, located."""
    first = tmp_path / "rt_list.py"
    _cli("grad", "examples/horner.py:horner", "--wrt", "c,x", "-o", str(first))
    assert "dc = [0.0] * len(c)" in first.read_text(encoding="utf-8")
    g = import_source(str(tmp_path), first.read_text(encoding="utf-8"), "rt_list_again")
    second = tmp_path / "rt_second.py"
    _cli("grad", f"{first}:grad_horner", "--wrt", "c,x", "--output", "1", "-o", str(second))
    assert "--length" not in second.read_text(encoding="utf-8")
    for c in (C, C[:2]):
        H = central(lambda c, x: g.grad_horner(c, x)[1], c, X)
        dc, dx = run_generated(tmp_path, "rt_second", "grad_grad_horner", [c, X])
        np.testing.assert_allclose(np.concatenate([np.ravel(dc), np.ravel(dx)]), H[0],
                                   rtol=1e-5, atol=1e-6)
    run = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{first}:grad_horner",
                          "--wrt", "c,x", "--output", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "rt_list.py:" in run.stderr and "^" in run.stderr, run.stderr
    assert "a list of any length, which has no gradient" in run.stderr


def test_list_of_zeros_of_constant_length_written_by_index():
    """`ys = [0.0] * 3` in a function of yours, written by `ys[i] = v` and
    `ys[i] += v`: the gradient against central differences."""
    fn = list_adjoint_src.zeros_written
    got = s2s_ad.grad(fn, wrt=("x", "y"))(0.7, -1.3)
    h = 1e-6
    want = [(fn(0.7 + h, -1.3) - fn(0.7 - h, -1.3)) / (2 * h),
            (fn(0.7, -1.3 + h) - fn(0.7, -1.3 - h)) / (2 * h)]
    np.testing.assert_allclose(np.array(got, dtype=float), want, rtol=1e-6)


@pytest.mark.parametrize("x", [0.7, -0.7])
def test_list_of_zeros_in_helpers_loops_branches(x, tmp_path):
    """The same list in a helper, a helper of a helper, a loop and a branch:
    through grad, vjp and the CLI's file in a fresh interpreter."""
    fn, y, h = list_adjoint_src.zeros_positions, -1.3, 1e-6
    want = [(fn(x + h, y) - fn(x - h, y)) / (2 * h), (fn(x, y + h) - fn(x, y - h)) / (2 * h)]
    np.testing.assert_allclose(np.array(s2s_ad.grad(fn, wrt=("x", "y"))(x, y)), want, rtol=1e-6)
    _, back = s2s_ad.vjp(fn, x, y)
    np.testing.assert_allclose(np.array(back(1.0), dtype=float), want, rtol=1e-6)
    out = tmp_path / "zeros_positions_grad.py"
    _cli("grad", "tests/list_adjoint_src.py:zeros_positions", "--wrt", "x,y", "-o", str(out))
    got = run_generated(tmp_path, "zeros_positions_grad", "grad_zeros_positions", [x, y])
    np.testing.assert_allclose(np.ravel(got), want, rtol=1e-6)
