"""The objectives of the GradBench evals (examples/gradbench), written as
NumPy code is written, differentiated unmodified and compared with central
finite differences in float64 (array_oracle.fd_gradient). Jacobians (ba,
ht) are checked one vector-Jacobian product at a time, with random
cotangents, against finite differences of the weighted sum of the outputs;
bundle adjustment also row by row through its per-observation helper, the
way GradBench assembles its sparse Jacobian.

Each objective also runs in the other positions a construct must work in:
through ``s2s_ad.vjp`` and through the CLI's ``grad -o`` file imported in a
fresh interpreter."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient
from examples_gradbench import (ba_args, det_args, gmm_args, ht_args, kmeans_args, llsq_args,
                                lse_args, lstm_args, ode_args)
from gradbench import ba, det, gmm, ht, kmeans, llsq, lse, lstm, ode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check(f, args, wrt, rtol=1e-5, atol=1e-7):
    got = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
    for i, g in zip(wrt, got):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=rtol, atol=atol,
                                   err_msg=f"{f.__name__}: argument {i}")
    return got


@pytest.mark.parametrize("n, d, k", [(5, 3, 4), (8, 2, 3), (4, 5, 2)])
def test_gmm(n, d, k):
    rng = np.random.default_rng(n * 100 + d * 10 + k)
    check(gmm.gmm_objective, gmm_args(rng, n, d, k), [0, 1, 2])


def test_gmm_wishart_parameters_change_the_value():
    """The prior's constant (multigammaln of d) is computed, not dropped."""
    rng = np.random.default_rng(1)
    args = gmm_args(rng, 5, 3, 2)
    other = list(args)
    other[4], other[5] = 2.0, 3
    vg = s2s_ad.value_and_grad(gmm.gmm_objective, wrt=(0, 1, 2))
    for a in (args, other):
        value, _ = vg(*a)
        assert np.isclose(value, gmm.gmm_objective(*a), rtol=1e-12)


def test_kmeans():  # a nested helper reading the objective's arrays
    rng = np.random.default_rng(2)
    check(kmeans.kmeans_cost, kmeans_args(rng, 12, 4, 3), [0, 1])


def test_llsq():  # a nested helper
    rng = np.random.default_rng(3)
    check(llsq.llsq_objective, llsq_args(rng, 5, 9), [0])


def test_lse():
    rng = np.random.default_rng(4)
    check(lse.logsumexp, lse_args(rng, 9), [0])


