"""Programs for the metamorphic tests: each ``f`` must have the same gradient
written at top level, moved into a helper, called in a loop, through ``vjp``
and through the CLI's generated file (tests/test_metamorphic.py).

Each entry: source defining ``f`` (and any helpers it calls), the points
(every parameter a number or an array), the indices of the parameters to
differentiate. The points keep clear of the programs' branch boundaries."""

import numpy as np

PROGRAMS = {
    "if_in_body": ("""
def f(x):
    if x > 0.0:
        t = math.sin(x)
        return t * t
    return x
""", [(0.7,), (-0.3,)], [0]),
    "early_return_both_define": ("""
def f(x):
    if x > 0.0:
        t2 = math.exp(x)
        return t2 * x
    t2 = x * x
    return t2 * 3.0
""", [(0.7,), (-0.3,)], [0]),
    "clamp": ("""
def f(t, y):
    t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
    return t * t * y + t
""", [(-0.5, 2.0), (0.5, 2.0), (1.5, 2.0)], [0, 1]),
    "short_circuit": ("""
def f(x, y):
    if (x > 1.0) or ((x if x < 0.0 else 1.5) < 0.2):
        y = x * 3.0
    return y * x
""", [(0.5, 2.0), (1.5, 2.0), (-0.5, 2.0)], [0, 1]),
    "while_counts": ("""
def f(x, y):
    while x < 3.0:
        x = x + 1.0
        y = y * x
    return y
""", [(0.5, 2.0), (2.5, 2.0)], [0, 1]),
    "loop_with_branch": ("""
def f(x, n):
    s = 0.0
    for i in range(int(n)):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * x
    return s
""", [(0.9, 5.0)], [0]),
    "compare_parameter": ("""
def f(u, p):
    if p == 0.0:
        return u
    return u * 2.0 + u * u
""", [(0.3, 1.0), (0.3, 0.0)], [0]),
    "fill_new_array": ("""
def f(a):
    R = np.zeros(2)
    R[0] = np.cos(a[0]) * a[1]
    R[1] = np.sin(a[0]) * a[1]
    return np.sum(R * R) + R[0]
""", [(np.array([0.3, 1.2]),)], [0]),
    "sign_parameter": ("""
def f(u, p):
    return np.sum(u * np.sign(p) * u)
""", [(np.array([0.3, 1.2]), np.array([1.0, -2.0]))], [0]),
    "shape_parameter": ("""
def f(u, n):
    z = np.zeros(n)
    return np.sum(u * u + z)
""", [(np.array([0.3, 1.2, -0.4]), 3)], [0]),
    "index_parameter": ("""
def f(y, parents):
    s = 0.0
    for i in range(3):
        s = s + y[parents[i]] * np.sin(y[i])
    return s
""", [(np.array([0.3, 1.2, -0.4]), np.array([0, 0, 1]))], [0]),
    "array_branch_cumsum": ("""
def f(x):
    if np.sum(x) > 0:
        y = np.cumsum(x)
    else:
        y = x * 2.0
    return np.sum(y * y)
""", [(np.array([0.3, 1.2, 0.5]),), (np.array([-0.3, -1.2, 0.5]),)], [0]),
    "array_loop_carry": ("""
def f(x, w):
    h = x
    for k in range(3):
        h = np.tanh(h * w + 0.1)
    return np.sum(h * h)
""", [(np.array([0.3, 1.2, 0.5]), np.array([0.5, -0.2, 0.8]))], [0, 1]),
    # An array argument to a function that never names NumPy.
    "rosenbrock_no_numpy": ("""
def f(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s
""", [(np.array([0.3, 1.2, 0.5, -0.7]),)], [0]),
}
