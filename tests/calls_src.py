"""Functions calling functions (test data for test_calls.py)."""

import math

from pkg_calls import shapes


def sq(x):
    return x * x


def cube_plus(x, k=3.0, *, shift=0.0):
    return x * sq(x) * k + shift


def twice_sq(x, y):
    return sq(x) + sq(x * y)


def nested(a, b):
    u = cube_plus(a, shift=b)
    v = cube_plus(b, 2.0)
    return math.sin(u) * v + sq(u)


def same_arg(x):
    return cube_plus(x, x, shift=x)


def imported(x, y):
    return shapes.twice(x) * y + shapes.bump(x * y)


def constant_call(x):
    c = sq(2.0)
    return c * x


def unused_result(x, y):
    z = sq(y)
    return x * 3.0


def rec(x):
    return rec(x) + x


def ping(x):
    return pong(x) * 2.0


def pong(x):
    return ping(x) - 1.0


def calls_ping(x):
    return sq(x) + ping(x)


def takes_star(*xs):
    return xs[0]


def calls_star(x):
    return takes_star(x)


def bad_helper(x):
    try:
        y = x
    except ValueError:
        y = 0.0
    return y


def calls_bad(x):
    return bad_helper(x) * x


def wrong_arity(x):
    return sq(x, x)


def unknown_keyword(x):
    return sq(x, power=2)


def clip(x):
    if x > 2.0:
        return 4.0
    return x * x


def twice_clip(x, y):
    return clip(x) + clip(x * y)
