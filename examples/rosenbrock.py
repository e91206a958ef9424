"""The Rosenbrock function of four variables, a classic optimisation test.

    s2s-ad grad examples/rosenbrock.py:rosenbrock4
"""


def rosenbrock4(x0, x1, x2, x3):
    a = 100.0 * (x1 - x0 * x0) ** 2 + (1.0 - x0) ** 2
    b = 100.0 * (x2 - x1 * x1) ** 2 + (1.0 - x1) ** 2
    c = 100.0 * (x3 - x2 * x2) ** 2 + (1.0 - x2) ** 2
    return a + b + c
