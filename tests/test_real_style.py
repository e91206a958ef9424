"""Objectives in the style of real scientific and machine-learning NumPy code
(tests/real_style_src.py), differentiated unmodified: each gradient against
central finite differences in float64 (tests/array_oracle.py), through
`s2s_ad.grad`, `s2s_ad.vjp`, `s2s_ad.jvp`, inside a loop of a caller and
through the `s2s-ad grad -o` file imported in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient
from s2s_ad.errors import SourceError
from tests import real_style_src as R
from tests.soak import rows_beyond

pytest.importorskip("scipy")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(2024)
X = RNG.normal(size=(6, 3))
BITS = (RNG.uniform(size=6) > 0.5) * 1.0
COUNTS = np.array([0.0, 3.0, 1.0, 7.0, 2.0, 1.0])


def _layers():
    return [(RNG.normal(size=(3, 4)) * 0.5, RNG.normal(size=4) * 0.1),
            (RNG.normal(size=(4, 3)) * 0.5, RNG.normal(size=3) * 0.1)]


def _rnn_params():
    return {"W": RNG.normal(size=(5, 3)) * 0.5, "b": RNG.normal(size=3) * 0.1,
            "W_out": RNG.normal(size=(3, 2)), "h0": RNG.normal(size=(1, 3))}


# (objective, arguments, positions differentiated)
CASES = [
    (R.gp_objective, [np.array([-1.0, 0.2, 0.1, -0.3, 0.2]), X, RNG.normal(size=6)], (0, 1, 2)),
    (R.logistic_objective, [RNG.normal(size=4), X, BITS], (0, 1)),
    (R.negbin_objective, [np.array([0.4, -0.3]), COUNTS], (0,)),
    (R.poisson_objective, [RNG.normal(size=3) * 0.3, X, COUNTS], (0, 1)),
    (R.hmm_objective, [RNG.normal(size=3), RNG.normal(size=(3, 3)), RNG.normal(size=(3, 4)),
                       np.array([0, 3, 1, 2, 2, 0])], (0, 1, 2)),
    (R.elbo_objective, [RNG.normal(size=4) * 0.3, RNG.normal(size=(5, 2)), RNG.normal(size=4)],
     (0, 2)),
    (R.pendulum_objective, [np.array([0.3, 2.0]), np.array([0.8, 0.1])], (0, 1)),
    (R.conv_objective, [RNG.normal(size=(2, 2, 2, 2)), RNG.normal(size=(3, 2, 5, 5)),
                        RNG.normal(size=(2, 2, 2, 3))], (0, 1, 2)),
    (R.rosen, [RNG.normal(size=5)], (0,)),
    (R.probit_objective, [RNG.normal(size=3) * 0.5, X, BITS], (0, 1)),
    (R.heat_objective, [-0.5, RNG.normal(size=8), RNG.normal(size=8)], (0, 1, 2)),
    (R.batched_objective, [RNG.normal(size=4), X, BITS], (0, 1)),
    (R.gmm_objective, [RNG.normal(size=2), RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3, 3)),
                       RNG.normal(size=(5, 3))], (0, 1, 2, 3)),
    (R.repulsion_energy, [RNG.normal(size=(5, 2)), RNG.uniform(0.5, 1.5, size=5)], (0, 1)),
    (R.flat_objective, [RNG.normal(size=30) * 0.5, X, RNG.normal(size=6)], (0, 1)),
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_against_central_differences(fn, args, wrt):
    got = s2s_ad.grad(fn, wrt=list(wrt))(*args)
    for i, g in zip(wrt, got):
        np.testing.assert_allclose(g, fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{fn.__name__}: argument {i}")


def _tree_fd(fn, tree, rest):
    """Central differences of fn(tree, *rest) for each array leaf of a list of
    tuples or a dict, in the tree's own layout."""
    def leaves(t):
        return [a for item in t for a in item] if isinstance(t, list) else list(t.values())
    out = []
    for leaf in leaves(tree):
        g = np.zeros_like(leaf)
        for k in np.ndindex(*leaf.shape):
            old = leaf[k]
            leaf[k] = old + 1e-6
            up = fn(tree, *rest)
            leaf[k] = old - 1e-6
            down = fn(tree, *rest)
            leaf[k] = old
            g[k] = (up - down) / 2e-6
        out.append(g)
    return out


