"""autograd-style NumPy code (tests/autograd_style_src.py): a Student-t
log-density, a loop over ``zip(*helper(params))``, NumPy functions passed as
function values or left to a parameter's default; each gradient against
central finite differences in float64 (tests/array_oracle.py). Where autograd
is installed, the same code written with ``autograd.numpy`` and
``autograd.scipy.stats`` is read as NumPy and SciPy."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function

pytest.importorskip("scipy")

from tests import autograd_style_src as A  # noqa: E402

RNG = np.random.default_rng(48)


def _agrees(fn, args, wrt):
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*args)
    for i, g in zip(wrt, got):
        np.testing.assert_allclose(g, fd_gradient(fn, args, i), rtol=1e-6, atol=1e-8)


def _tree_agrees(fn, params, *rest, h=1e-6):
    got = s2s_ad.grad(fn)(params, *rest)
    for key, value in params.items():
        want = np.zeros_like(value)
        for k in np.ndindex(*value.shape):
            up = {**params, key: value.copy()}
            down = {**params, key: value.copy()}
            up[key][k] += h
            down[key][k] -= h
            want[k] = (fn(up, *rest) - fn(down, *rest)) / (2 * h)
        np.testing.assert_allclose(got[key], want, rtol=1e-6, atol=1e-8)


def test_student_t_log_density_with_fitted_degrees_of_freedom():
    x = RNG.normal(size=(7, 3))
    y = RNG.normal(size=7)
    params = np.concatenate([RNG.normal(size=3) * 0.5, [0.9, -0.2]])
    from scipy.stats import t
    w, df, scale = params[:3], np.exp(params[3]), np.exp(params[4])
    np.testing.assert_allclose(A.robust_regression(params, x, y),
                               -np.sum(t.logpdf(y, df, x @ w, scale)))
    _agrees(A.robust_regression, [params, x, y], (0, 1, 2))


def test_loop_over_zip_of_a_spread_helper_result():
    params = {"logits": RNG.normal(size=3), "centres": RNG.normal(size=3),
              "widths": RNG.uniform(0.5, 1.5, size=3)}
    _tree_agrees(A.mixture_loglik, params, RNG.normal(size=5))


def test_numpy_function_as_default_and_as_argument():
    args = [RNG.normal(size=(3, 4)) * 0.5, RNG.normal(size=(4, 2)) * 0.5, RNG.normal(size=(5, 3))]
    _agrees(A.two_layers, args, (0, 1, 2))
    _agrees(A.passed_ufunc, [RNG.uniform(0.1, 1.0, size=4)], (0,))


def test_math_function_passed_as_a_function_value():
    import math
    f = make_function("def call(g, t):\n    return g(t) * t\n"
                      "def f(x):\n    return call(math.sin, x)\n", env={"math": math})
    assert abs(s2s_ad.grad(f)(0.5) - (math.cos(0.5) * 0.5 + math.sin(0.5))) < 1e-12


def test_a_spread_of_unknown_items_is_refused_located():
    f = make_function("def f(x, n: int):\n    t = 0.0\n"
                      "    for a, b in zip(*[x] * n):\n        t = t + a * b\n    return t\n")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(f)(np.ones(3), 2)
    assert "^" in str(info.value) and ":3:" in str(info.value), str(info.value)


def test_autograd_numpy_and_scipy_stats_read_as_numpy_and_scipy():
    pytest.importorskip("autograd")
    source = (
        "import autograd.numpy as anp\n"
        "import autograd.scipy.stats.multivariate_normal as mvn\n"
        "from autograd.scipy.stats import norm, t\n"
        "def f(mean, log_scale, data):\n"
        "    cov = np.eye(2) * anp.exp(log_scale)\n"
        "    return (anp.sum(mvn.logpdf(data, mean, cov)) + anp.sum(norm.logpdf(mean, 0.0, 2.0))\n"
        "            + anp.sum(t.logpdf(data[:, 0], 3.0, mean[0], anp.exp(log_scale))))\n")
    f = make_function(source)
    args = [RNG.normal(size=2), 0.3, RNG.normal(size=(6, 2))]
    import autograd
    want = autograd.grad(f, (0, 1, 2))(*args)
    got = s2s_ad.grad(f, wrt=(0, 1, 2))(*args)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)


RANDOM_SOURCES = [
    ("def f(w):\n    e = np.random.randn(3)\n    return np.sum(w * e)\n", {}, ":2:9:"),
    ("def f(w, rs):\n    e = rs.normal(size=3)\n    return np.sum(w * e)\n", {}, ":2:9:"),
    ("def f(w):\n    e = RS.randn(3)\n    return np.sum(w * e)\n",
     {"RS": np.random.RandomState(0)}, ":2:9:"),
    ("def make(rs):\n    def f(w):\n        return np.sum(w * rs.randn(3))\n    return f\n",
     {}, ":2:5:"),
]


@pytest.mark.parametrize("source, env, where", RANDOM_SOURCES,
                         ids=["np.random", "parameter", "module", "closure"])
def test_random_draws_inside_are_refused_with_the_way_out(source, env, where):
    """A draw inside would differ between the forward pass and every other
    call of the function: refused, located, saying to draw outside (the
    closure's message said to pass the RandomState as a parameter, whose
    method was then refused listing the methods of arrays)."""
    if source.startswith("def make"):
        f = make_function(source, name="make", env=env)(np.random.RandomState(0))
    else:
        f = make_function(source, env=env)
    args = [np.ones(3)] + ([np.random.RandomState(0)] if "rs)" in source.split("\n")[0] else [])
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(f)(*args)
    text = str(info.value)
    assert where in text.splitlines()[0] and "^" in text, text
    assert "draw them outside it and pass them in" in text, text


def test_autograd_functions_without_a_twin_are_named_as_autograd_s():
    pytest.importorskip("autograd")
    source = ("from autograd.misc.fixed_points import fixed_point\n"
              "def step(a):\n    return lambda x: 0.5 * (x + a / x)\n"
              "def dist(x, y):\n    return abs(x - y)\n"
              "def f(a):\n    return fixed_point(step, a, 1.0, dist, 1e-8)\n")
    f = make_function(source)
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(f)(2.0)
    text = str(info.value)
    assert ":7:12:" in text.splitlines()[0] and "autograd-only" in text, text
    assert "JAX" not in text and "autograd.misc.fixed_points.fixed_point" in text, text


def test_a_factory_closure_reading_its_numbers_called_by_the_function():
    """The closures `make_model` returns read its ints and float: constants
    of the helpers' code (were refused: captured data are passed to the
    function you differentiate only); a closure made again, or a number it
    reads rebound, gives new code, also to the derivative made before."""
    args = [RNG.normal(size=8) * 0.5, RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))]
    g = s2s_ad.grad(A.model_loss)
    np.testing.assert_allclose(g(*args), fd_gradient(A.model_loss, args, 0), rtol=1e-6, atol=1e-8)
    saved = A.unpack_model, A.predict_model, A.set_model_scale
    try:
        A.set_model_scale(0.5)  # the cell `predict` reads, rebound
        want = fd_gradient(A.model_loss, args, 0)
        np.testing.assert_allclose(g(*args), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s_ad.grad(A.model_loss)(*args), want, rtol=1e-6, atol=1e-8)
        A.unpack_model, A.predict_model, A.set_model_scale = A.make_model(2, 2, 2.0)
        args[0] = RNG.normal(size=6) * 0.5  # another closure, other shapes
        args[1] = RNG.normal(size=(5, 2))
        want = fd_gradient(A.model_loss, args, 0)
        np.testing.assert_allclose(g(*args), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s_ad.grad(A.model_loss)(*args), want, rtol=1e-6, atol=1e-8)
    finally:
        A.unpack_model, A.predict_model, A.set_model_scale = saved
        A.set_model_scale(1.5)


def test_a_factory_closure_capturing_an_array_called_by_the_function_stays_refused():
    f = make_function("def make(w):\n    def h(x):\n        return np.sum(w * x)\n    return h\n"
                      "H = make(np.ones(3))\n"
                      "def f(x):\n    return H(x) * 2.0\n")
    with pytest.raises(s2s_ad.SourceError, match="captures data"):
        s2s_ad.grad(f)(np.ones(3))


FLATTENED = (
    "from autograd.misc import flatten\n"
    "def weighted(params):\n"
    "    flat, _ = flatten(params)\n"
    "    return np.sum(np.arange(1.0, flat.size + 1.0) * np.sin(flat))\n"
    "def first(params):\n"
    "    return np.sum(flatten(params)[0] ** 3)\n"
    "def used(params):\n"
    "    flat, unflatten = flatten(params)\n"
    "    return np.sum(unflatten(flat * 2.0)[0])\n")


@pytest.mark.parametrize("name", ["weighted", "first"])
def test_autograd_flatten_of_a_structure_parameter(name):
    """autograd's `flatten`: the leaves raveled and joined in its order (a
    dict's by sorted key, here not the order they were written in), weighted
    by position so that another order gives another gradient."""
    pytest.importorskip("autograd")
    f = make_function(FLATTENED, name=name)
    params = {"w": [(RNG.normal(size=(2, 3)), RNG.normal(size=3)), (RNG.normal(size=3), 0.4)],
              "a": RNG.normal(size=2)}
    got = s2s_ad.grad(f)(params)
    h = 1e-6
    import autograd
    want = autograd.grad(f)(params)
    from autograd.misc import flatten
    flat_got, flat_want = flatten(got)[0], flatten(want)[0]
    np.testing.assert_allclose(flat_got, flat_want, rtol=1e-10, atol=1e-12)
    flat, unflatten = flatten(params)
    for k in range(flat.size):
        e = np.zeros_like(flat)
        e[k] = h
        fd = (f(unflatten(flat + e)) - f(unflatten(flat - e))) / (2 * h)
        assert abs(flat_got[k] - fd) < 1e-6 * max(1.0, abs(fd)), (k, flat_got[k], fd)


def test_autograd_flatten_whose_unflatten_is_used_is_refused_located():
    pytest.importorskip("autograd")
    f = make_function(FLATTENED, name="used")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(f)([np.ones(2), np.ones(3)])
    text = str(info.value)
    assert ":8:23:" in text.splitlines()[0] and "function it returns is not used" in text, text
