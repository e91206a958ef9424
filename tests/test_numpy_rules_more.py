"""np.convolve, np.quantile / np.percentile / np.median, np.diff's
prepend / append (and an axis known only when the code runs), and
np.maximum.accumulate / np.minimum.accumulate, as objective
functions use them: in a helper, in a loop, with ``axis`` a parameter.

Every gradient against central differences in float64; forward mode
(``jvp``) against the same differences along a random direction, and the
Hessian-vector product (``hvp``, reverse over forward) against central
differences of the gradient; the helpers' own rules read back from a module
(``convolve_adjoint``, ``quantile_adjoint``, ``quantile_tangent``,
``running_extreme_adjoint``, ``running_extreme_tangent``) against central
differences; and each gradient on Dask arrays (where the function itself runs
on Dask: not np.maximum.accumulate, which Dask lacks) against the NumPy
gradient; the refusal of the ufunc methods without a rule, by name."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_gradients, fd_gradient
from tests.modules import import_source
from s2s_ad.rules.numpy_helpers import HELPERS

RNG = np.random.default_rng(20270105)

SRC = '''
import numpy as np

W = np.arange(1.0, 40.0)


def conv_full(a, v):
    return np.sum(np.sin(np.convolve(a, v)) * W[:len(a) + len(v) - 1])


def conv_same(a, v):
    return np.sum(np.convolve(a, v, mode="same") ** 2)


def conv_valid(a, v):
    return np.sum(np.cos(np.convolve(a, v, "valid")) * W[:abs(len(a) - len(v)) + 1])


def smooth(y, k):
    return np.convolve(y, k, mode="same")


def conv_loop(a, v):
    s = 0.0
    for i in range(3):
        a = smooth(a, v) * 0.5 + a
        s = s + np.sum(a ** 2)
    return s


def quantile_axis(x):
    return np.sum(np.sin(np.quantile(x, 0.7, axis=0)) * W[:x.shape[1]])


def quantiles_keep(x):
    return np.sum(np.cos(np.quantile(x, [0.1, 0.5, 0.95], axis=-1, keepdims=True)) * x)


def percentiles(x):
    return np.sum(np.sin(np.percentile(x, [25, 75], axis=0)) * np.array([[1.0], [2.0]]))


def quantile_methods(x):
    return (np.sum(np.quantile(x, 0.35, axis=(0, 2)) ** 2) + np.quantile(x, 0.6, method="lower")
            + np.quantile(x, 0.6, method="higher") ** 2
            + np.quantile(x, 0.6, axis=1, method="midpoint")[0, 0] ** 2)


def medians(x):
    return np.sin(np.median(x)) + np.sum(np.median(x, axis=0) ** 2) \\
        + np.sum(np.cos(np.median(x, axis=1, keepdims=True)) * x)


def robust(r):
    return np.median(np.abs(r - np.median(r)))


def robust_rows(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + robust(x[i]) * np.percentile(x[i], 90.0)
    return s


def along(x, k: int):
    return np.sum(np.sin(np.median(x, axis=k)) + np.quantile(x, 0.2, axis=k) ** 3) \\
        + np.sum(np.sin(np.diff(x, axis=k)) ** 2)


def diff_prepend(x):
    return np.sum(np.sin(np.diff(x, prepend=0.0)) * W[:x.shape[-1]])


def diff_ends(x, p, a):
    return np.sum(np.sin(np.diff(x, n=2, axis=0, prepend=p, append=a)) ** 2)


def diff_along(x, p, k: int):
    return np.sum(np.sin(np.diff(x, n=2, axis=k, prepend=p, append=np.cos(p) * 0.5)) ** 2)


def increments(y, y0):
    return np.diff(y, prepend=y0)


def diff_loop(x, y0):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(increments(x[i], y0) ** 2) * (i + 1.0)
    return s


def running_max(x):
    return np.sum(np.sin(np.maximum.accumulate(x)).T * W[:x.shape[0]])


def running_axes(x):
    return np.sum(np.cos(np.minimum.accumulate(x, axis=1)) * x) \
        + np.sum(np.maximum.accumulate(x, -1) ** 2 * x) + np.sum(np.maximum.accumulate(x) ** 3)


def drawdown(p):
    return p - np.maximum.accumulate(p)


def drawdown_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(np.sin(drawdown(x[i] * (i + 1.0)))) * (i + 0.5)
    return s


def running_along(x, k: int):
    return np.sum(np.sin(np.maximum.accumulate(x, axis=k)) * x
                  + np.minimum.accumulate(x * x, k) ** 2)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("more_rules")), SRC, "numpy_rules_more_src")


def _n(*shape):
    return RNG.normal(size=shape)


# (function, arguments, the positions differentiated)
CASES = [
    *[(name, [_n(n), _n(m)], [0, 1]) for name in ("conv_full", "conv_same", "conv_valid")
      for n, m in ((5, 3), (3, 5), (4, 4), (6, 2), (1, 3))],
    ("conv_loop", [_n(6), _n(3)], [0, 1]),
    ("quantile_axis", [_n(5, 4)], [0]),
    ("quantiles_keep", [_n(3, 6)], [0]),
    ("percentiles", [_n(6, 3)], [0]),
    ("quantile_methods", [_n(3, 4, 5)], [0]),
    ("medians", [_n(4, 3)], [0]),
    ("medians", [_n(5, 4)], [0]),
    ("robust_rows", [_n(3, 7)], [0]),
    ("diff_prepend", [_n(3, 5)], [0]),
    ("diff_ends", [_n(4, 5), _n(2, 5), 0.4], [0, 1, 2]),
    ("diff_ends", [_n(4, 5), _n(1, 5), _n(1, 5)], [0, 1, 2]),
    ("diff_loop", [_n(3, 5), 0.4], [0, 1]),
    *[("along", [_n(4, 5), k], [0]) for k in (0, 1, -1, -2)],
    *[("diff_along", [_n(4, 3), p, k], [0, 1]) for k, p in ((0, 0.3), (1, _n(4, 2)),
                                                             (-1, 0.7), (0, _n(2, 3)))],
    ("running_max", [_n(7)], [0]),
    ("running_max", [_n(6, 3)], [0]),
    ("running_axes", [_n(5, 4)], [0]),
    ("drawdown_loop", [_n(3, 8)], [0]),
    *[("running_along", [_n(3, 4, 5), k], [0]) for k in (0, 1, 2, -1, -3)],
]
IDS = [f"{name}-{k}" for k, (name, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("name, args, wrt", CASES, ids=IDS)
def test_gradient_against_central_differences(mod, name, args, wrt):
    assert_gradients(getattr(mod, name), args, wrt, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name, args, wrt", CASES, ids=IDS)
def test_jvp_and_hvp_against_central_differences(mod, name, args, wrt):
    f = getattr(mod, name)
    params = list(inspect.signature(f).parameters)
    i = wrt[0]
    v = RNG.normal(size=np.shape(args[i]))
    v = v if np.ndim(args[i]) else float(v)
    value, tangent = s2s_ad.jvp(f, wrt=i)(*args, **{"d" + params[i]: v})
    assert np.isclose(value, f(*args), rtol=1e-12)
    want = float(np.sum(fd_gradient(f, args, i) * v))
    assert np.isclose(float(tangent), want, rtol=1e-6, atol=1e-8)
    g = s2s_ad.grad(f, wrt=i)
    got = s2s_ad.hvp(f, wrt=i)(*args, v)

    def along_v(*a):
        return float(np.sum(g(*a) * v))
    np.testing.assert_allclose(np.asarray(got, dtype=float),
                               fd_gradient(along_v, args, i, h=1e-5), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name, args, wrt", CASES, ids=IDS)
def test_gradient_runs_on_dask(mod, name, args, wrt):
    da = pytest.importorskip("dask.array")
    f = getattr(mod, name)
    dargs = [da.from_array(a, chunks=2) if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        # Dask computes what it lacks (np.convolve, np.size) with NumPy, and warns
        warnings.simplefilter("ignore", FutureWarning)
        try:
            value = f(*dargs)
            np.asarray(value)
        except (NotImplementedError, TypeError) as e:
            # np.median / np.quantile without an axis; np.maximum.accumulate (TypeError)
            pytest.skip(f"the function itself does not run on Dask: {e}")
        got = s2s_ad.grad(f, wrt=tuple(wrt))(*dargs)
        want = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
        for i, g, w in zip(wrt, got, want):
            if isinstance(value, da.Array) and isinstance(dargs[i], da.Array):
                assert isinstance(g, da.Array), "the gradient stays in Dask where the function does"
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-12)


def test_diff_ends_of_another_shape_raise_as_numpy(mod):
    """An array given as prepend/append is joined as it is: a shape NumPy's
    np.concatenate refuses is refused where the gradient runs too."""
    args = [_n(4, 5), _n(2, 1), 0.4]
    with pytest.raises(ValueError):
        mod.diff_ends(*args)
    with pytest.raises(ValueError):
        s2s_ad.grad(mod.diff_ends, wrt=(0, 1))(*args)


def test_quantile_ties_split_like_max(mod):
    """Where elements tie for an order statistic its adjoint is split evenly
    between them, as np.max's is."""
    x = np.array([1.0, 2.0, 2.0, 2.0, 5.0])
    got = s2s_ad.grad(mod.quantile_axis)(np.stack([x, x + 1.0]).T)
    want = np.cos(np.quantile(np.stack([x, x + 1.0]).T, 0.7, axis=0)) * np.array([1.0, 2.0])
    np.testing.assert_allclose(got[1:4], np.broadcast_to(want / 3, (3, 2)))
    assert np.all(got[[0, 4]] == 0.0)