def test_classifier_of_a_list_of_layers():
    layers, labels = _layers(), np.array([0, 2, 1, 1, 0, 2])
    got = s2s_ad.grad(R.mlp_objective)(layers, X, labels)
    flat = [a for item in got for a in item]
    for g, ref in zip(flat, _tree_fd(R.mlp_objective, layers, (X, labels))):
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-7)


def test_rnn_of_a_dict_of_weights():
    params = _rnn_params()
    inputs = RNG.normal(size=(4, 2, 2))
    targets = np.eye(2)[RNG.integers(0, 2, size=(4, 2))]
    got = s2s_ad.grad(R.rnn_objective)(params, inputs, targets)
    for (key, g), ref in zip(got.items(), _tree_fd(R.rnn_objective, params, (inputs, targets))):
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-7, err_msg=key)


def test_vjp_and_jvp_agree_with_central_differences():
    args = [RNG.normal(size=4) * 0.3, RNG.normal(size=(5, 2)), RNG.normal(size=4)]
    value, pullback = s2s_ad.vjp(R.elbo_objective, *args)
    assert np.isclose(value, R.elbo_objective(*args))
    np.testing.assert_allclose(pullback(1.7)[0], 1.7 * fd_gradient(R.elbo_objective, args, 0),
                               rtol=1e-5, atol=1e-7)
    beta, direction = RNG.normal(size=3) * 0.5, RNG.normal(size=3)
    value, tangent = s2s_ad.jvp(R.probit_objective, wrt=[0])(beta, X, BITS, dbeta=direction)
    h = 1e-6
    step = (R.probit_objective(beta + h * direction, X, BITS)
            - R.probit_objective(beta - h * direction, X, BITS)) / (2 * h)
    assert np.isclose(value, R.probit_objective(beta, X, BITS))
    assert np.isclose(tangent, step, rtol=1e-6, atol=1e-8)


CALLER = '''
import numpy as np
from tests.real_style_src import hmm_objective, pendulum_objective


def fit_all(log_pi, log_A, log_B, params, sequences):
    total = 0.0
    for k in range(sequences.shape[0]):
        total = total + hmm_objective(log_pi, log_A * (1.0 + 0.1 * k), log_B, sequences[k])
    return total + pendulum_objective(params, np.array([0.5, 0.0]))
'''


def test_objectives_as_helpers_in_a_callers_loop():
    from array_oracle import make_function
    fit_all = make_function(CALLER, "fit_all")
    args = [RNG.normal(size=3), RNG.normal(size=(3, 3)), RNG.normal(size=(3, 4)),
            np.array([0.2, 1.5]), np.array([[0, 3, 1, 2], [1, 1, 0, 3], [2, 0, 0, 1]])]
    got = s2s_ad.grad(fit_all, wrt=[0, 1, 2, 3])(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(fit_all, args, i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, wrt", rows_beyond([("hmm_objective", "log_pi,log_A,log_B"),
                                                 ("elbo_objective", "var_params")], 1))
# (elbo's file with --soak: elbo's gradient and vjp are checked in-process in the default run)
def test_grad_o_file_in_a_fresh_interpreter(tmp_path, fn, wrt):
    out = tmp_path / f"grad_{fn}.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"tests/real_style_src.py:{fn}", "--wrt", wrt, "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{ROOT!r}, {os.path.join(ROOT, 'tests')!r}, {str(tmp_path)!r}]
        assert "s2s_ad" not in sys.modules
        from array_oracle import fd_gradient
        from tests import real_style_src as R
        import grad_{fn} as g
        rng = np.random.default_rng(7)
        args = {{"hmm_objective": [rng.normal(size=3), rng.normal(size=(3, 3)),
                                   rng.normal(size=(3, 4)), np.array([1, 0, 3, 3, 2])],
                 "elbo_objective": [rng.normal(size=4) * 0.3, rng.normal(size=(5, 2)),
                                    rng.normal(size=4)],
                 "poisson_objective": [rng.normal(size=3) * 0.3, rng.normal(size=(6, 3)),
                                       np.array([0.0, 3.0, 1.0, 7.0, 2.0, 1.0])]}}["{fn}"]
        got = g.grad_{fn}(*args)
        got = got if isinstance(got, tuple) else (got,)
        for i, d in enumerate(got):
            np.testing.assert_allclose(d, fd_gradient(R.{fn}, args, i), rtol=1e-5, atol=1e-7)
        print("ok", "s2s_ad" in sys.modules)
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok False" in run.stdout, run.stderr