@pytest.mark.parametrize("ell", [1, 2, 3, 5])
@pytest.mark.parametrize("style", ["det_minors", "det_kept", "det_flat"])
def test_det(style, ell):
    """Expansion by minors in three styles; the gradient is also the closed
    form det(A)·inv(A)ᵀ. det_flat takes A as an array and as a list."""
    rng = np.random.default_rng(ell)
    args = det_args(rng, ell)
    f = getattr(det, style)
    got = check(f, args, [0])[0]
    m = np.reshape(args[0], (ell, ell))
    cofactors = (np.linalg.det(m) * np.linalg.inv(m).T).ravel()
    np.testing.assert_allclose(got, cofactors, rtol=1e-9, atol=1e-12)
    if style == "det_flat":
        listed = s2s_ad.grad(f, wrt=0)(list(args[0]), ell)
        np.testing.assert_allclose(np.asarray(listed, dtype=float), cofactors, rtol=1e-9,
                                   atol=1e-12)
    value, back = s2s_ad.vjp(f, *args)
    assert np.isclose(value, np.linalg.det(m))
    np.testing.assert_allclose(back(0.5)[0], 0.5 * cofactors, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n, s", [(4, 3), (6, 10)])
def test_ode(n, s):
    rng = np.random.default_rng(5 + n)
    check(ode.ode_last, ode_args(rng, n, s), [0])


@pytest.mark.parametrize("layers, b, c", [(1, 3, 3), (2, 4, 5)])
def test_lstm(layers, b, c):
    rng = np.random.default_rng(layers * 10 + c)
    check(lstm.lstm_objective, lstm_args(rng, layers, b, c), [0, 1, 2, 3])


@pytest.mark.parametrize("layers, b, c", [(1, 3, 4), (2, 4, 5), (3, 2, 3)])
def test_lstm_hand_written_gradient_of_the_benchmark(layers, b, c):
    """benchmarks/hand_lstm.py, the benchmark's hand-written gradient, against
    central differences (the table's grad/hand ratio means something only if
    both are right) and against s2s-ad's gradient."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        from hand_lstm import lstm_objective_grad
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    args = lstm_args(np.random.default_rng(layers * 100 + c), layers, b, c)
    hand = lstm_objective_grad(*args)
    for i, g in zip((0, 1), hand):
        np.testing.assert_allclose(g, fd_gradient(lstm.lstm_objective, args, i), rtol=1e-5,
                                   atol=1e-7, err_msg=f"argument {i}")
    for g, h in zip(s2s_ad.grad(lstm.lstm_objective, wrt=(0, 1))(*args), hand):
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-15)


def _weighted(f, cotangents):
    """sum(cotangent * output) over every output of f: its gradient is the
    vector-Jacobian product with those cotangents."""
    def weighted(*args):
        out = f(*args)
        out = out if isinstance(out, tuple) else (out,)
        return sum(float(np.sum(c * o)) for c, o in zip(cotangents, out))
    return weighted


def test_ba_vjp():
    rng = np.random.default_rng(6)
    args = ba_args(rng, 3, 6, 10)
    cot = (rng.normal(size=(10, 2)), rng.normal(size=10))
    value, vjp_fn = s2s_ad.vjp(ba.ba_objective, *args)
    for v, expected in zip(value, ba.ba_objective(*args)):
        np.testing.assert_allclose(v, expected, rtol=1e-13)
    got = vjp_fn(cot)
    for i in (0, 1, 2):
        np.testing.assert_allclose(got[i], fd_gradient(_weighted(ba.ba_objective, cot), args, i),
                                   rtol=1e-5, atol=1e-7)


def test_ba_jacobian_rows_per_observation():
    """GradBench's ba Jacobian: per observation, the 2 x 15 block of the
    reprojection error's derivatives (camera, point, weight), one row per
    seed, against finite differences."""
    rng = np.random.default_rng(7)
    cams, X, w, obs, feats = ba_args(rng, 2, 3, 4)
    grad = s2s_ad.grad(ba.compute_reproj_err, wrt=(0, 1, 2))
    for i in range(4):
        args = [cams[obs[i, 0]], X[obs[i, 1]], float(w[i]), feats[i]]
        for row in range(2):
            seed = np.eye(2)[row]
            got = grad(*args, dout=seed)
            for k in (0, 1, 2):
                np.testing.assert_allclose(
                    got[k], fd_gradient(_weighted(ba.compute_reproj_err, (seed,)), args, k),
                    rtol=1e-5, atol=1e-7)


def test_ba_rotation_branch_at_zero():
    """rodrigues_rotate_point takes its small-angle branch for a zero rotation."""
    rot = np.zeros(3)
    X = np.array([0.3, -0.2, 4.0])
    got = s2s_ad.vjp(ba.rodrigues_rotate_point, rot, X)[1](np.array([1.0, 2.0, 3.0]))[1]
    np.testing.assert_allclose(got, fd_gradient(
        _weighted(ba.rodrigues_rotate_point, (np.array([1.0, 2.0, 3.0]),)), [rot, X], 1),
        rtol=1e-6)


def test_ht_vjp_and_jacobian():
    rng = np.random.default_rng(8)
    args = ht_args(rng, 12, 7)
    cot = rng.normal(size=(7, 3))
    value, vjp_fn = s2s_ad.vjp(ht.hand_objective, *args)
    np.testing.assert_allclose(value, ht.hand_objective(*args), rtol=1e-13)
    np.testing.assert_allclose(vjp_fn(cot)[0],
                               fd_gradient(_weighted(ht.hand_objective, (cot,)), args, 0),
                               rtol=1e-5, atol=1e-7)
    # the whole 21 x 26 Jacobian, row by row (a seed per output element)
    grad = s2s_ad.grad(ht.hand_objective, wrt=0)
    rows = [grad(*args, dout=np.eye(21)[r].reshape(7, 3)) for r in range(21)]
    h = 1e-6
    for j in range(26):
        up, down = list(args), list(args)
        up[0], down[0] = args[0].copy(), args[0].copy()
        up[0][j] += h
        down[0][j] -= h
        column = (ht.hand_objective(*up) - ht.hand_objective(*down)).ravel() / (2 * h)
        np.testing.assert_allclose([r[j] for r in rows], column, rtol=1e-5, atol=1e-7)


def test_ht_small_global_rotation_branch():
    rng = np.random.default_rng(9)
    args = ht_args(rng, 8, 5)
    args[0][:3] = 0.0  # angle_axis_to_rotation_matrix returns np.eye(3)
    cot = rng.normal(size=(5, 3))
    _, vjp_fn = s2s_ad.vjp(ht.hand_objective, *args)
    np.testing.assert_allclose(vjp_fn(cot)[0][3:],
                               fd_gradient(_weighted(ht.hand_objective, (cot,)), args, 0)[3:],
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name, fn, wrt", [("gmm", "gmm_objective", "alphas,means,icf"),
                                           ("lstm", "lstm_objective", "main_params,extra_params"),
                                           ("ode", "ode_last", "x")])
def test_grad_o_file_imports_in_a_fresh_interpreter(tmp_path, name, fn, wrt):
    out = tmp_path / f"grad_{name}.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"examples/gradbench/{name}.py:{fn}", "--wrt", wrt, "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{os.path.join(ROOT, 'tests')!r}, {os.path.join(ROOT, 'examples')!r}]
        from examples_gradbench import {name}_args
        from array_oracle import fd_gradient
        from gradbench import {name} as m
        sys.path.insert(0, {str(tmp_path)!r})
        import grad_{name} as g
        rng = np.random.default_rng(0)
        args = {{"gmm": lambda: gmm_args(rng, 4, 3, 2), "lstm": lambda: lstm_args(rng, 1, 3, 3),
                 "ode": lambda: ode_args(rng, 4, 3)}}["{name}"]()
        got = g.grad_{fn}(*args)
        got = got if isinstance(got, tuple) else (got,)
        for i, d in enumerate(got):
            np.testing.assert_allclose(d, fd_gradient(m.{fn}, args, i), rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


UNPACK = """
def sizes(x):
    n, d = x.shape
    a, b, c = x[0]
    return (a * n + b * d) * c

def f(x):
    total = 0.0
    for i in range(2):
        n, d = x.shape
        u, v, w = x[i] * d
        total = total + sizes(x) * u + v * w / n
    return total
"""


def test_unpacking_shapes_and_arrays_in_helpers_loops_and_vjp():
    from array_oracle import make_function
    f = make_function(UNPACK)
    x = np.random.default_rng(10).normal(size=(4, 3))
    got = s2s_ad.grad(f)(x)
    np.testing.assert_allclose(got, fd_gradient(f, [x], 0), rtol=1e-6, atol=1e-8)
    value, vjp_fn = s2s_ad.vjp(f, x)
    assert np.isclose(value, f(x))
    np.testing.assert_allclose(vjp_fn(2.0)[0], 2.0 * got, rtol=1e-12)


FRESH_HELPER = """
def h(x):
    R = np.zeros((2, 2))
    R[0, 0] = x[0]
    R[1, 1] = x[1] * x[0]
    return R

def f(x):
    R = h(x)
    R *= x[1]
    return np.sum(R * R)
"""


@pytest.mark.parametrize("helper", [
    "def h(x):\n    return x\n", "def h(x):\n    return x.T\n",
    "def h(x):\n    y = x\n    return y\n",
    "def h(x):\n    y = np.zeros(2)\n    if x[0] > 0:\n        y = x\n    return y\n",
    "def h(x):\n    return g(x)\ndef g(x):\n    return x\n"])
def test_inplace_on_a_helpers_result_only_where_it_is_fresh(helper):
    """``R = h(x); R *= s`` (ht's apply_global_transform) is accepted where
    every return of h makes a new array, and refused where h may return its
    argument, a view of it, or what another helper returns."""
    from array_oracle import assert_gradients, make_function
    assert_gradients(make_function(FRESH_HELPER), [np.array([0.7, -1.3])], [0])
    f = make_function(helper + "def f(x):\n    R = h(x)\n    R *= 2.0\n    return np.sum(R * x)\n")
    with pytest.raises(s2s_ad.SourceError, match="may be an array created elsewhere"):
        s2s_ad.grad(f)


def test_ode_with_a_closure():
    rng = np.random.default_rng(11)
    check(ode.ode_last_closure, ode_args(rng, 5, 4), [0])


LITERAL_LOOP = """
def helper(x):
    s = 0.0
    for k in [1, 2, 3]:
        s = s + x ** k
        if k == 1:
            s = s * 2.0
    return s

def f(x):
    total = 0.0
    for i in range(2):
        for c in (0.5, 1.5):
            total = total + helper(x) * c + i
    return total
"""


def test_loop_over_a_literal_list_in_helpers_loops_and_vjp():
    from array_oracle import make_function
    from oracle import central_difference
    f = make_function(LITERAL_LOOP)
    for x in (0.7, -1.2):
        assert np.isclose(s2s_ad.grad(f)(x), central_difference(f, [x], 0), rtol=1e-6)
    value, vjp_fn = s2s_ad.vjp(f, 0.7)
    assert np.isclose(value, f(0.7)) and np.isclose(vjp_fn(1.0)[0], s2s_ad.grad(f)(0.7))
    g = make_function(LITERAL_LOOP.replace("x ** k", "np.sum(x ** k)"))
    xs = np.array([0.3, -0.8, 1.1])
    np.testing.assert_allclose(s2s_ad.grad(g)(xs), fd_gradient(g, [xs], 0), rtol=1e-6)


def test_unpacking_a_helpers_array_result_is_refused_as_an_array():
    """Not "returns one number": the helper returns an array, and the message
    says how to read its rows (which the second function does)."""
    from array_oracle import assert_gradients, make_function
    f = make_function("def h(x):\n    return np.sin(x)\n"
                      "def f(x):\n    a, b = h(x)\n    return np.sum(a * b)\n")
    with pytest.raises(s2s_ad.SourceError, match=r"returns one array, not a tuple.*r\[0\], r\[1\]"):
        s2s_ad.grad(f)(np.ones((2, 3)))
    g = make_function("def h(x):\n    return np.sin(x)\n"
                      "def f(x):\n    r = h(x)\n    a, b = r[0], r[1]\n    return np.sum(a * b)\n")
    assert_gradients(g, [np.random.default_rng(12).normal(size=(2, 3))], [0])


def test_gradients_agree_with_jax_grad_of_the_jax_ports():
    """Where JAX is installed: s2s-ad's gradient of each NumPy objective
    equals jax.grad of the objective written separately with jax.numpy
    (benchmarks/jax_ports.py), to rounding. GradBench publishes no reference
    gradients to compare with (docs/gradbench.md)."""
    pytest.importorskip("jax")
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        from jax_agreement import agreement
        rows = agreement(seed=3, small=True)
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    assert len(rows) == 9
    for name, size, diff, scale in rows:
        assert diff < 1e-10, (name, size, diff, scale)