@pytest.mark.parametrize("u", ["maximum", "minimum"])
def test_running_extreme_ties_split_like_max(u, tmp_path):
    """Where several elements up to k equal the running extreme at k, g[k] is
    split evenly between them, as np.max splits it (the adjoint at k is
    np.max's of x[:k + 1]): worked out by hand here."""
    m = import_source(str(tmp_path), "import numpy as np\n\n\ndef f(x, c):\n"
                      f"    return np.sum(np.{u}.accumulate(x) * c)\n", f"ties_{u}")
    x = np.array([1.0, 3.0, 2.0, 3.0, 3.0, 5.0, 5.0, 1.0, 5.0])
    x = x if u == "maximum" else -x
    c = np.arange(1.0, 10.0)
    # out = [1, 3, 3, 3, 3, 5, 5, 5, 5]: x[1] gets c[1] + c[2] + c[3]/2 + c[4]/3, ...
    want = np.array([1.0, 2 + 3 + 4 / 2 + 5 / 3, 0.0, 4 / 2 + 5 / 3, 5 / 3,
                     6 + 7 / 2 + 8 / 2 + 9 / 3, 7 / 2 + 8 / 2 + 9 / 3, 0.0, 9 / 3])
    np.testing.assert_allclose(s2s_ad.grad(m.f)(x, c), want, rtol=1e-14)
    v = np.linspace(-1.0, 1.0, 9)
    _, tangent = s2s_ad.jvp(m.f, wrt=0)(x, c, dx=v)
    assert np.isclose(float(tangent), float(np.sum(want * v)), rtol=1e-13)


