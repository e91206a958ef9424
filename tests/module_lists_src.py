"""Functions reading module-level lists and tuples of numbers by index
(tests/test_module_lists.py)."""

import numpy as np

COEFFS = [0.5, -1.2, 2.0]
TABLE = (0.5, -1.2, 2.0, 0.3)
WEIGHTS = [1.0, 0.25, -0.5, 0.75, 2.0]


def constant_index(x):
    return COEFFS[0] * x + COEFFS[-1] * x * x


def by_range_len(x):
    s = 0.0
    for i in range(len(COEFFS)):
        s = s + COEFFS[i] * x ** i
    return s


def by_length(x):
    return len(COEFFS) * x + len(TABLE) * x * x


def tuple_by_range(x):
    s = 0.0
    for i in range(len(TABLE)):
        s = s + TABLE[i] * x ** (i + 1)
    return s + TABLE[1] * x


def items(x):
    s = 0.0
    for c in COEFFS:
        s = s * x + c
    return s


def horner_while(x):
    s = 0.0
    i = 0
    while i < len(COEFFS):
        s = s * x + COEFFS[i]
        i += 1
    return s


def with_break(x):
    s = 0.0
    for i in range(len(WEIGHTS)):
        s = s + WEIGHTS[i] * x
        if s > 1.5:
            break
    return s


def run_time_bound(x, n):
    s = 0.0
    for i in range(n):
        s = s + WEIGHTS[i] * x * s + x
    return s


def neighbours(x):
    s = 0.0
    for i in range(1, len(WEIGHTS)):
        s = s + (WEIGHTS[i] - WEIGHTS[i - 1]) * x ** i
    return s


def nested(x):
    s = x
    for k in range(2):
        for i in range(len(TABLE)):
            s = s * TABLE[i] + x
    return s


def loop_in_branch(x, n):
    s = x
    if x > 0.0:
        for i in range(n):
            s = s * WEIGHTS[i] + x
    else:
        s = -x
    return s + COEFFS[1] * x


def comprehension(x):
    return sum([COEFFS[i] * x ** (i + 1) for i in range(len(COEFFS))])


def in_lambda(x):
    f = lambda t: COEFFS[1] * t * t
    return f(x) + x


def np_constant_index(x):
    return np.sum(COEFFS[0] * x + COEFFS[-1] * x * x)


def np_by_range_len(x):
    s = 0.0
    for i in range(len(TABLE)):
        s = s + TABLE[i] * np.sin(x) ** i
    return np.sum(s)


def np_with_break(x):
    s = np.zeros_like(x)
    for i in range(len(WEIGHTS)):
        s = s + WEIGHTS[i] * np.tanh(x)
        if np.sum(s) > 1.5:
            break
    return np.sum(s * s)


def coefficient_term(x, i):
    return COEFFS[i] * x * x


def through_helper(x):
    s = 0.0
    for i in range(3):
        s = s + coefficient_term(x, i)
    return s


def through_helper_while(x):
    s = 0.0
    i = 0
    while i < len(COEFFS):
        s = s + coefficient_term(x, i) * s + x
        i += 1
    return s


def pick(xs, i):
    return xs[i]


def list_through_helper(x, xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + pick(xs, i) * x * xs[i]
    return s


def np_term(x, i: int):
    return COEFFS[i] * np.sin(x)


def np_through_helper(x):
    s = 0.0
    for i in range(3):
        s = s + np_term(x, i)
    return np.sum(s * s)


def np_untyped_term(x, i):
    return COEFFS[i] * np.sin(x)


def np_through_untyped_helper(x):
    s = 0.0
    for i in range(3):
        s = s + np_untyped_term(x, i)
    return np.sum(s)


def zipped_with_a_list(x, xs):
    s = 0.0
    for c, v in zip(COEFFS, xs):
        s = s + c * v * x * v
    return s


def over_a_slice(x):
    s = 0.0
    for c in TABLE[1:]:
        s = s * x + c
    return s + sum(COEFFS[:2]) * x + max(COEFFS) * x * x


def local_term(x, i):
    c = [0.5, -1.2, x]
    return c[i] * x * x


def local_through_helper(x):
    s = 0.0
    for i in range(3):
        s = s + local_term(x, i) * s + x
    return s


def float_index(x):
    return coefficient_term(x, 1.0)