PIECES = '''
import numpy as np


def f(X, w):
    t = 0.0
    for r in X[1:]:
        t = t + np.dot(r, w) ** 2
    for r, s in zip(X[1:], X[:-1]):
        t = t + np.dot(r - s, w) ** 3
    for col in X.T:
        t = t + np.sum(col * w[0]) ** 2
    return t + sum(np.sin(np.dot(r, w)) for r in X[::2])
'''


def test_loops_and_generators_over_a_piece_of_an_array():
    """`for y in obs[1:]`, `zip(X[1:], X[:-1])`, `for col in X.T` and a
    generator over `X[::2]`: the rows of the piece, evaluated once before the
    loop (refused before: a loop had to name the array itself)."""
    from array_oracle import make_function
    f = make_function(PIECES)
    args = [RNG.normal(size=(5, 3)), RNG.normal(size=3)]
    got = s2s_ad.grad(f, wrt=[0, 1])(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)
    direction = RNG.normal(size=(5, 3))
    value, tangent = s2s_ad.jvp(f, wrt=[0])(*args, dX=direction)
    h = 1e-6
    step = (f(args[0] + h * direction, args[1]) - f(args[0] - h * direction, args[1])) / (2 * h)
    assert np.isclose(tangent, step, rtol=1e-6, atol=1e-8)


def test_a_piece_of_an_array_changed_in_the_loop_is_refused():
    from array_oracle import make_function
    f = make_function("import numpy as np\n\ndef f(X):\n    t = 0.0\n    X = X * 1.0\n"
                      "    for r in X[1:]:\n        X[0] = X[0] + r\n        t = t + np.sum(r)\n"
                      "    return t\n")
    with pytest.raises(SourceError, match="changed inside the loop that iterates over it"):
        s2s_ad.grad(f)(np.ones((3, 2)))


def test_a_list_of_arrays_of_different_shapes():
    """A plain list of weight arrays given where the code takes an array: it
    was stacked as one array by NumPy (an array gradient for equal shapes, a
    ValueError inside the generated code for others); it is now a structure
    parameter, its gradient a list of the same shapes."""
    weights = [RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=4), 0.3]
    y = RNG.normal(size=6)
    got = s2s_ad.grad(R.l2_of_weights)(weights, X, y)
    assert isinstance(got, list) and len(got) == 4
    for k, g in enumerate(got):
        def moved(w, k=k):
            return R.l2_of_weights(weights[:k] + [w] + weights[k + 1:], X, y)
        np.testing.assert_allclose(g, fd_gradient(moved, [weights[k]], 0), rtol=1e-5, atol=1e-7)
    same = [RNG.normal(size=3), RNG.normal(size=3)]
    got = s2s_ad.grad(lambda ws: sum(np.sum(np.sin(w)) for w in ws))(same)
    assert isinstance(got, list)
    for g, w in zip(got, same):
        np.testing.assert_allclose(g, np.cos(w), rtol=1e-12)
    value, pullback = s2s_ad.vjp(R.l2_of_weights, weights, X, y)
    np.testing.assert_allclose(pullback(1.0)[0][0], s2s_ad.grad(R.l2_of_weights)(weights, X, y)[0])


def test_hessian_through_gammaln_and_log_expit():
    """Second derivatives: gammaln's derivative digamma, and its own,
    polygamma(1, x), have rules; against central differences of the gradient."""
    params = np.array([0.4, -0.3])
    hess = np.asarray(s2s_ad.hessian(R.negbin_objective)(params, COUNTS))
    gradient = s2s_ad.grad(R.negbin_objective)
    for j in range(2):
        step = np.zeros(2)
        step[j] = 1e-5
        column = (gradient(params + step, COUNTS) - gradient(params - step, COUNTS)) / 2e-5
        np.testing.assert_allclose(hess[:, j], column, rtol=1e-5, atol=1e-7)