def test_running_extreme_nan_gives_nan(tmp_path):
    """From a NaN on, the running maximum is NaN: those elements get nan, as
    np.max gives every element of a slice holding a NaN; before it, the
    gradient is unchanged."""
    m = import_source(str(tmp_path), "import numpy as np\n\n\ndef f(x):\n"
                      "    return np.sum(np.maximum.accumulate(x))\n", "running_nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = s2s_ad.grad(m.f)(np.array([1.0, 0.0, 2.0, np.nan, 3.0]))
    np.testing.assert_array_equal(got[:3], [2.0, 0.0, 1.0])
    assert np.all(np.isnan(got[3:]))


def _helpers_module(folder, label: str, body: str, names: tuple):
    text = "import numpy as np\n\n" + "".join(
        HELPERS[n] for n in ("add_over", "unbroadcast") + names) + "\n\n" + body
    return import_source(str(folder), text, label)


QUANTILE = ("quantile_weights", "quantile_adjoint", "quantile_tangent")
RUNNING = ("running_runs", "running_extreme_adjoint", "running_extreme_tangent")
OWN = [
    *[(f"convolve_adjoint(g * g, x, y * y, {mode!r}, 0)", length, (n,), (m,), ("g", "y"),
       ("convolve_adjoint",))
      for mode, n, m, length in (("full", 5, 3, 7), ("same", 3, 5, 5), ("valid", 5, 3, 3))],
    *[(f"convolve_adjoint(g * g, x * x, y, {mode!r}, 1)", length, (n,), (m,), ("g", "x"),
       ("convolve_adjoint",))
      for mode, n, m, length in (("full", 4, 4, 7), ("same", 5, 3, 5), ("valid", 3, 5, 3))],
    ("quantile_adjoint(g * g, x, 0.3, 1, False, 'linear')", 3, (3, 5), None, ("g",), QUANTILE),
    ("quantile_adjoint(g * g, x, np.array([0.2, 0.9]), None, False, 'linear')", 2, (3, 4), None,
     ("g",), QUANTILE),
    ("quantile_adjoint(g * g, x, 0.5, 0, True, 'midpoint')", (1, 4), (5, 4), None, ("g",),
     QUANTILE),
    ("quantile_tangent(g * g, x, 0.3, 1, False, 'linear')", (3, 5), (3, 5), None, ("g",),
     QUANTILE),
    ("quantile_tangent(g * g, x, np.array([0.2, 0.9]), -1, True, 'linear')", (3, 4), (3, 4),
     None, ("g",), QUANTILE),
    *[(f"running_extreme_{which}(g * g, x, np.{u}.accumulate(x, axis={k}), {k})", (4, 5),
       (4, 5), None, ("g",), RUNNING)
      for which, u, k in (("adjoint", "maximum", 0), ("adjoint", "minimum", 1),
                          ("tangent", "maximum", -1), ("tangent", "minimum", 0))],
]


@pytest.mark.parametrize("expr, gs, xs, ys, wrt, names", OWN,
                         ids=[f"{c[0].split('(')[0]}-{k}" for k, c in enumerate(OWN)])
def test_own_helpers_read_back(expr, gs, xs, ys, wrt, names, tmp_path):
    """A gradient module read back from its file calls these helpers: each is
    a primitive (s2s_ad/rules/own.py) whose adjoint and tangent are checked
    against central differences of Σ c · expr."""
    label = f"more_own_{abs(hash((expr, xs))) % 10**8}"
    g = RNG.uniform(0.5, 1.5, gs)
    x = RNG.uniform(0.5, 1.5, xs)
    y = RNG.uniform(0.5, 1.5, ys) if ys else 1.1
    probe = _helpers_module(tmp_path, label + "_probe", f"def f(g, x, y):\n    return {expr}\n",
                            names)
    c = RNG.normal(size=np.shape(probe.f(g, x, y)))
    m = _helpers_module(tmp_path, label, f"def f(g, x, y, c):\n    return np.sum(({expr}) * c)\n",
                        names)
    args, params = [g, x, y, c], ["g", "x", "y", "c"]
    got = s2s_ad.grad(m.f, wrt=tuple(wrt))(*args)
    for w, d in zip(wrt, got):
        np.testing.assert_allclose(d, fd_gradient(m.f, args, params.index(w)), rtol=1e-6,
                                   atol=1e-8)
    direction = {w: RNG.normal(size=np.shape(args[params.index(w)])) for w in wrt}
    _, tangent = s2s_ad.jvp(m.f, wrt=tuple(wrt))(*args, **{"d" + w: direction[w] for w in wrt})
    want = sum(float(np.sum(fd_gradient(m.f, args, params.index(w)) * direction[w]))
               for w in wrt)
    assert np.isclose(float(tangent), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("body, message", [
    ("np.convolve(x, x, mode=m)", "`mode` of `np.convolve` must be a constant string"),
    ("np.quantile(x, 0.5, method='nearest')", "`method` of `np.quantile` must be"),
    ("np.quantile(x, 0.5, axis=k, keepdims=True)", "takes a constant `axis` here"),
    *[(f"np.{name}(x{more})", f"the ufunc method `np.{name}` is not supported .*"
       r"`np\.maximum\.accumulate`.*s2s_ad\.defvjp, see docs/custom_rules\.md")
      for name, more in (("maximum.reduceat", ", [0, 2]"), ("add.outer", ", x"),
                         ("subtract.accumulate", ""), ("multiply.reduceat", ", [0]"),
                         ("maximum.outer", ", x"), ("logical_xor.reduce", ""))],
    ("np.add.at(x, [0], 1.0)", r"`np\.add\.at` is supported as a statement"),
    ("np.maximum.accumulate(x, axis=None)", r"`np\.maximum\.accumulate` takes one int axis"),
    ("np.minimum.accumulate(x, (0,))", r"`np\.minimum\.accumulate` takes one int axis"),
    ("np.minimum.accumulate(x, dtype=float)", "the keyword argument 'dtype' is not supported"),
])
def test_refusals_are_located(body, message, tmp_path):
    m = import_source(str(tmp_path), "import numpy as np\n\n\ndef f(x, m: int, k: int):\n"
                      f"    return np.sum({body})\n", f"refused_{abs(hash(body)) % 10**8}")
    with pytest.raises(s2s_ad.SourceError, match=r"refused_\d+\.py:5:\d+: .*" + message):
        s2s_ad.grad(m.f)(np.ones(4), 1, 0)


def test_method_of_a_scipy_ufunc_refused_by_its_own_name(tmp_path):
    pytest.importorskip("scipy.special")
    m = import_source(str(tmp_path), "import numpy as np\nfrom scipy import special\n\n\n"
                      "def f(x):\n    return np.sum(special.expit.accumulate(x))\n",
                      "refused_scipy_ufunc")
    with pytest.raises(s2s_ad.SourceError, match=r"refused_scipy_ufunc\.py:6:\d+: .*the ufunc "
                       r"method `special\.expit\.accumulate` is not supported"):
        s2s_ad.grad(m.f)(np.ones(3))
