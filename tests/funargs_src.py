"""Functions passed as arguments to helpers (tests/test_function_args.py):
nested functions, lambdas and module-level functions given to a helper that
calls them, in loops, branches, helpers of helpers and recursion."""

import math

import numpy as np


def apply_twice(f, t):
    return f(f(t))


def scaled(t):
    return math.sin(t) * 1.5


def module_function_passed(x):
    return apply_twice(scaled, x) + x


def nested_closure_passed(x, y):
    c = x * y

    def h(t):
        return t * c + math.cos(t)

    return apply_twice(h, y) * x


def lambda_written_in_the_call(x, y):
    return apply_twice(lambda t: t * t * y, x)


def lambda_assigned(x, y):
    sq = lambda t: math.exp(t * 0.3) * y  # noqa: E731
    return apply_twice(sq, x) + sq(y)


def two_functions_one_helper(x, y):
    def up(t):
        return t * x

    def down(t):
        return t / (1.0 + y * y)

    return apply_twice(up, y) + apply_twice(down, x) + apply_twice(scaled, x * y)


def late_binding(x, y):
    c = x

    def h(t):
        return t * c

    a = apply_twice(h, y)        # c is x here
    c = y * 3.0
    return a + apply_twice(h, x)  # and 3y here


def integrate(f, y, n, dt):
    for _ in range(n):
        y = y + dt * f(y)
    return y


def in_a_loop(x, n):
    def rate(y):
        return -x * y + math.sin(y)

    total = 0.0
    for i in range(3):
        total = total + integrate(rate, x + 0.1 * i, n, 0.05)
    return total


def branch(f, y, flag):
    if flag > 0:
        return f(y) * 2.0
    return f(y) - y


def in_a_branch(x, y):
    def g(t):
        return t * t * x

    out = 0.0
    if x > y:
        out = branch(g, y, 1)
    else:
        out = branch(g, x, -1)
    return out + branch(g, y, x - y)


def outer_helper(f, y):
    return apply_twice(f, y) + f(y)   # passes its function value on


def helper_of_a_helper(x, y):
    def h(t):
        return math.tanh(t * x) + y

    return outer_helper(h, x * y)


def maker_inside_helper(x, y):
    return helper_defining(x, y) * y


def helper_defining(a, b):
    def k(t):
        return t * a - b

    return apply_twice(k, a + b)


def uses_other_nested(x, y):
    def base(t):
        return t * y

    def h(t):
        return base(t) + x * t

    return apply_twice(h, x)


def power_series(f, t, n):
    if n == 0:
        return t
    return f(power_series(f, t, n - 1))


def recursive_helper(x, y):
    def h(t):
        return 0.5 * t + y * math.sin(t)

    return power_series(h, x, 3)


def keyword_argument(x, y):
    def h(t):
        return t * y

    return integrate(y=x, f=h, n=4, dt=0.1)


# NumPy: the right-hand side of an ODE, closed over the parameters


def rk4(f, y, tf, s):
    h = tf / s
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def decay(y):
    return -0.5 * y


def numpy_closure(a, b):
    def rhs(y):
        return np.tanh(a @ y) - b * y

    return np.sum(rk4(rhs, np.ones(a.shape[0]), 1.0, 5) ** 2)


def numpy_module_function(y0):
    return np.sum(rk4(decay, y0, 1.0, 3) * y0)


def with_defaults(f, y, /, scale=2.0, g=None, *, shift=0.5):
    return f(y) * scale + shift


def defaults_around_the_function(x, y):
    def h(t):
        return t * t * y

    return with_defaults(h, x) + with_defaults(h, y, 3.0, shift=x)
