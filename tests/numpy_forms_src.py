"""np.diff, np.polyval, np.interp, x.item() and `for v in x.tolist()` in
objective functions: at top level, in a helper, in a helper of a helper,
in a loop (tests/test_numpy_forms.py)."""

import math

import numpy as np

KNOTS = np.array([-1.0, 0.0, 0.5, 1.5, 3.0])


def roughness(x):
    return np.sum(np.diff(x) ** 2) + 0.5 * np.sum(np.diff(x, n=2) ** 2)


def roughness_axis0(x):
    return np.sum(np.sin(np.diff(x, axis=0))) + np.sum(np.diff(x * x, 1, -2) ** 2)


def velocity(x):
    return np.diff(x, axis=-1) / 0.1


def energy(x):
    return np.sum(velocity(x) ** 2)


def energy_of_energy(x):
    return energy(x * 2.0) + energy(np.cos(x))


def diff_in_loop(x, n: int):
    total = 0.0
    for k in range(n):
        total = total + np.sum(np.diff(x * (1.0 + k)) ** 2)
    return total


def poly_literal(x):
    return np.sum(np.polyval([0.5, -1.0, 2.0, 0.25], x) ** 2)


def poly_array(p, x):
    return np.sum(np.sin(np.polyval(p, x)))


def poly_helper(p, x):
    return np.sum(poly_value(p, x * 0.5) ** 2)


def poly_value(p, x):
    return np.polyval(p, x)


def interp_all(x, xp, fp):
    return np.sum(np.interp(x, xp, fp) ** 2)


def interp_fixed_knots(x, fp):
    return np.sum(np.tanh(np.interp(x, KNOTS, fp * 2.0)))


def interp_in_loop(x, fp, n: int):
    total = 0.0
    for k in range(n):
        total = total + np.sum(np.interp(x + 0.1 * k, KNOTS, fp) ** 2)
    return total


def items(x, y):
    s = np.sum(x * y).item()
    t = (x[1:2] * 2.0).item()
    return s * s + math.sin(t) + y[0, 0].item()


def item_helper(x):
    return first(x) * first(x * x)


def first(x):
    return x[0:1].item()


def tolist_loop(x):
    total = 0.0
    for v in x.tolist():
        total = total + math.sin(v) * v
    return total


def tolist_helper(x, y):
    return tolist_loop(x * y) + tolist_loop(np.cos(x))


def norms(x):
    a = np.linalg.norm(x, 1)
    b = np.linalg.norm(x, ord=np.inf)
    c = np.linalg.norm(x * 2.0, -np.inf)
    return a + b * b + c + np.linalg.norm(np.sin(x), -1)


def vector_norms(x):
    return np.linalg.norm(x, 2) + np.linalg.norm(x, 3) * np.linalg.norm(x, ord=1)


def norm_helper(x):
    return norms(x * 0.5) + vector_norm(np.cos(np.ravel(x)))


def vector_norm(v):
    return np.linalg.norm(v, 2)


def norm_in_loop(x, n: int):
    total = 0.0
    for i in range(n):
        if i > 0:
            total = total + np.linalg.norm(x * i, 1) ** 2
    return total


def extremes(x):
    a = max(x[0], x[1])
    b = min(x[2], 0.5)
    c = max(x[0] * 2.0, x[1], x[3])
    return a * b + c + min(np.sum(x), 1.0)


def extremes_helper(x):
    return pick(x) * pick(x * x)


def pick(x):
    return max(x[0], x[1]) - min(x[1], x[2])


def extremes_in_loop(x, n: int):
    total = 0.0
    for i in range(n):
        total = total + max(x[i], x[i + 1]) * min(x[i], 0.25)
    return total
