"""Wrong gradients and internal errors found by adversarial programs on the
newest features (the guard of a branch's untouched adjoints, held
derivatives' late constants, lists of arrays, SciPy forms), each against
central differences (float64)."""

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function
from tests.oracle import second_difference


def _close(got, f, args, wrt):
    for g, i in zip(got, wrt):
        np.testing.assert_allclose(np.asarray(g, dtype=float), fd_gradient(f, args, i),
                                   rtol=1e-5, atol=1e-7)


PARAMETER_ZEROS = '''
def f(x, y):
    v = x / (y + 0.0)
    if y > 0.5:
        return v[1] * y + v[0]
    return y
'''


@pytest.mark.parametrize("y", [0.7, 0.2])
def test_vjp_zero_of_an_array_parameter_behind_the_guard(y):
    # v's producer divides: its backward runs only where the arm reading v
    # ran, else x's adjoint is np.zeros_like(x). The pair's backward pass
    # had no x (not on its tape): NameError in vjp's pullback at y = 0.2.
    # (grad, made before any call, reads a function that never names NumPy
    # as one of numbers and refuses v[1], located.)
    f = make_function(PARAMETER_ZEROS)
    args = [np.array([0.3, 0.5, 0.8]), y]
    value, back = s2s_ad.vjp(f, *args)
    assert value == f(*args)
    _close(back(1.0), f, args, [0, 1])


FACTORY = '''
def make(mode):
    def f(x):
        if mode == "sq":
            return x * x * math.sin(x)
        return 3.0 * math.cos(x)

    def choose(m):
        nonlocal mode
        mode = m
    return f, choose
'''


def _second(f, x, h=1e-4):
    return (f(x + h) - 2.0 * f(x) + f(x - h)) / (h * h)


def test_second_derivative_of_a_closure_sharing_code_with_one_changed_since():
    # Two closures from one factory capturing the same string share the
    # generated gradient; it said it came from the first closure, so
    # grad(grad(second)) differentiated the first one's code as it is now
    # (its mode changed to "lin": 0.0 and 3 cos'' where x² sin x'' was right).
    import math
    make = make_function(FACTORY, "make", env={"math": math})
    first, choose = make("sq")
    assert np.isclose(s2s_ad.grad(first)(0.7), fd_gradient(first, [0.7], 0))
    choose("lin")
    assert np.isclose(s2s_ad.grad(first)(0.7), fd_gradient(first, [0.7], 0))
    second, choose_second = make("sq")
    g = s2s_ad.grad(second)
    for x in (0.7, -1.3):
        assert np.isclose(g(x), fd_gradient(second, [x], 0))
        assert np.isclose(s2s_ad.grad(g)(x), _second(second, x), rtol=1e-5)
        assert np.isclose(s2s_ad.jvp(g)(x)[1], _second(second, x), rtol=1e-5)
    choose_second("lin")
    assert np.isclose(s2s_ad.grad(g)(0.7), _second(second, 0.7), rtol=1e-5)


DEFAULTS = '''
def f(x, k=2.0):
    return k * x * x * x
'''


def test_held_gradient_sees_defaults_set_anew():
    # The generated signature repeats the defaults (grad_f(x, k=2.0)); a held
    # gradient was not watched for them, so after f.__defaults__ = (5.0,) it
    # kept k = 2.0 where f itself and a new grad(f) use 5.0.
    f = make_function(DEFAULTS)
    g, vg = s2s_ad.grad(f), s2s_ad.value_and_grad(f)
    for k in (5.0, 2.0, -1.5):
        f.__defaults__ = (k,)
        assert np.isclose(g(0.7), fd_gradient(f, [0.7], 0))
        assert np.isclose(vg(0.7)[1], fd_gradient(f, [0.7], 0))
        assert vg(0.7)[0] == f(0.7)


PARTIAL = '''
def h(x, y, z):
    return math.sin(x * y) * z + x * x * y
'''


def test_second_derivative_of_a_partial():
    # grad(grad(partial(h, z=2.0))): the first gradient is a Python function
    # calling the generated one with the partial's values; the second grad
    # read its source and refused it, pointing into s2s-ad's own file
    # ("through captures `fn`, a partial"). It is now the same partial of
    # the second derivative of h.
    import functools
    import math
    h = make_function(PARTIAL, "h", env={"math": math})
    p = functools.partial(h, z=2.0)
    for x, y in ((0.7, 0.3), (-1.1, 0.9)):
        for w in (0, 1):
            g = s2s_ad.grad(p, wrt=w)
            np.testing.assert_allclose(g(x, y), fd_gradient(p, [x, y], w), rtol=1e-6)
            got = s2s_ad.grad(g, wrt=(0, 1))(x, y)
            for j in (0, 1):
                np.testing.assert_allclose(got[j], second_difference(p, [x, y], w, j), rtol=1e-5,
                                           atol=1e-7)
            _, t = s2s_ad.jvp(g)(x, y, dx=1.0, dy=0.0)
            np.testing.assert_allclose(t, second_difference(p, [x, y], w, 0), rtol=1e-5, atol=1e-7)
    first = functools.partial(h, 0.7)
    g = s2s_ad.grad(first, wrt="z")
    np.testing.assert_allclose(s2s_ad.grad(g, wrt="y")(0.3, 2.0),
                               second_difference(first, [0.3, 2.0], 1, 0), rtol=1e-5)


