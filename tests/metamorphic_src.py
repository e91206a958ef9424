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
    # Nested functions, lambdas, closures over the enclosing variables.
    "nested_def_late_binding": ("""
def f(x, y):
    c = x * 2.0

    def h(t):
        return math.sin(t) * c + y

    s = h(x)
    for k in range(3):
        s = s + h(s * 0.1)
    c = y * 3.0
    return s + h(y)
""", [(0.7, -1.3), (0.2, 0.9)], [0, 1]),
    "lambda_map": ("""
def f(x, y):
    sq = lambda t: t * t + y
    return sum(map(sq, [x, y, x * y])) + (lambda t: math.exp(-t))(x)
""", [(0.7, -1.3)], [0, 1]),
    "kmeans_nested": ("""
def f(points, centers):
    def all_pairs_norm(a, b):
        a_sqnorm = np.sum(a * a, axis=1)
        b_sqnorm = np.sum(b * b, axis=1)
        return a_sqnorm[:, None] + b_sqnorm[None, :] - 2.0 * (a @ b.T)

    return np.sum(np.min(all_pairs_norm(points, centers), axis=1))
""", [(np.array([[0.3, 1.2], [0.5, -0.7], [1.1, 0.2]]), np.array([[0.2, 0.9], [1.0, 0.0]]))],
        [0, 1]),
    # Everyday syntax.
    "chained_comparison": ("""
def f(x, y):
    s = x * y
    if 0.0 < x < 1.0:
        s = s + math.sin(x)
    (a, b), c = (x * y, x + y), 2.0
    return s + a * b * c + sum((x, y), 0.5) + math.dist((x, y), (1.0, -2.0))
""", [(0.7, 1.3), (1.6, 0.4)], [0, 1]),
    # A static argument (a string) selecting code, passed through a helper.
    "static_mode": ("""
def pen(d, mode):
    if mode == "l2":
        return d * d
    return abs(d) * 3.0


def f(x, mode):
    return pen(x - 0.25, mode) + x
""", [(0.7, "l2"), (0.7, "l1")], [0]),
    # Recursion with a base case (a tape per call).
    "recursive_series": ("""
def rs(x, n):
    if n == 0:
        return 1.0
    return 1.0 + x * rs(x, n - 1) / n


def f(x, n):
    return rs(x * 1.5, n) + math.sin(x)
""", [(0.7, 5)], [0]),
}
