"""Generated NumPy gradients run on Dask arrays.

The generated code calls NumPy's functions (``np.sum(x)``, not ``x.sum()`` on
an assumed ndarray), which dispatch to Dask through ``__array_function__`` and
``__array_ufunc__``. Each function here is differentiated once; its gradient
runs on NumPy arrays and on Dask arrays (chunked, so that every operation
crosses chunks), and the two must agree (1e-9) — the NumPy gradient is itself
checked against central differences by the tests of each rule and example.

Where the function itself does not run on Dask (a NumPy feature Dask lacks:
``np.repeat`` without an axis, ``np.linalg.inv`` of a matrix split in chunks
that are not square), there is nothing to compare and the case is skipped.
Dask is optional (``pip install 's2s-ad[dask]'``; the test extra installs it).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function
from metamorphic_src import PROGRAMS
from soak import soak

da = pytest.importorskip("dask.array")

import test_numpy_rules_table as table  # noqa: E402

KNOWN = {
    "np.linalg.det(x):baa": "the adjoint of a stack of determinants needs np.linalg.inv of a "
                            "stack, which Dask does not have (its det of a stack runs)",
}


def chunked(a):
    return da.from_array(a, chunks=2) if isinstance(a, np.ndarray) else a


def computed(x):
    return [computed(v) for v in x] if isinstance(x, (list, tuple)) else np.asarray(x)


def compare_on_dask(f, args: list, wrt: list[int]):
    dargs = [chunked(a) for a in args]
    with warnings.catch_warnings():
        # Dask warns that np.size and np.shape compute through NumPy: they do, correctly
        warnings.simplefilter("ignore", FutureWarning)
        try:
            value = f(*dargs)
            np.asarray(value)
        except (NotImplementedError, ValueError, AttributeError, TypeError, IndexError) as e:
            pytest.skip(f"the function itself does not run on Dask: {type(e).__name__}: {e}")
        df = s2s_ad.grad(f, wrt=tuple(wrt))
        want = df(*args)
        if not np.allclose(np.asarray(value), f(*args), rtol=1e-9, atol=1e-12):
            # Dask computes another function than NumPy here (its np.linalg.cholesky returns the
            # upper factor): the gradient of NumPy's function would be wrong, so it must refuse
            with pytest.raises(TypeError):
                computed(df(*dargs))
            return
        try:
            got = df(*dargs)
        except ValueError as e:
            if "chunks must be a square matrix" not in str(e):
                raise
            # the function ran through NumPy (Dask lacks it: np.linalg.slogdet), its adjoint
            # needs np.linalg.inv, which Dask has only for square chunks (a size drawn odd)
            pytest.skip(f"the adjoint needs what Dask lacks for these chunks: {e}")
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        if isinstance(value, da.Array):  # (Dask computes what it lacks, np.cross, with NumPy)
            assert all(isinstance(g, da.Array) for g, a in zip(got, [dargs[i] for i in wrt])
                       if isinstance(a, da.Array)), \
                "the gradient of a Dask array is a Dask array where the function stays in Dask"
        for g, w in zip(computed(got), want):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def _marks(k, prim, expr, spec):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[f"{expr}:{spec}"])] \
        if f"{expr}:{spec}" in KNOWN else []
    if any(p == prim for p, _, _ in table.ALL[:k]):
        marks.append(pytest.mark.soak)
    return marks


RULES = [pytest.param(prim, expr, spec, id=f"{expr}:{spec}", marks=_marks(k, prim, expr, spec))
         for k, (prim, expr, spec) in enumerate(table.ALL)]
"""Every case of tests/test_numpy_rules_table.py (each checked there against
central differences on NumPy in the default run): on Dask, the first case of
each primitive in the default run, its other cases (axes, keepdims, method
forms, ...) with ``--soak``."""


@pytest.mark.parametrize("prim, expr, spec", RULES)
def test_every_numpy_rule_runs_on_dask(prim, expr, spec):
    shapes = table._shapes(spec)
    args = table._args(prim, shapes)
    compare_on_dask(table._function(expr, len(shapes)), args, list(range(len(shapes))))


def _examples():
    from examples import kmeans, mlp, softmax_xent, spring_chain, tied_weights
    rng = np.random.default_rng(5)
    return [
        ("mlp", mlp.mlp_loss, [rng.normal(size=(4, 5)), rng.normal(size=5),
                               rng.normal(size=(5, 2)), rng.normal(size=2),
                               rng.normal(size=(6, 4)), rng.normal(size=(6, 2))], [0, 1, 2, 3]),
        ("softmax_xent", softmax_xent.softmax_xent,
         [rng.normal(size=(4, 3)), rng.normal(size=(6, 4)), np.eye(3)[[0, 2, 1, 1, 0, 2]]], [0]),
        ("tied_weights", tied_weights.tied,
         [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=4)], [0]),
        ("kmeans", kmeans.kmeans_cost, [rng.normal(size=(3, 2)), rng.normal(size=(9, 2))], [0, 1]),
        ("spring_chain_energy", spring_chain.energy, [rng.normal(0, 0.3, 8)], [0]),
    ]


EXAMPLES = ["mlp", "softmax_xent", "tied_weights", "kmeans", "spring_chain_energy"]


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=EXAMPLES)
def test_numpy_examples_run_on_dask(index):
    name, f, args, wrt = _examples()[index]
    for i in wrt:  # the NumPy gradient this compares with is right
        got = s2s_ad.grad(f, wrt=i)(*args)
        np.testing.assert_allclose(got, fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)
    compare_on_dask(f, args, wrt)


def test_spring_chain_rhs_vjp_runs_on_dask():
    """rhs returns an array (its state's derivative): a vector-Jacobian
    product, against central differences of <cotangent, rhs> first."""
    from examples import spring_chain
    rng = np.random.default_rng(11)
    y, cot = rng.normal(0, 0.3, 8), rng.normal(size=8)
    _, pull = s2s_ad.vjp(spring_chain.rhs, y)
    want = pull(cot)[0]
    np.testing.assert_allclose(
        want, fd_gradient(lambda y: np.sum(cot * spring_chain.rhs(y)), [y], 0), rtol=1e-5,
        atol=1e-6)
    _, dpull = s2s_ad.vjp(spring_chain.rhs, chunked(y))
    got = dpull(chunked(cot))[0]
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-12)


ARRAY_PROGRAMS = sorted(n for n, (_, points, _) in PROGRAMS.items()
                        if any(isinstance(a, np.ndarray) for a in points[0]))


@pytest.mark.parametrize("name", ARRAY_PROGRAMS)
def test_array_programs_with_control_flow_run_on_dask(name):
    source, points, wrt = PROGRAMS[name]
    f = make_function(source)
    for point in points:
        compare_on_dask(f, list(point), wrt)


def test_a_repeating_integer_array_index_sums_on_dask():
    # x[idx] with idx = [0, 0, 2] reads x[0] twice: its adjoint is the sum of two
    # contributions, which y[idx] += g would overwrite; Dask has no np.add.at, so
    # add_at sums g by flat position with np.bincount (tests/test_dask_repeats.py: more)
    f = make_function("def f(x, idx):\n    return np.sum(x[idx] ** 2)\n")
    x, idx = np.array([0.5, -1.0, 2.0]), np.array([0, 0, 2])
    want = fd_gradient(f, [x, idx], 0)
    df = s2s_ad.grad(f, wrt="x")
    np.testing.assert_allclose(df(x, idx), want, rtol=1e-6)
    got = df(chunked(x), idx)
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def _gradbench():
    from examples_gradbench import (gmm_args, kmeans_args, llsq_args, lse_args, lstm_args,
                                    ode_args)
    from gradbench import gmm, kmeans, llsq, lse, lstm, ode
    rng = np.random.default_rng(6)
    return {
        "gmm": (gmm.gmm_objective, gmm_args(rng, 5, 3, 4), [0, 1, 2]),
        "lstm": (lstm.lstm_objective, lstm_args(rng, 2, 3, 4), [0, 1, 2]),
        "ode": (ode.ode_last, ode_args(rng, 5, 3), [0]),
        "ode_closure": (ode.ode_last_closure, ode_args(rng, 5, 3), [0]),
        "kmeans": (kmeans.kmeans_cost, kmeans_args(rng, 7, 3, 3), [0, 1]),
        "llsq": (llsq.llsq_objective, llsq_args(rng, 5, 6), [0]),
        "lse": (lse.logsumexp, lse_args(rng, 7), [0]),
    }


@pytest.mark.parametrize("name", ["gmm", soak("lstm"), "ode", "ode_closure", "kmeans", "llsq",
                                  "lse"])
def test_gradbench_objectives_run_on_dask(name):
    """gmm and lstm make arrays with NumPy inside helpers (np.zeros) that the
    Dask adjoint flows into: the generated code adds into them without
    writing a Dask array into a NumPy one (``dy = dy + g``, ``v.copy()``).
    (lstm, ~5 s on Dask, with ``--soak``: gmm runs the same in the default
    run, and lstm's gradient is checked on NumPy in tests/test_gradbench.py.)"""
    f, args, wrt = _gradbench()[name]
    for i in wrt:
        np.testing.assert_allclose(s2s_ad.grad(f, wrt=i)(*args), fd_gradient(f, args, i),
                                   rtol=1e-5, atol=1e-7)
    compare_on_dask(f, args, wrt)


def test_bundle_adjustment_vjp_runs_on_dask():
    from examples_gradbench import ba_args
    from gradbench import ba
    args = ba_args(np.random.default_rng(7), 3, 6, 10)
    value, pull = s2s_ad.vjp(ba.ba_objective, *args)
    cot = (np.ones_like(value[0]), np.ones_like(value[1]))
    want = pull(cot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        dvalue, dpull = s2s_ad.vjp(ba.ba_objective, *[chunked(a) for a in args])
        got = dpull(cot)
    for i in (0, 1, 2):
        assert isinstance(got[i], da.Array)
        np.testing.assert_allclose(np.asarray(got[i]), want[i], rtol=1e-9, atol=1e-12)


@pytest.mark.soak
def test_hand_tracking_vjp_runs_on_dask():
    """``vertex_positions[correspondences]`` reads rows by an integer array
    that repeats some (add_at sums them with np.bincount on Dask), and the
    helpers fill arrays made with np.zeros from Dask values, whose Dask
    adjoints the reverse sweep adds into NumPy-made adjoint arrays out of
    place (``dy = dy + g``). The NumPy vjp is checked against central
    differences of <cotangent, f> first. (With ``--soak``, ~10 s: the backward
    pass computes the Dask arrays bone by bone. Both constructs run on Dask in
    the default run: test_a_repeating_integer_array_index_sums_on_dask and
    tests/test_dask_repeats.py, test_gradbench_objectives_run_on_dask's gmm and
    test_dask_repeats.py's adjoints added into an array made with NumPy; ba's
    vjp on Dask stays.)"""
    from examples_gradbench import ht_args
    from gradbench import ht
    args = ht_args(np.random.default_rng(8), 12, 7)
    args[-1][[1, 4]] = args[-1][0]  # vertex args[-1][0] read three times
    cot = np.random.default_rng(9).normal(size=(7, 3))
    _, pull = s2s_ad.vjp(ht.hand_objective, *args)
    want = pull(cot)
    for i in (0, 4):  # (all of them: tests/test_gradbench.py)
        ref = fd_gradient(lambda *a: np.sum(cot * ht.hand_objective(*a)), args, i)
        np.testing.assert_allclose(want[i], ref, rtol=1e-5, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        # every argument chunked, the integer arrays (parents, correspondences) too
        _, dpull = s2s_ad.vjp(ht.hand_objective, *[chunked(a) for a in args])
        got = dpull(chunked(cot))
        for i in (0, 2, 3, 4, 5, 6):
            assert isinstance(got[i], da.Array), i
            np.testing.assert_allclose(np.asarray(got[i]), want[i], rtol=1e-9, atol=1e-12)


def _branching_loops():
    from tests import loop_batching_src as src
    from tests.test_loop_batching import CAMS, MIXED, OBS, PTS, W, X, ZEROED
    rng = np.random.default_rng(5)
    return [(src.rotated_observations, [ZEROED, PTS, OBS], [0, 1]),
            (src.rotated_observations, [CAMS, PTS, OBS], [0, 1]),
            (src.nested_branches, [MIXED], [0]),
            (src.early_return, [X, W, 5], [0, 1]),
            (src.posed_bones, [rng.uniform(-1, 1, (6, 3)), rng.uniform(-1, 1, (5, 4, 4))],
             [0, 1])]


@pytest.mark.parametrize("index", range(5))
def test_loops_computed_at_once_with_branches_run_on_dask(index):
    """A loop computed at once whose helper branches on each iteration's value
    (some iterations taking each arm: ``np.where`` of both, the rows that do
    not take an arm holding a copy of one that does), reads cameras by an
    index array, multiplies matrices per iteration."""
    f, args, wrt = _branching_loops()[index]
    compare_on_dask(f, args, wrt)