def test_product_of_a_tuple_of_module_data():
    # module data is read as arrays: np.prod of such a tuple is of the array NumPy
    # makes of it (was refused, asking for ints written in the function)
    from array_oracle import make_function
    f = make_function("import numpy as np\nSHAPES = [(2, 3), (3,)]\n\ndef f(x):\n"
                      "    t = 0.0\n    for shape in SHAPES:\n"
                      "        t = t + np.sum(x * x) / np.prod(shape)\n    return t\n")
    x = np.random.default_rng(7).normal(size=(2, 3))
    want = np.array([(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6
                     for e in np.eye(6).reshape(6, 2, 3)]).reshape(2, 3)
    np.testing.assert_allclose(s2s_ad.grad(f)(x), want, rtol=1e-6, atol=1e-9)


REPEATS = """
import numpy as np


def f(x, n):
    a = np.repeat(x, n)
    b = np.repeat(x * 2.0, len(x), axis=1)
    c = np.repeat(x[:1], x.shape[0], axis=0)
    return np.sum(np.sin(a) * np.arange(a.size)) + np.sum(b ** 2) + np.sum(c * x)
"""


def test_repeat_by_counts_known_when_the_code_runs():
    """np.repeat of a value with a gradient by an int known only when the
    code runs (`x.shape[0]`, `len(x)`, an int parameter): refused before (only
    a constant count, or an index array made of ints), now the np.take of the
    repeated index it is."""
    from array_oracle import make_function
    f = make_function(REPEATS)
    x = RNG.normal(size=(3, 4))
    for n in (2, 3):
        got = s2s_ad.grad(f)(x, n)
        np.testing.assert_allclose(got, fd_gradient(f, [x, n], 0), rtol=1e-5, atol=1e-7)
    direction = RNG.normal(size=(3, 4))
    _, tangent = s2s_ad.jvp(f, wrt=[0])(x, 2, dx=direction)
    h = 1e-6
    step = (f(x + h * direction, 2) - f(x - h * direction, 2)) / (2 * h)
    assert np.isclose(tangent, step, rtol=1e-6, atol=1e-8)


def test_lists_joined_with_plus():
    """`[...] + [...]` of lists known while lowering (comprehensions over a
    list of layers) and `(a,) + (b,)` of tuples: refused before ('a list is
    used where a number is expected'), now the joined list."""
    layers = _layers()
    got = s2s_ad.grad(R.flattened_penalty)(layers, X)
    flat = [a for item in got for a in item]
    for g, ref in zip(flat, _tree_fd(R.flattened_penalty, layers, (X,))):
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-7)


STATISTICS = """
import numpy as np


def f(x, w):
    r = x @ w
    spread = np.median(np.abs(r - np.median(r)))
    rows = np.sum(np.median(x, axis=0) ** 2) + np.sum(np.median(x * w, axis=-1))
    c = np.cov(x.T)
    return spread + rows + np.sum(c ** 2) + np.cov(r) + np.sum(np.cov(x, bias=True)) \\
        + np.sum(np.cov(x, ddof=0) * w[0])
"""


@pytest.mark.parametrize("rows", [5, 6])
def test_median_and_covariance(rows):
    """np.median (odd and even lengths, axis None, 0, -1) and np.cov (rows as
    variables, bias, ddof, a 1-D array), read as np.sort and the centred
    product: against central differences, through grad (and jvp for cov)."""
    from array_oracle import make_function
    f = make_function(STATISTICS)
    x, w = RNG.normal(size=(rows, 3)), RNG.normal(size=3)
    got = s2s_ad.grad(f, wrt=[0, 1])(x, w)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(f, [x, w], i), rtol=1e-5, atol=1e-7)
    # forward mode: np.cov, and np.median (np.sort: the tangent in np.argsort's order)
    cov = make_function("import numpy as np\n\ndef g(x):\n    return np.sum(np.cov(x.T) ** 2)\n",
                        "g")
    dx = RNG.normal(size=x.shape)
    _, tangent = s2s_ad.jvp(cov)(x, dx=dx)
    h = 1e-6
    assert np.isclose(tangent, (cov(x + h * dx) - cov(x - h * dx)) / (2 * h), rtol=1e-6,
                      atol=1e-8)
    _, tangent = s2s_ad.jvp(f, wrt=[0])(x, w, dx=dx)
    assert np.isclose(tangent, (f(x + h * dx, w) - f(x - h * dx, w)) / (2 * h), rtol=1e-6,
                      atol=1e-8)


