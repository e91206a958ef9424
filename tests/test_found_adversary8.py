"""The eighth adversarial round: about 200 NumPy objectives written as
scientific code is (mixtures, k-means, least squares, LSTM/GRU loops, ODE
integrators, bundle adjustment, attention, convolutions; dict, NamedTuple
and dataclass parameters; the CLI module), about 380 derivative checks.
Found, each checked here against central differences:

* **wrong gradients**: ``np.linspace(0.0, a, 5)`` and ``np.arange(a, a +
  1.0, 0.25)`` with a differentiated endpoint gave 0.0 (1.323 and 3.002 are
  right): both were rules of no derivative, so the adjoint of a float
  operand was dropped. ``arange``'s start and step and ``linspace``'s start
  and stop (numbers or arrays) have their derivatives now, in reverse and
  forward mode, and the gradient file reads back (reverse over it);
* **a crash in the generated code**: ``np.cross`` of 2-vectors (NumPy gives
  the z component alone) raised ``ValueError`` in the reverse sweep;
* **refusals of ordinary code**: ``np.any``/``np.all`` (and the methods) as
  tests had no rule; a reduction of a list of arrays (``np.sum(hs, axis=0)``)
  and ``for k, v in d.items()`` (``.values()``, ``.keys()``) were refused,
  and so were an array made by arithmetic (``Y = x * 1.0``) written by index,
  ``np.add.at`` and JAX's ``.at[idx].add(v)`` with repeated indices.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source, on_path

SRC = '''
import numpy as np


def spaced(a):
    return np.sum(np.sin(np.linspace(0.0, a, 5)) * np.linspace(a, 1.0, 5))


def ranged(a):
    return np.sum(np.sin(np.arange(a, a + 1.0, 0.25))) * np.sum(np.arange(0.0, 2.0, a))


def counted(a):
    return np.sum(np.cos(np.arange(a * 3.0)))


def spaced_arrays(a):
    v = np.array([a, 2.0 * a])
    return np.sum(np.sin(np.linspace(v, v * 3.0, 4)))


def one_point(a):
    return np.sum(np.sin(np.linspace(a, 2.0, 1)))


def tested_in_a_loop(x):
    s = 0.0
    for i in range(3):
        if np.all(x * i < 1.5) and not (x > 0.85).any():
            s = s + np.sum(np.sin(x * i))
    m = x.reshape(2, 2)
    keep = np.any(m > 0.5, axis=1, keepdims=True)
    return s + np.sum(np.where(keep, m ** 2, m))


def reduced_lists(x, n: int):
    hs = []
    for i in range(n):
        hs.append(np.tanh(x * i) + 1.0)
    fixed = [x, np.sin(x), x * x]
    return np.sum(np.sum(hs, axis=0) ** 2) + np.sum(np.mean(hs, axis=0)) \
        + np.sum(np.max(fixed, axis=0)) + np.prod(np.std(fixed, axis=1)) \
        + np.sum([np.sum(x), x[0] * 2.0]) + np.mean([v * v for v in x])


def dict_views(x):
    p = {"a": x, "b": 2.0 * x}
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(v ** 2) * (2.0 if k == "a" else 1.0)
    return s + sum(np.sum(v) for v in p.values()) + sum(np.sum(p[k] ** 3) for k in p.keys())


def over_params(params, x):
    out = x
    for name, w in params.items():
        out = np.tanh(out * w) + (0.5 if name == "w1" else 0.0)
    return np.sum(out)


def written_copy(x):
    Y = x * 1.0
    for i in range(1, 4):
        Y[i] = Y[i] + Y[i - 1] * 0.5
    Z = -x
    j = 1
    while j < 4:
        Z[j] = Z[j] * Z[j - 1]
        j += 1
    return np.sum(Y ** 2) + np.sum(Z)


def written_alias(x):
    Y = x + 0.0
    Z = Y
    for i in range(1, 4):
        Y[i] = Y[i] + 1.0
    return np.sum(Z * x)


def added_at(x):
    y = np.zeros(3)
    np.add.at(y, np.array([0, 1, 1, 2]), x)
    z = np.zeros(3)
    idx = np.arange(4) % 3
    k = 0
    while k < 3:
        np.add.at(z, idx, x * (k + 1.0))
        if np.sum(z) > 4.0:
            break
        k += 1
    w = np.zeros(3)
    if x[0] > 0.1:
        np.add.at(w, np.array([0, 0, 2, 1]), x)
    else:
        np.add.at(w, 1, x[0])
    return np.sum(y ** 2) + np.sum(np.sin(z)) + np.sum(w ** 3)


def added_at_given(x, idx):
    y = np.zeros(3)
    for k in range(2):
        np.add.at(y, idx, x * (k + 1.0))
    return np.sum(y ** 3)


def added_at_a_list(x):
    # NumPy's own example of np.add.at: a list of indices repeating one
    a = np.zeros(4)
    for k in range(2):
        np.add.at(a, [0, 1, 2, 2], x[:4] * (k + 1.0))
    return np.sum(a ** 2)


def added_into_the_argument(x):
    np.add.at(x, np.array([0, 1]), 1.0)
    return np.sum(x)


def crossed(a, b):
    return np.sum(np.cross(a, b) ** 2)
'''

RNG = np.random.default_rng(808)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("adv8")), SRC, "adversary8_src")


def _fd(f, a, h=1e-6):
    return (f(a + h) - f(a - h)) / (2 * h)


@pytest.mark.parametrize("name", ["spaced", "ranged", "counted", "spaced_arrays", "one_point"])
@pytest.mark.parametrize("a", [0.35, 0.8])
def test_endpoints_of_linspace_and_arange(mod, name, a):
    fn = getattr(mod, name)
    want = _fd(fn, a)
    assert np.isclose(s2s_ad.grad(fn)(a), want, rtol=1e-6, atol=1e-9)
    assert np.isclose(s2s_ad.jvp(fn)(a, da=1.0)[1], want, rtol=1e-6, atol=1e-9)
    g = s2s_ad.grad(fn)
    assert np.isclose(s2s_ad.jvp(g)(a, da=1.0)[1], _fd(g, a, 1e-5), rtol=1e-5, atol=1e-6)


def test_the_gradient_file_reads_back(tmp_path, mod):
    with on_path(tmp_path, "adv8_grad", s2s_ad.gradient_source(mod.spaced_arrays)):
        probe = import_source(str(tmp_path), "from adv8_grad import grad_spaced_arrays\n\n\n"
                              "def probe(a):\n    return grad_spaced_arrays(a)\n", "adv8_probe")
        g = s2s_ad.grad(mod.spaced_arrays)
        assert np.isclose(s2s_ad.grad(probe.probe)(0.35), _fd(g, 0.35, 1e-5), rtol=1e-5)


def test_np_any_and_all_as_tests(tmp_path, mod):
    """``if np.all(...)``, ``(x > c).any()``, ``np.any(m, axis=1, keepdims=True)``
    (refused before: "`np.any` has no derivative rule"): gradient, ``hvp``, and
    reverse over the gradient file, whose loop recomputes the test."""
    fn = mod.tested_in_a_loop
    x, v = np.array([0.3, 0.6, 0.2, 0.7]), np.array([1.0, -0.5, 0.3, 0.2])
    g = s2s_ad.grad(fn)
    np.testing.assert_allclose(g(x), fd_gradient(fn, [x], 0), rtol=1e-6, atol=1e-9)
    want = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(s2s_ad.hvp(fn)(x, v), want, rtol=1e-5, atol=1e-7)
    with on_path(tmp_path, "adv8_tests_grad", s2s_ad.gradient_source(fn, arrays=["x"])):
        probe = import_source(str(tmp_path), "import numpy as np\n"
                              "from adv8_tests_grad import grad_tested_in_a_loop\n\n\n"
                              "def probe(x, v):\n"
                              "    return np.sum(grad_tested_in_a_loop(x) * v)\n",
                              "adv8_tests_probe")
        np.testing.assert_allclose(s2s_ad.grad(probe.probe)(x, v), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n", [1, 3])
def test_reductions_of_lists_of_arrays(mod, n):
    """``np.sum(hs, axis=0)``, ``np.mean``, ``np.max``, ``np.std`` of a list of
    arrays (grown at run time, or built in the function): the array NumPy
    makes of the list (refused before: "a list is used where a number is
    expected"); gradient and ``hvp``."""
    fn = mod.reduced_lists
    x, v = np.array([0.3, 0.6, 0.2, 0.7]), np.array([1.0, -0.5, 0.3, 0.2])
    g = s2s_ad.grad(fn)
    np.testing.assert_allclose(g(x, n), fd_gradient(lambda a: fn(a, n), [x], 0), rtol=1e-6,
                               atol=1e-9)
    want = (g(x + 1e-5 * v, n) - g(x - 1e-5 * v, n)) / 2e-5
    np.testing.assert_allclose(s2s_ad.hvp(fn)(x, n, v), want, rtol=1e-5, atol=1e-6)


def test_dict_views(mod):
    """``for k, v in d.items()``, ``d.values()``, ``d.keys()`` then ``d[k]``, of a
    dict built in the function and of a dict parameter (was refused: "a tuple
    as the loop variable needs `enumerate(xs)` ...", "the method `.values()` is
    not supported")."""
    x = np.array([0.3, 0.6, 0.2, 0.7])
    np.testing.assert_allclose(s2s_ad.grad(mod.dict_views)(x),
                               fd_gradient(mod.dict_views, [x], 0), rtol=1e-6, atol=1e-9)
    params = {"w1": np.array([0.5, 1.0, 1.5, 2.0]), "w2": np.array([1.0, -1.0, 0.5, 0.2])}
    got = s2s_ad.grad(mod.over_params)(params, x)
    for k in params:
        def f(w, k=k):
            return mod.over_params({**params, k: w}, x)
        np.testing.assert_allclose(got[k], fd_gradient(f, [params[k]], 0), rtol=1e-6,
                                   atol=1e-9)


def test_an_array_made_by_arithmetic_written_by_index(mod):
    """``Y = x * 1.0`` (or ``-x``) then ``Y[i] = ...`` in a loop: arithmetic makes
    a new array (was refused: "it must start as a new array"); with another
    name for it, still refused, located."""
    x = np.array([0.3, 0.6, 0.2, 0.7])
    np.testing.assert_allclose(s2s_ad.grad(mod.written_copy)(x),
                               fd_gradient(mod.written_copy, [x], 0), rtol=1e-6, atol=1e-9)
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.written_alias)(x)
    assert "adversary8_src.py:" in str(e.value) and "nothing else may refer to it" in str(e.value)