STATIC_DEFAULT = '''
def f(x, mode="sq"):
    if mode == "sq":
        return x * x * x
    return 3.0 * x
'''


def test_second_derivative_of_a_gradient_chosen_per_static_argument():
    # grad(f) of a function with a static parameter chooses its code per
    # call; grad of it read that Python function's source and refused it,
    # pointing into s2s-ad's own cache.py ("`call` captures `seen`, a dict"),
    # then with a HigherOrderError naming hessian; grad and jvp of it now
    # choose their code per call too.
    f = make_function(STATIC_DEFAULT)
    g = s2s_ad.grad(f)
    assert np.isclose(g(0.7), fd_gradient(f, [0.7], 0))
    assert np.isclose(g(0.7, "lin"), 3.0)
    for args in ((0.7,), (0.7, "lin"), (-0.4, "sq")):
        want = fd_gradient(lambda x: g(x, *args[1:]), [args[0]], 0)
        assert np.isclose(s2s_ad.grad(g)(*args), want, rtol=1e-5)
        assert np.isclose(s2s_ad.jvp(g)(*args, dx=1.0)[1], want, rtol=1e-5)
    assert np.isclose(s2s_ad.hessian(f)(0.7), second_difference(f, [0.7], 0, 0), rtol=1e-5)


SPECIAL_ON_NUMBERS = '''
from scipy import special
import scipy.special


def f(x, mu):
    return (special.erfc(x) + special.digamma(x + 3.0) + special.polygamma(2, x + 3.0)
            + special.log_ndtr(3.0 * x) + scipy.special.xlogy(2.0, mu) + special.logit(0.25 + x * x)
            + scipy.special.logsumexp(mu))
'''


@pytest.mark.parametrize("x,mu", [(0.3, 1.3), (-0.2, 0.4)])
def test_scipy_special_by_module_attribute_on_numbers(x, mu):
    # special.erfc(x) in a function that names no NumPy (scipy's module read
    # by a global name) was lowered as code of numbers and refused ("the
    # call `special.erfc` is not supported"), as was poisson.logpmf(2, mu),
    # whose form calls scipy.special.xlogy; such a call makes it NumPy code.
    pytest.importorskip("scipy")
    ns: dict = {}
    import hashlib
    import linecache
    name = f"<test {hashlib.sha1(SPECIAL_ON_NUMBERS.encode()).hexdigest()[:10]}>"
    linecache.cache[name] = (len(SPECIAL_ON_NUMBERS), None,
                             SPECIAL_ON_NUMBERS.splitlines(True), name)
    exec(compile(SPECIAL_ON_NUMBERS, name, "exec"), ns)
    f = ns["f"]
    args = [x, mu]
    _close(s2s_ad.grad(f, wrt=[0, 1])(*args), f, args, [0, 1])
    value, back = s2s_ad.vjp(f, *args)
    _close(back(1.0), f, args, [0, 1])
    for i, name in enumerate(("dx", "dmu")):
        tangents = {"dx": 0.0, "dmu": 0.0, name: 1.0}
        _, t = s2s_ad.jvp(f)(*args, **tangents)
        np.testing.assert_allclose(t, fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)


NUMPY_SCALAR_CONSTANT = '''
SCALE = np.float64(2.0)


def f(x):
    return SCALE * x * x * x
'''


def test_held_gradient_sees_a_numpy_scalar_constant_rebound():
    # SCALE = np.float64(2.0) is inlined like a float, but the check of a
    # held derivative could not hold it (no weak reference to a NumPy
    # scalar): the derivative was returned unwatched and kept 2.0 after
    # SCALE = np.float64(5.0).
    f = make_function(NUMPY_SCALAR_CONSTANT)
    g = s2s_ad.grad(f)
    assert np.isclose(g(0.7), fd_gradient(f, [0.7], 0))
    for value in (np.float64(5.0), -1.5, np.float64(2.0)):
        f.__globals__["SCALE"] = value
        assert np.isclose(g(0.7), fd_gradient(f, [0.7], 0))
