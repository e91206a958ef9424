"""Gradients at points where a rule is singular or a derivative does not exist.

The convention (docs/numerics.md): the generated gradient is plain Python float
arithmetic, so it behaves as Python floats do. Where the derivative is infinite
or undefined but the function is defined (``sqrt(0)``, ``x ** 0.5`` at 0,
``asin(1)``, ``hypot(0, 0)``), the rule's division by zero raises
``ZeroDivisionError`` at the generated line, whose comment names the source
line; where the function itself raises (``log(0)``, ``1 / 0``), the gradient
raises the same exception, from the same forward computation. Nothing returns
a finite number that is wrong, and nothing hangs. Where a one-sided or
conventional value is right (``x ** 0``, ``0 ** y``, ``abs``/``max``/``min`` at
kinks and ties) the gradient returns it, checked against finite differences.
"""

import math

import pytest

import s2s_ad
from tests.modules import import_source
from tests.oracle import central_difference, close

SINGULAR = """import math


def sqrt0(x):
    return math.sqrt(x)


def half_power(x):
    return x ** 0.5


def cbrt0(x):
    return math.cbrt(x)


def asin1(x):
    return math.asin(x)


def acosh1(x):
    return math.acosh(x)


def hypot00(x, y):
    return math.hypot(x, y)


def atan2_00(x, y):
    return math.atan2(x, y)


def inverse(x):
    return 1 / x


def log0(x):
    return math.log(x)


def log_of_sqrt(x):
    return math.log(math.sqrt(x))


def zero_power(x):
    return x ** 0


def zero_power_of_difference(x):
    return (x - x) ** 0 * x


def zero_base(x, y):
    return (x - x) ** y + y * x


def zero_base_math_pow(x, y):
    return math.pow(x - x, y) + y * x


def square_at_zero(x):
    return x ** 2


def abs_(x):
    return abs(x)


def fabs_(x):
    return math.fabs(x)


def max_(x, y):
    return max(x, y)


def min_(x, y):
    return min(x, y)


def max_same(x):
    return max(x, x) * 3.0


def max3(x, y, z):
    return max(x, y, z)
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("numerics"), SINGULAR, "numerics_cases")


@pytest.mark.parametrize("name, args", [
    ("sqrt0", (0.0,)), ("half_power", (0.0,)), ("cbrt0", (0.0,)), ("asin1", (1.0,)),
    ("asin1", (-1.0,)), ("acosh1", (1.0,)), ("hypot00", (0.0, 0.0)), ("atan2_00", (0.0, 0.0)),
])
def test_infinite_or_undefined_derivative_raises_zero_division(m, name, args):
    fn = getattr(m, name)
    fn(*args)  # the function itself is defined here
    with pytest.raises(ZeroDivisionError) as info:
        s2s_ad.grad(fn, wrt=None)(*args)
    # The traceback points into the generated module, whose line carries the
    # source line it differentiates.
    frame = info.traceback[-1]
    assert frame.path.startswith("<s2s-ad") or "s2s-ad" in str(frame.path)


@pytest.mark.parametrize("name, args, error", [
    ("inverse", (0.0,), ZeroDivisionError), ("log0", (0.0,), ValueError),
    ("log_of_sqrt", (0.0,), ValueError), ("sqrt0", (-1.0,), ValueError),
])
def test_undefined_function_raises(m, name, args, error):
    fn = getattr(m, name)
    with pytest.raises(error):
        fn(*args)
    # value_and_grad computes the value, so it raises exactly what fn raises.
    with pytest.raises(error):
        s2s_ad.value_and_grad(fn, wrt=None)(*args)
    # grad computes only what the reverse sweep reads (log's partial 1/x does
    # not read log x): it raises too, from the rule (1/0) if not from the value.
    with pytest.raises((error, ZeroDivisionError)):
        s2s_ad.grad(fn, wrt=None)(*args)


@pytest.mark.parametrize("name, args", [
    ("zero_power", (0.0,)), ("zero_power", (2.0,)), ("zero_power_of_difference", (0.0,)),
    ("zero_power_of_difference", (1.5,)), ("zero_base", (0.7, 2.0)),
    ("zero_base_math_pow", (0.7, 2.0)), ("square_at_zero", (0.0,)),
])
def test_defined_derivatives_at_special_points_match_finite_differences(m, name, args):
    fn = getattr(m, name)
    got = s2s_ad.grad(fn, wrt=None)(*args)
    got = got if isinstance(got, tuple) else (got,)
    for i, g in enumerate(got):
        assert close(g, central_difference(fn, list(args), i)), (name, i, g)


@pytest.mark.parametrize("name", ["abs_", "fabs_"])
def test_abs_at_zero_follows_the_sign_of_zero(m, name):
    g = s2s_ad.grad(getattr(m, name))
    assert g(0.0) == 1.0 and g(-0.0) == -1.0
    assert g(-2.5) == -1.0 and g(2.5) == 1.0


def test_max_min_ties_go_to_the_first_operand(m):
    assert s2s_ad.grad(m.max_, wrt=None)(1.0, 1.0) == (1.0, 0.0)
    assert s2s_ad.grad(m.min_, wrt=None)(1.0, 1.0) == (1.0, 0.0)
    assert s2s_ad.grad(m.max3, wrt=None)(2.0, 2.0, 2.0) == (1.0, 0.0, 0.0)
    # Python's max returns its first argument at a tie: the adjoint follows it.
    assert s2s_ad.grad(m.max3, wrt=None)(1.0, 2.0, 2.0) == (0.0, 1.0, 0.0)
    # max(x, x) is x: both operands are x, so the whole adjoint reaches x.
    assert s2s_ad.grad(m.max_same)(0.3) == 3.0


def test_infinite_and_nan_inputs_propagate_without_raising(m):
    g = s2s_ad.grad(m.square_at_zero)
    assert g(math.inf) == math.inf and math.isnan(g(math.nan))


def test_numpy_power_at_zero_matches_the_scalar_convention(tmp_path):
    import warnings

    import numpy as np

    text = ("import numpy as np\n\n\ndef f(a):\n    return np.sum(a ** 0 * 2.0 + a)\n\n\n"
            "def g(a, b):\n    return np.sum((a - a) ** b + a * b)\n")
    m = import_source(tmp_path, text, "numerics_numpy_power")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # np.where evaluates both sides
        assert np.array_equal(s2s_ad.grad(m.f)(np.array([0.0, 1.5])), [1.0, 1.0])
        da, db = s2s_ad.grad(m.g, wrt=(0, 1))(np.array([0.0, 1.5]), np.array([2.0, 3.0]))
    # (a - a) ** b is 0 for b > 0: only a * b contributes.
    assert np.array_equal(da, [2.0, 3.0]) and np.array_equal(db, [0.0, 1.5])