@pytest.mark.parametrize("x0", [0.3, -0.2])
def test_np_add_at(mod, x0):
    """``np.add.at(y, idx, v)``, ``idx`` repeating positions (added up), in a
    loop with ``break``, in either arm, with an index array passed in: the
    gradient, ``jvp`` and ``hvp`` against differences (was refused: "called
    for its side effect"). Written first without the loop carrying ``y``,
    the loop's additions were lost: a gradient of 0.0, caught here."""
    x, v = np.array([x0, 0.6, 0.2, 0.7]), np.array([1.0, -0.5, 0.3, 0.2])
    for fn, extra in ((mod.added_at, ()), (mod.added_at_given, (np.array([2, 2, 0, 2]),)),
                      (mod.added_at_a_list, ())):
        g = s2s_ad.grad(fn, wrt=0)
        want = fd_gradient(lambda a: fn(a, *extra), [x], 0)
        np.testing.assert_allclose(g(x, *extra), want, rtol=1e-6, atol=1e-8)
        tangent = s2s_ad.jvp(fn, wrt=0)(x, *extra, dx=v)[1]
        assert np.isclose(tangent, np.dot(want, v), rtol=1e-6, atol=1e-8)
        second = (g(x + 1e-5 * v, *extra) - g(x - 1e-5 * v, *extra)) / 2e-5
        np.testing.assert_allclose(s2s_ad.hvp(fn, wrt=0)(x, *extra, v), second, rtol=1e-5,
                                   atol=1e-6)


def test_np_add_at_into_the_argument_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.added_into_the_argument)(np.array([0.3, 0.6]))
    assert "adversary8_src.py:" in str(e.value) and "the caller passed in" in str(e.value)


@pytest.mark.parametrize("shape", [(2,), (3, 2), (3,), (4, 3)])
def test_cross_products_of_2_and_3_vectors(mod, shape):
    a, b = RNG.normal(size=shape), RNG.normal(size=shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 on 2-vectors
        got = s2s_ad.grad(mod.crossed, wrt=(0, 1))(a, b)
        for i in range(2):
            np.testing.assert_allclose(got[i], fd_gradient(mod.crossed, [a, b], i),
                                       rtol=1e-6, atol=1e-7)
