"""A module-level list or tuple of numbers (``COEFFS = [0.5, -1.2, 2.0]``)
is a constant read wherever Python reads it: at a constant index, at a
loop's index (``for i in range(len(COEFFS))``, a ``while``, a loop with
``break`` or with a bound known only as the code runs, a loop inside a
branch), in ``len``, a comprehension, a lambda, in code of numbers and in
NumPy code. Each gradient against central differences, through ``grad``,
``vjp`` and ``jvp``, and through the CLI's file in a fresh interpreter;
changing the list makes new code."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import module_lists_src as src
from tests.oracle import central_difference

ROOT = Path(__file__).resolve().parent.parent

SCALAR = [
    (src.constant_index, [0.7]), (src.by_range_len, [0.7]), (src.by_length, [0.7]),
    (src.tuple_by_range, [-0.4]), (src.items, [0.7]), (src.horner_while, [1.3]),
    (src.with_break, [0.2]), (src.with_break, [0.9]), (src.run_time_bound, [0.6, 4]),
    (src.run_time_bound, [0.6, 0]), (src.neighbours, [0.8]), (src.nested, [0.9]),
    (src.loop_in_branch, [0.7, 3]), (src.loop_in_branch, [-0.7, 3]),
    (src.comprehension, [0.7]), (src.in_lambda, [0.7]), (src.through_helper, [0.7]),
    (src.through_helper_while, [0.4]), (src.over_a_slice, [0.7]),
    (src.local_through_helper, [0.7]),
]


@pytest.mark.parametrize("f,args", SCALAR, ids=[f"{f.__name__}-{a}" for f, a in SCALAR])
def test_numbers(f, args):
    ref = central_difference(f, args, 0, h=1e-6)
    got = s2s_ad.grad(f, wrt=0)(*args)
    assert math.isclose(got, ref, rel_tol=1e-6, abs_tol=1e-7), (got, ref)
    value, pullback = s2s_ad.vjp(f, *args)
    assert value == f(*args)
    assert math.isclose(pullback(1.0)[0], ref, rel_tol=1e-6, abs_tol=1e-7)
    value, tangent = s2s_ad.jvp(f, wrt=0)(*args, dx=1.0)
    assert math.isclose(value, f(*args), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(tangent, ref, rel_tol=1e-6, abs_tol=1e-7)


def _fd_array(f, x):
    out = np.zeros_like(x)
    for j in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[j] += 1e-6
        down.flat[j] -= 1e-6
        out.flat[j] = (f(up) - f(down)) / 2e-6
    return out


ARRAYS = [(src.np_constant_index, np.array([0.7, -0.3])),
          (src.np_by_range_len, np.array([0.7, -0.3, 1.1])),
          (src.np_with_break, np.array([0.1, -0.2])),
          (src.np_with_break, np.array([0.9, 1.2])),
          (src.np_through_helper, np.array([0.3, -1.1]))]


@pytest.mark.parametrize("f,x", ARRAYS, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                              enumerate(ARRAYS)])
def test_numpy(f, x):
    ref = _fd_array(f, x)
    assert np.allclose(s2s_ad.grad(f)(x), ref, rtol=1e-6, atol=1e-7)
    assert np.allclose(s2s_ad.vjp(f, x)[1](1.0)[0], ref, rtol=1e-6, atol=1e-7)
    v = np.linspace(0.5, -1.0, x.size)
    _, tangent = s2s_ad.jvp(f)(x, dx=v)
    assert math.isclose(tangent, float(ref @ v), rel_tol=1e-6, abs_tol=1e-7)


def test_changing_the_list_makes_new_code(monkeypatch):
    g = s2s_ad.grad(src.horner_while)
    before = g(0.7)
    monkeypatch.setattr(src, "COEFFS", [5.0, -1.2, 2.0])
    after = g(0.7)
    assert math.isclose(after, central_difference(src.horner_while, [0.7], 0, h=1e-6),
                        rel_tol=1e-6)
    assert not math.isclose(after, before)


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_run_time_bound.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"{ROOT / 'tests' / 'module_lists_src.py'}:run_time_bound",
                           "--wrt", "x", "-o", str(out)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    points = [[0.6, 4], [-0.3, 5], [0.6, 1]]
    (tmp_path / "points.pkl").write_bytes(pickle.dumps(points))
    run = subprocess.run([sys.executable, "-c",
                          "import pickle, grad_run_time_bound as g; "
                          "print(pickle.dumps([g.grad_run_time_bound(*p) for p in "
                          "pickle.load(open('points.pkl', 'rb'))]).hex())"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for p, got in zip(points, pickle.loads(bytes.fromhex(run.stdout.strip()))):
        assert math.isclose(got, central_difference(src.run_time_bound, p, 0, h=1e-6),
                            rel_tol=1e-6, abs_tol=1e-7)


def test_a_list_parameter_read_in_a_helper_at_a_loop_index():
    xs = [0.5, -1.2, 2.0]
    got = s2s_ad.grad(src.list_through_helper, wrt=(0, 1))(0.7, xs)
    assert math.isclose(got[0], central_difference(src.list_through_helper, [0.7, xs], 0,
                                                   h=1e-6), rel_tol=1e-6)
    for k in range(3):
        def at(v, k=k):
            ys = list(xs)
            ys[k] = v
            return src.list_through_helper(0.7, ys)
        assert math.isclose(got[1][k], central_difference(at, [xs[k]], 0, h=1e-6),
                            rel_tol=1e-6)


def test_an_index_parameter_as_python_reads_it():
    # a helper's int index indexes; a float raises Python's own TypeError
    with pytest.raises(TypeError):
        src.float_index(0.7)
    with pytest.raises(TypeError):
        s2s_ad.grad(src.float_index)(0.7)
    # the function differentiated itself: its int parameter indexes too (a gradient
    # with respect to it refused, located)
    got = s2s_ad.grad(src.coefficient_term, wrt=0)(0.7, 2)
    assert math.isclose(got, central_difference(lambda x: src.coefficient_term(x, 2), [0.7], 0),
                        rel_tol=1e-6)
    with pytest.raises(SourceError, match=r"module_lists_src.py:.*`i`: it is used as an integer"):
        s2s_ad.grad(src.coefficient_term, wrt=1)(0.7, 2)


def test_an_untyped_index_in_numpy_code():
    # a helper's parameter of NumPy code (an array there) indexing a module list:
    # checked to be an int where the code runs, as Python's list does (was refused,
    # asking for `i: int`)
    x = np.array([0.3, 0.2])
    got = s2s_ad.grad(src.np_through_untyped_helper)(x)
    want = [central_difference(lambda *v: src.np_through_untyped_helper(np.array(v)),
                               list(x), k, h=1e-6) for k in range(2)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("xs", [[0.3, -0.4, 0.5], [0.3, -0.4], [0.3, -0.4, 0.5, 0.9]])
def test_zipped_with_a_list_of_any_length(xs):
    got = s2s_ad.grad(src.zipped_with_a_list, wrt=(0, 1))(0.7, xs)
    assert math.isclose(got[0], central_difference(src.zipped_with_a_list, [0.7, xs], 0,
                                                   h=1e-6), rel_tol=1e-6)
    assert len(got[1]) == len(xs)
    for k in range(len(xs)):
        def at(v, k=k):
            ys = list(xs)
            ys[k] = v
            return src.zipped_with_a_list(0.7, ys)
        assert math.isclose(got[1][k], central_difference(at, [xs[k]], 0, h=1e-6),
                            rel_tol=1e-6, abs_tol=1e-9)
    assert math.isclose(s2s_ad.vjp(src.zipped_with_a_list, 0.7, xs)[1](1.0)[0], got[0],
                        rel_tol=1e-12)


@pytest.mark.parametrize("f,x", [(src.through_helper_while, 0.4), (src.local_through_helper, 0.7)])
def test_second_derivative_through_a_helper(f, x):
    h = 1e-4
    ref = (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
    assert math.isclose(s2s_ad.hessian(f)(x), ref, rel_tol=1e-5, abs_tol=1e-6)