def test_tuple_of_index_arrays_as_an_index_in_forward_mode():
    """x[iu] with iu = np.triu_indices(n, 1), a tuple of index arrays: was
    refused ('tuples inside an index are not supported'), now x[iu[0], iu[1]]."""
    pos, q = RNG.normal(size=(5, 2)), RNG.uniform(0.5, 1.5, size=5)
    direction = RNG.normal(size=(5, 2))
    _, tangent = s2s_ad.jvp(R.repulsion_energy, wrt=[0])(pos, q, dpositions=direction)
    h = 1e-6
    step = (R.repulsion_energy(pos + h * direction, q)
            - R.repulsion_energy(pos - h * direction, q)) / (2 * h)
    assert np.isclose(tangent, step, rtol=1e-6, atol=1e-8)


def test_assignment_through_a_tuple_of_index_arrays():
    from array_oracle import make_function
    f = make_function("import numpy as np\n\ndef f(x):\n    y = np.zeros((3, 3))\n"
                      "    iu = np.triu_indices(3, 1)\n    y[iu] = x * 2.0\n"
                      "    return np.sum(np.sin(y) * np.arange(9.0).reshape(3, 3))\n")
    x = RNG.normal(size=3)
    np.testing.assert_allclose(s2s_ad.grad(f)(x), fd_gradient(f, [x], 0), rtol=1e-6, atol=1e-8)


def test_fluid_advection_by_rounded_positions():
    """np.floor(src).astype(int): an integer index array, no derivative; np.mod
    of it as `%` (both refused before)."""
    vx, field = RNG.uniform(-0.4, 0.4, size=(4, 4)), RNG.normal(size=(4, 4))
    got = s2s_ad.grad(R.semi_lagrangian, wrt=[0, 1])(vx, field)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(R.semi_lagrangian, [vx, field], i),
                                   rtol=1e-5, atol=1e-7)


def test_convolution_of_a_signal():
    kernel, signal = RNG.normal(size=3), RNG.normal(size=8)
    got = s2s_ad.grad(R.smoothed_signal, wrt=[0, 1])(kernel, signal)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(R.smoothed_signal, [kernel, signal], i),
                                   rtol=1e-5, atol=1e-7)


@pytest.mark.xfail(strict=True, reason="a library function without a rule (scipy.optimize."
                   "rosen) is refused, located: s2s-ad reads the user's own functions only; "
                   "give it a rule (s2s_ad.defvjp) or write it out (tests/real_style_src.rosen)")
def test_a_library_objective_called_by_name():
    x = RNG.normal(size=4)
    np.testing.assert_allclose(s2s_ad.grad(R.library_objective)(x),
                               fd_gradient(R.library_objective, [x], 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, args, words", [
    (R.library_objective, lambda: [np.ones(3)], "the call `scipy_rosen` is not supported"),
])
def test_what_stays_refused_is_located(fn, args, words):
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(fn)(*args())
    text = str(info.value)
    assert "real_style_src.py:" in text and "^" in text and words in text, text


def test_triangle_indices_written_in_the_index():
    from array_oracle import make_function
    f = make_function("import numpy as np\n\ndef f(A):\n"
                      "    return np.sum(A[np.triu_indices(A.shape[0], 1)] ** 2)"
                      " + np.sum(np.exp(A[np.tril_indices(3)]))\n")
    A = RNG.normal(size=(3, 3))
    np.testing.assert_allclose(s2s_ad.grad(f)(A), fd_gradient(f, [A], 0), rtol=1e-6, atol=1e-8)
