"""Straight-line scalar functions, each checked against sympy and finite
differences by tests/test_scalar_gradients.py.

CASES maps a function to the points (tuples of floats) at which finite
differences are compared; the sympy check runs over symbols. Points avoid
kinks (abs at 0, max at ties) and stay inside each function's domain.
"""

import math
import math as m
from math import cos, exp, log, sin, sqrt

SCALE = 2.5
OFFSET = -0.75


def square(x):
    return x * x


def seed(a, x):
    b = x * x
    y = a * b
    return y


def five_uses(w):
    return w * w + w * 3.0 - w / (w + 1.0)


def shared_weight(w, x1, x2):
    h1 = w * x1
    h2 = w * x2
    return h1 * h2


def reassigned(x, y):
    x = x * y
    x = x + y
    x = math.sin(x) * x
    return x


def augmented(x, y):
    s = x
    s += y
    s *= x
    s -= y * y
    s /= x + 2.0
    s **= 2
    return s


def tuple_swap(a, b):
    a, b = b, a * b
    return a - 2.0 * b


def constants(x):
    return SCALE * x + OFFSET + math.pi * x * x


def aliases(x):
    return m.cos(x) + sin(x) * exp(x)


def negation(x, y):
    return -x * -y + +x


def integer_power(x):
    return x ** 3 - 2 * x ** 2 + x ** -1


def float_power(x):
    return x ** 2.5 + x ** 0.5


def variable_power(x, y):
    return x ** y


def power_base_constant(x):
    return 2.0 ** x + 3 ** x


def builtin_pow(x, y):
    return pow(x, y) + pow(x, 2)


def division_chain(a, b, c):
    return a / b / c + c / (a * b)


def logistic(x):
    return 1.0 / (1.0 + math.exp(-x))


def softplus(x):
    return math.log1p(math.exp(x))


def gelu_tanh(x):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + math.tanh(c * (x + 0.044715 * x ** 3)))


def gaussian_nll(x, mu, sigma):
    z = (x - mu) / sigma
    return 0.5 * z * z + math.log(sigma) + 0.5 * math.log(2.0 * math.pi)


def rosenbrock2(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


def himmelblau(x, y):
    return (x * x + y - 11.0) ** 2 + (x + y * y - 7.0) ** 2


def trig_mix(x, y):
    return math.sin(x) * math.cos(y) + math.tan(x * y)


def inverse_trig(x):
    return math.asin(x) + math.acos(x * 0.5) + math.atan(x)


def atan2_polar(x, y):
    r = math.hypot(x, y)
    theta = math.atan2(y, x)
    return r * math.cos(theta) + theta * theta


def hyperbolic(x):
    return math.sinh(x) + math.cosh(x) * math.tanh(x)


def inverse_hyperbolic(x):
    return math.asinh(x) + math.atanh(x * 0.5) + math.acosh(x + 2.0)


def exponentials(x):
    return math.exp2(x) + math.expm1(x) + math.exp(-x * x)


def logarithms(x):
    return math.log(x) + math.log(x, 3.0) + math.log2(x) + math.log10(x) + math.log1p(x)


def log_variable_base(x, b):
    return math.log(x, b)


def roots(x):
    return math.sqrt(x) + math.cbrt(x) + sqrt(x * x + 1.0)


def math_pow(x, y):
    return math.pow(x, y) * math.pow(y, 2.0)


def error_functions(x):
    return math.erf(x) * math.erfc(x)


def absolute(x, y):
    return abs(x - y) + math.fabs(x * y)


def maximum(x, y, z):
    return max(x, y) + min(y, z) + max(x, y, z)


def modulo(x, y):
    return x % y + x // y


def rounding(x):
    return x * math.floor(x) + round(x) + math.ceil(x) + math.trunc(x)


def fmod_copysign(x, y):
    return math.fmod(x, y) + math.copysign(x, y)


def angles(x):
    return math.degrees(x) + math.radians(x * x)


def conversions(x):
    return float(x) * x + int(x)


def long_expression(a, b, c, d):
    return (a * b + c * d) * (a - b) / (c + d * d + 1.0) + a * b * c * d


def deep_nesting(x):
    return sin(cos(exp(log(sqrt(x * x + 1.0)))))


def unused_param(x, y):
    return x * x


def constant_result(x):
    return 3.0


def identity(x):
    return x


def inactive_branch(x, y):
    unused = y * y
    z = x * 2.0
    return z + 1.0


def annotated(x: float, y: float) -> float:
    z: float = x * y
    return z + x


def defaults(x, y=2.0, *, z=0.5):
    return x * y + z * x


def docstring(x):
    """A docstring is not code."""
    return x * x


def attention_score(q1, q2, k1, k2):
    s = (q1 * k1 + q2 * k2) / math.sqrt(2.0)
    return math.exp(s) / (1.0 + math.exp(s))


def lennard_jones(r):
    s6 = (1.0 / r) ** 6
    return 4.0 * (s6 * s6 - s6)


def black_scholes_call(s, k, t, r, sigma):
    d1 = (math.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * math.sqrt(t))
    d2 = d1 - sigma * math.sqrt(t)
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    return s * n1 - k * math.exp(-r * t) * n2


CASES = {
    square: [(1.3,), (-0.7,)],
    seed: [(3.0, 2.0), (-0.5, 1.5)],
    five_uses: [(0.8,), (2.0,)],
    shared_weight: [(0.5, 1.5, -2.0)],
    reassigned: [(0.4, 0.9), (1.2, -0.3)],
    augmented: [(0.9, 0.4), (1.5, 2.0)],
    tuple_swap: [(0.3, 1.7)],
    constants: [(0.6,)],
    aliases: [(0.3,), (1.1,)],
    negation: [(0.7, -1.2)],
    integer_power: [(1.4,), (-0.6,)],
    float_power: [(1.7,)],
    variable_power: [(1.6, 0.7), (0.5, 2.5)],
    power_base_constant: [(0.4,)],
    builtin_pow: [(1.3, 0.6)],
    division_chain: [(0.7, 1.9, -1.3)],
    logistic: [(0.3,), (-2.0,)],
    softplus: [(0.4,)],
    gelu_tanh: [(0.6,), (-1.1,)],
    gaussian_nll: [(0.5, 0.2, 1.3)],
    rosenbrock2: [(0.3, 0.8), (-1.2, 1.0)],
    himmelblau: [(1.0, 2.0)],
    trig_mix: [(0.4, 0.6)],
    inverse_trig: [(0.35,)],
    atan2_polar: [(0.8, 0.6), (-0.4, 0.9)],
    hyperbolic: [(0.7,)],
    inverse_hyperbolic: [(0.6,)],
    exponentials: [(0.45,)],
    logarithms: [(1.7,)],
    log_variable_base: [(2.5, 3.5)],
    roots: [(1.9,)],
    math_pow: [(1.4, 0.8)],
    error_functions: [(0.3,)],
    absolute: [(0.9, 0.2), (-0.4, 0.6)],
    maximum: [(0.9, 0.2, 0.5), (0.1, 0.7, 0.3)],
    modulo: [(2.3, 0.7)],
    rounding: [(1.3,), (-2.4,)],
    fmod_copysign: [(2.3, 0.7)],
    angles: [(0.8,)],
    conversions: [(1.6,)],
    long_expression: [(0.5, -0.3, 1.2, 0.8)],
    deep_nesting: [(0.9,)],
    unused_param: [(0.4, 3.0)],
    constant_result: [(0.4,)],
    identity: [(0.4,)],
    inactive_branch: [(0.4, 3.0)],
    annotated: [(0.4, 3.0)],
    defaults: [(0.4, 3.0)],
    docstring: [(1.5,)],
    attention_score: [(0.1, 0.2, 0.3, -0.4)],
    lennard_jones: [(1.1,), (1.5,)],
    black_scholes_call: [(100.0, 95.0, 0.5, 0.02, 0.25)],
}


def simultaneous(a, b):
    a, b = a * b, a + b
    return a * 3.0 + b * b


CASES[simultaneous] = [(0.7, 1.9)]
